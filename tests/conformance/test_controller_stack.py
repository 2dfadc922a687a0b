"""The controller stack: the reference is green over campaign seeds, runs replay byte for
byte, and each controller mutant is killed by a seeded campaign run (docs/controller-stack.md)."""
import attrs
import pytest

from conformance.campaign import execute, run_one
from conformance.scenarios.registry import get_scenario
from results.runresult import RunConfig
from conformance.script import parse_script
from reference.mutants_controller import MUTANTS


def config(seed: int, adapter: str = "reference") -> RunConfig:
    return RunConfig("t", seed, adapter, "controller", "rocketmq-5.1", (3, 2)[seed % 2], "mixed", 60_000)


@pytest.mark.parametrize("seed", range(4))
def test_reference_passes_campaign_seeds(seed):
    result = run_one(config(seed))
    assert result.verdict == "pass", [x.message for x in result.counterexamples] or result.error
    assert result.elections >= 1  # a master was elected and took writes


def test_same_seed_same_trace():
    script = get_scenario("controller").generate(config(5))
    first = execute(script, "reference").cluster.trace_jsonl()
    assert first == execute(script, "reference").cluster.trace_jsonl()


def test_default_acks_finding_is_not_a_violation():
    text = open("tests/scenarios/controller/isolation-7017-default-acks.rmqha").read()
    ex = execute(parse_script(text), "reference")
    assert not ex.violations and ex.cluster.findings
    assert "no_acknowledged_message_lost" in ex.cluster.not_applicable()


def first_kill(name: str, budget: int):
    for seed in range(budget):
        result = run_one(config(seed, f"mutant:{name}"))
        if result.verdict == "fail":
            return seed, result.first_violation
    return None


# Mutants a short campaign kills (seeds 0-7, mixed faults, 60 s); the others need longer
# campaigns (docs/controller-stack.md), or are caught by step conformance (the ones added
# with it, one per step property that had none), and have a pinned counterexample script
# each under tests/scenarios/controller/.
QUICK = [
    "alter-ignores-sync-state-set-epoch",
    "batch-within-confirm-offset",
    "apply-broker-id-ignores-check-code",
    "broker-header-epoch-not-recorded",
    "broker-label-switched-before-header",
    "broker-max-of-end-offsets",
    "broker-ships-unflushed",
    "confirm-offset-counts-unreported-ack",
    "confirm-offset-ignores-unconnected-member",
    "confirm-offset-skips-unacked-member",
    "consume-queue-past-confirm-offset",
    "elect-keeps-master-epoch",
    "elect-reply-old-sync-state-set-epoch",
    "elect-resets-sync-state-set-epoch",
    "expand-counted-after-ack",
    "first-election-by-policy",
    "heartbeat-of-unknown-broker-ignored",
    "new-master-adopts-self",
    "queue-offsets-reused-after-restart",
    "shrink-removes-master",
    "writes-before-role-confirmed",
    "write-never-answered",
]
SLOW = {
    "alter-without-master-crashes": "mutant-7293-alter-without-master-crashes.rmqha",
    "elect-offset-comparator-overflow": "mutant-10578-elect-offset-comparator-overflow.rmqha",
    "no-periodic-reelect": "mutant-no-periodic-reelect.rmqha",
    "unclean-pass-always": "mutant-unclean-pass-always.rmqha",
    "serves-before-own-empty-proposal": "mutant-serves-before-own-empty-proposal.rmqha",
    **{name: f"mutant-{name}.rmqha" for name in (
        "follower-serves-reads", "register-names-dead-master", "replica-info-hides-dead-master", "broker-ids-from-zero",
        "forced-clean-keeps-unlisted", "reelect-masterless-sets", "learner-joins-sync-state-set",
        "alter-rejection-drops-proposal", "all-ack-ignored", "apply-role-without-epoch-check")},
}


@pytest.mark.parametrize("name", QUICK)
def test_mutant_killed_by_a_short_campaign(name):
    killed = first_kill(name, budget=8)
    assert killed is not None, f"{name} survived 8 runs"


def test_every_mutant_is_killed_by_a_short_campaign_or_a_pinned_counterexample():
    assert set(QUICK) | set(SLOW) == set(MUTANTS)
    for name, script in SLOW.items():  # (tests/scenarios replays them: each still kills)
        assert f"adapter mutant:{name}\n" in open(f"tests/scenarios/controller/{script}").read()


def test_a_set_that_never_gets_a_master_violates_liveness_too():
    """``first-election-by-policy`` breaks nothing unsafe: step conformance catches its
    controller's elect decision first, and the set's liveness names what a user sees (no
    master, ever), judged at the script's first ``await-master`` once every node has been up
    on a clean network for the bound. The reference passes the same script."""
    script = get_scenario("controller").generate(config(0, "mutant:first-election-by-policy"))
    first = script.with_steps(script.steps[:1])
    assert first.steps[0].op == "await-master"
    violated = {r.violation.property for r in execute(first, "mutant:first-election-by-policy").violations}
    assert {"step-conformance:elect_master", "no_masterless_healthy_set"} <= violated
    assert not execute(first, "reference").violations


def test_a_campaign_runs_controller_mutants_and_names_bad_ones_in_one_line(tmp_path, capsys):
    from cli.main import main

    out = tmp_path / "results"
    status = main(["run", "--scenario", "controller", "--adapter", "mutant:shrink-removes-master", "--runs", "1",
                   "--no-spark", "--quiet", "--out", str(out)])
    assert status == 1 and "1 failed" in capsys.readouterr().out  # seed 0 kills it (see QUICK)
    assert main(["run", "--scenario", "controller", "--adapter", "mutant:bogus", "--runs", "1", "--no-spark",
                 "--out", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown controller mutant 'bogus'" in err[0]


def test_the_controller_bounce_nemesis_is_drawn_apart_from_the_rest_of_the_plan(monkeypatch):
    """About a third of the seeds with controller crashes get the controller bounce
    (conformance/scenarios/controller.py ``_with_controller_bounce``) inserted whole; every
    other step of the seed's plan is what it is without it, and mixes without controller
    crashes never get it."""
    import conformance.scenarios.controller as controller_scenario

    generate = get_scenario("controller").generate
    with_bounce = {seed: generate(config(seed)).steps for seed in range(60)}
    partition = [generate(attrs.evolve(config(seed), fault_mix="partition")).steps for seed in range(20)]
    monkeypatch.setattr(controller_scenario, "_with_controller_bounce", lambda steps, rng, brokers: steps)
    bounced = 0
    for seed, steps in with_bounce.items():
        plain = generate(config(seed)).steps
        if steps != plain:
            bounced += 1
            extra = len(steps) - len(plain)
            at = next(i for i, (a, b) in enumerate(zip(steps, plain)) if a != b)
            assert steps[:at] + steps[at + extra:] == plain
            assert [s.op for s in steps[at:at + 5]] == ["isolate-active-controller", "elect", "run",
                                                          "crash-active-controller", "heal"]
    assert 12 <= bounced <= 28, bounced
    assert partition == [generate(attrs.evolve(config(seed), fault_mix="partition")).steps for seed in range(20)]
