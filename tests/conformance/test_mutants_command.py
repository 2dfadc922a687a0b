"""``rmqha mutants``: every mutant of a scenario's registry, run until the suite kills it."""
import json

import attrs
import pytest

from cli.main import main
from conformance import campaign
from conformance.scenarios.registry import SCENARIOS
from reference import mutants as dledger_mutants
from spec.mutants import MutantInfo
from spec.truncation import variants as truncation_variants

FAST = ["--duration-ms", "2000", "--quiet"]


def test_a_known_bad_mutant_is_killed(tmp_path, capsys):
    out = tmp_path / "summary.json"
    status = main(["mutants", "--scenario", "dledger", "--mutant", "double-vote", "--runs", "5",
                   "--out", str(out), *FAST])
    table = capsys.readouterr().out
    assert status == 0
    assert "KILLED" in table and "double-vote" in table
    summary = json.loads(out.read_text())
    (m,) = summary["mutants"]
    assert m["verdict"] == "KILLED" and m["seed"] == 0 and m["runs"] == 1
    assert m["violates"] == "step-conformance:handle_vote" and m["killed_by"] in m["violated"]
    assert m["as_registered"] is True
    assert m["script"].startswith("# minimal counterexample") and "adapter mutant:double-vote" in m["script"]
    assert summary["killed"] == 1 and summary["survived"] == summary["errors"] == 0


def test_the_reference_itself_registered_as_a_mutant_survives(monkeypatch, capsys):
    # a registry entry whose "mutant" is the reference: no run can fail, so it must survive
    mutant = dledger_mutants.Mutant("same-as-reference", None, "the reference, unchanged", "election-safety")
    monkeypatch.setitem(dledger_mutants.MUTANTS, mutant.name, mutant)
    monkeypatch.setitem(SCENARIOS, "dledger", attrs.evolve(SCENARIOS["dledger"], mutants=(mutant,)))
    status = main(["mutants", "--scenario", "dledger", "--runs", "3", *FAST])
    out, err = capsys.readouterr()
    assert status == 1
    assert "SURVIVED" in out and "0 killed, 1 survived, 0 errors" in out
    # a non-zero exit says why, in one line
    assert err.splitlines()[-1] == ("exit status 1: 1 survived (same-as-reference): no property caught them in 3 "
                                    "runs each, so a property is missing or --runs is too small (docs/mutants.md)")


def test_a_mutant_that_raises_is_an_error_not_a_kill(monkeypatch, capsys):
    def explodes(*args, **kwargs):
        raise RuntimeError("boom")

    mutant = dledger_mutants.Mutant("explodes", None, "handle_vote raises", "election-safety",
                                    procedures=lambda p: attrs.evolve(p, handle_vote=explodes))
    monkeypatch.setitem(dledger_mutants.MUTANTS, mutant.name, mutant)
    monkeypatch.setitem(SCENARIOS, "dledger", attrs.evolve(SCENARIOS["dledger"], mutants=(mutant,)))
    status = main(["mutants", "--scenario", "dledger", "--runs", "3", *FAST])
    out, err = capsys.readouterr()
    assert status == 1
    assert "ERROR" in out and "RuntimeError: boom" in out
    assert err.splitlines()[-1].startswith("exit status 1: 1 raised instead of violating a property (explodes;")


@pytest.mark.parametrize("argv,message", [
    (["--scenario", "dledger", "--mutant", "no-such-mutant"], "unknown mutant 'no-such-mutant' for scenario dledger"),
    (["--scenario", "no-such-scenario"], "unknown scenario 'no-such-scenario'"),
    (["--scenario", "raft"], "scenario 'raft' has no registered mutants"),
    (["--scenario", "dledger", "--runs", "0"], "argument --runs: '0' is not a whole number of at least 1"),
    (["--scenario", "dledger", "--fault-mix", "storm"], "unknown fault mix 'storm'"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, monkeypatch, capsys):
    monkeypatch.setitem(SCENARIOS, "raft", attrs.evolve(SCENARIOS["raft"], mutants=()))
    assert main(["mutants", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rmqha: error: ") and message in err


def test_replay_dir_holds_a_script_that_rmqha_replay_reproduces(tmp_path, capsys):
    status = main(["mutants", "--scenario", "dledger", "--mutant", "term-not-durable", "--runs", "5",
                   "--replay-dir", str(tmp_path / "cx"), *FAST])
    out = capsys.readouterr().out
    script = tmp_path / "cx" / "dledger-term-not-durable.rmqha"
    assert status == 0 and script.exists()
    assert f"rmqha replay {script}" in out
    assert main(["replay", str(script)]) == 0
    replayed = capsys.readouterr().out
    assert "reproduced: step-conformance:persist" in replayed and "VIOLATED" not in replayed


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if s.mutants])
def test_registry_entries_are_runnable_mutants_naming_scenario_invariants(name):
    scenario = SCENARIOS[name]
    infos = scenario.mutants
    assert infos and len({m.name for m in infos}) == len(infos)
    for m in infos:
        assert m.violates is None or m.violates in scenario.properties, m
        # every registered name resolves as an adapter of the scenario
        script = scenario.generate(next(campaign.plan_configs("t", 1, 0, name, (f"mutant:{m.name}",),
                                                              group_sizes=scenario.group_sizes,
                                                              duration_ms=0)))
        scenario.build(script, f"mutant:{m.name}", False)


def test_a_dledger_mutant_violates_one_of_what_it_breaks():
    for m in dledger_mutants.MUTANTS.values():
        assert m.violates is None or m.violates in m.breaks, m.name


def test_the_built_in_registries_are_filled():
    assert {"dledger", "truncation"} <= {n for n, s in SCENARIOS.items() if s.mutants}


def test_an_equivalent_truncation_variant_is_no_mutant_of_the_scenario_but_still_a_variant():
    # no property can kill it in the scenario (docs/mutants.md says why); the proof still judges it
    registered = {m.name for m in SCENARIOS["truncation"].mutants}
    assert truncation_variants.EQUIVALENT_IN_SCENARIO == {"epoch-only-match"}
    assert not registered & truncation_variants.EQUIVALENT_IN_SCENARIO
    assert registered | truncation_variants.EQUIVALENT_IN_SCENARIO == set(truncation_variants.VARIANTS) | set(
        truncation_variants.REPLICA_MUTANTS)


def _result(config, verdict, first=None):
    from results.runresult import PropertyVerdict, RunResult

    return RunResult(config=config, implementation="x", implementation_version="0", verdict=verdict, steps=1,
                     simulated_ms=1, wall_ms=1.0, elections=0, leader_changes=0, max_term=0,
                     first_violation=first, properties=(PropertyVerdict(first, "fail", 1),) if first else (),
                     error="boom" if verdict == "error" else None)


def test_a_run_the_reference_fails_too_is_inconclusive_and_the_search_goes_on(monkeypatch):
    from cli.commands.mutants import hunt

    # seed 0: mutant and reference fail alike (inconclusive); seed 1: only the mutant fails (a kill)
    def fake_run_one(config, shrink_budget=None):
        if config.adapter == "reference":
            return _result(config, "fail" if config.seed == 0 else "pass", "liveness" if config.seed == 0 else None)
        return _result(config, "fail", "liveness")

    monkeypatch.setattr(campaign, "run_one", fake_run_one)
    configs = campaign.plan_configs("t", 5, 0, "dledger", ("mutant:x",))
    o = hunt(MutantInfo("x", None, "", "liveness"), configs, shrink=campaign.NO_SHRINK)
    assert (o.verdict, o.seed, o.runs, o.killed_by) == ("KILLED", 1, 2, "liveness")
    assert o.inconclusive == ((0, "liveness"),)
