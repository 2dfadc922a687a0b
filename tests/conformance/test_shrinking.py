"""Counterexamples: one per violated property, committed before shrinking, shrunk within a
budget, and shown with the message of the script that is shown."""
from __future__ import annotations

import json

import pytest

from cli.main import main
from conformance import campaign, spark_campaign
from conformance.campaign import NO_SHRINK, ShrinkBudget, execute, run_one, shrink_result
from conformance.scenarios.base import Recorded
from conformance.script import parse_script
from conformance.spark_campaign import CampaignSpec, run_campaign
from results import io
from results.runresult import RunConfig
from spec.invariants import Violation


def config(seed: int, adapter: str) -> RunConfig:
    return RunConfig("t", seed, adapter, "dledger", "dledger-0.4", 3, "crash", 8000)


def failing_run(adapter: str, at_least: int = 1):
    for seed in range(60):
        r = run_one(config(seed, adapter))
        if sum(p.verdict == "fail" for p in r.properties) >= at_least:
            return r
    raise AssertionError(f"no seed of {adapter} violated {at_least} properties")


def violated(script_text: str, adapter: str) -> set[str]:
    return {r.violation.property for r in execute(parse_script(script_text, "<cx>"), adapter, False).violations}


def test_every_violated_property_gets_a_counterexample_that_replays():
    r = failing_run("mutant:double-vote", at_least=2)
    failed = [p.name for p in r.properties if p.verdict == "fail"]
    assert sorted(x.property for x in r.counterexamples) == sorted(failed)
    for x in r.counterexamples:
        assert not x.shrunk and x.trace_jsonl == ""
        assert x.shrunk_steps <= x.original_steps
        assert x.property in violated(x.script, "mutant:double-vote")


def test_a_shrunk_counterexample_carries_the_message_of_its_own_replay():
    r = failing_run("mutant:double-vote", at_least=2)
    shrunk = shrink_result(r, ShrinkBudget(60, 60.0))
    assert {x.property for x in shrunk} == {p.name for p in r.properties if p.verdict == "fail"}
    for x in shrunk:
        assert x.shrunk and x.trace_jsonl
        script = parse_script(x.script, "<cx>")
        replay = execute(script.with_steps(s for s in script.steps if s.op != "expect"), "mutant:double-vote")
        first = next(v.violation for v in replay.violations if v.violation.property == x.property)
        assert x.message == first.message


def test_shrinking_stops_when_its_replays_run_out(monkeypatch):
    r = failing_run("mutant:vote-not-durable")
    calls = []
    real = campaign._first_violation

    def counting(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(campaign, "_first_violation", counting)
    shrink_result(r, ShrinkBudget(3, 60.0), (r.first_violation,))
    assert len(calls) == 3


@pytest.mark.parametrize("mutant", ["compare-ignores-term", "append-keeps-next-index"])
def test_shrinking_replays_no_candidate_twice(monkeypatch, mutant):
    """A replay is deterministic, so a candidate judged once is not replayed again (a
    pass at one chunk size meets again the candidates an earlier pass judged)."""
    r = failing_run(f"mutant:{mutant}")
    replayed = []
    real = campaign._first_violation

    def recording(script, adapter, prop):
        replayed.append(tuple((s.op, s.args) for s in script.steps))
        return real(script, adapter, prop)

    monkeypatch.setattr(campaign, "_first_violation", recording)
    shrunk = shrink_result(r, ShrinkBudget(200, 60.0), (r.first_violation,))
    assert shrunk and shrunk[0].shrunk_steps < shrunk[0].original_steps
    assert len(replayed) > 5
    assert len(set(replayed)) == len(replayed), f"{len(replayed) - len(set(replayed))} candidates replayed twice"


def _spec(name: str, runs: int = 4, **kw) -> CampaignSpec:
    settings = {"group_sizes": (3,), "fault_mixes": ("none",), "duration_ms": 4000, "chunk_size": 2,
                "shrink_replays": 40, "shrink_seconds": 30.0, **kw}
    return CampaignSpec(name, "dledger", ("mutant:double-vote",), runs=runs, **settings)


def _rows(out):
    return io.read_table(out, "counterexamples").to_pylist()


def test_a_campaign_commits_verdicts_then_shrinks_once_per_property(tmp_path):
    run_campaign(tmp_path / "c", _spec("t"), master=None, progress=False)
    markers = io.committed_chunks(tmp_path / "c")
    planned = {"a00-s000000000", "a00-s000000002"}
    shrinks = set(markers) - planned
    assert planned <= set(markers) and shrinks
    assert all(io.planned_chunk_of(c) in planned and markers[c]["summary"]["runs"] == 0 for c in shrinks)
    rows = _rows(tmp_path / "c")
    failed = {r["property"] for r in rows if not r["shrunk"]}
    shrunk = [r for r in rows if r["shrunk"]]
    # one shrunk counterexample per violated property, however many runs or chunks violated it
    assert sorted(r["property"] for r in shrunk) == sorted(failed)
    assert len(shrinks) <= len(failed)
    assert all(r["shrunk_steps"] <= r["original_steps"] for r in shrunk)
    for r in shrunk:  # each replays to its property, with the campaign's adapter
        assert r["property"] in violated(r["script"], "mutant:double-vote")
    # the shortest failing prefix was the one shrunk (then the lowest seed)
    first = min((r for r in rows if not r["shrunk"]), key=lambda r: (r["shrunk_steps"], r["seed"]))
    assert any(r["seed"] == first["seed"] and r["property"] == first["property"] for r in shrunk)


def test_one_shrink_stands_for_every_property_its_script_violates(tmp_path):
    run_campaign(tmp_path / "c", _spec("t"), master=None, progress=False)
    by_script: dict[str, set] = {}
    for r in _rows(tmp_path / "c"):
        if r["shrunk"]:
            by_script.setdefault(r["script"].split("\n", 2)[2], set()).add(r["property"])
    # double-vote breaks several properties at once; their counterexamples share a replay
    assert any(len(props) > 1 for props in by_script.values())


def test_shrinking_is_the_same_campaign_after_campaign(tmp_path):
    for name in ("a", "b"):
        run_campaign(tmp_path / name, _spec("t"), master=None, progress=False)
    pick = lambda out: sorted((r["property"], r["seed"], r["script"]) for r in _rows(out) if r["shrunk"])
    assert pick(tmp_path / "a") == pick(tmp_path / "b")


def test_a_campaign_stopped_while_shrinking_keeps_its_verdicts_and_resume_shrinks_the_rest(tmp_path, monkeypatch):
    real = spark_campaign.shrink_shared
    calls = []

    def interrupted(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(spark_campaign, "shrink_shared", interrupted)
    spec = _spec("t", runs=6, fault_mixes=("crash",))
    with pytest.raises(KeyboardInterrupt):
        run_campaign(tmp_path / "c", spec, master=None, progress=False)
    before = _rows(tmp_path / "c")
    assert {r["seed"] for r in io.read_table(tmp_path / "c", "runs").to_pylist()} == set(range(6))
    pending = {r["property"] for r in before if not r["shrunk"]} - {r["property"] for r in before if r["shrunk"]}
    if not pending:
        pytest.skip("the first shrink covered every property: nothing left to resume")
    monkeypatch.setattr(spark_campaign, "shrink_shared", real)
    summary = run_campaign(tmp_path / "c", None, master=None, resume=True, progress=False)
    after = _rows(tmp_path / "c")
    assert summary["runs"] == 0 and summary["shrunk"] >= 1
    assert {r["property"] for r in after if not r["shrunk"]} == {r["property"] for r in after if r["shrunk"]}
    # resuming again finds nothing left to shrink
    assert run_campaign(tmp_path / "c", None, master=None, resume=True, progress=False)["shrunk"] == 0


def test_no_shrink_commits_only_the_verdicts(tmp_path):
    no_shrink = _spec("u", runs=2, shrink_replays=NO_SHRINK.replays, shrink_seconds=NO_SHRINK.seconds)
    run_campaign(tmp_path / "u", no_shrink, master=None, progress=False)
    assert set(io.committed_chunks(tmp_path / "u")) == {"a00-s000000000"}
    assert {r["shrunk"] for r in _rows(tmp_path / "u")} == {False}


def test_results_of_the_first_schema_2_campaigns_still_read(tmp_path):
    # they committed one '<chunk>.shrunk' per chunk
    assert io.planned_chunk_of("a00-s000000000.shrunk") == "a00-s000000000"
    assert io.planned_chunk_of("a00-s000000000.shrunk.3") == "a00-s000000000"
    assert io.planned_chunk_of("a00-s000000000") == "a00-s000000000"


@pytest.mark.parametrize("flags", [
    ["--no-shrink", "--shrink-budget", "5"],
    ["--shrink-budget", "many"],
    ["--shrink-budget", "0"],
    ["--shrink-budget", "10/-1"],
])
def test_a_bad_shrink_budget_is_one_line_and_exit_2(flags, tmp_path, capsys):
    assert main(["run", "--no-spark", "--runs", "1", "--out", str(tmp_path / "r"), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "shrink" in err[0]
    assert not (tmp_path / "r").exists()


def test_a_run_halts_soon_after_its_first_violation():
    r = failing_run("mutant:double-vote")
    first = min(p.first_step for p in r.properties if p.verdict == "fail")
    whole = execute(campaign.script_for(r.config), r.config.adapter, record_trace=False)
    assert whole.cluster.sim.now > r.simulated_ms  # the whole script runs on
    halted = execute(campaign.script_for(r.config), r.config.adapter, record_trace=False,
                     halt_after_violation_ms=campaign.HALT_AFTER_VIOLATION_MS)
    first_at = halted.violations[0].time
    assert halted.cluster.halted_at_step is not None and halted.cluster.halted_at_step >= first
    assert halted.cluster.sim.now == first_at + campaign.HALT_AFTER_VIOLATION_MS == r.simulated_ms
    # what it saw up to the halt is what the whole script saw up to then
    assert [(v.time, v.violation.property) for v in halted.violations] == \
        [(v.time, v.violation.property) for v in whole.violations if v.time <= first_at + campaign.HALT_AFTER_VIOLATION_MS]


def test_a_passing_run_is_not_halted():
    r = run_one(config(0, "reference"))
    assert r.verdict == "pass"
    ex = execute(campaign.script_for(r.config), "reference", record_trace=False,
                 halt_after_violation_ms=campaign.HALT_AFTER_VIOLATION_MS)
    assert ex.cluster.halted_at_step is None and ex.cluster.sim.now == r.simulated_ms


# ------------------------------------------------------------ a violation that follows another


def _recorded(*events):
    return [Recorded(0, t, Violation(p, f"{p} at {t}")) for p, t in events]


@pytest.mark.parametrize("events, prop, want", [
    # nothing before it: the first violation of the run
    ((("a", 10), ("b", 20)), "a", (None, None)),
    # another property strictly earlier: named, with the gap
    ((("a", 10), ("b", 25)), "b", ("a", 15)),
    # at the same moment (one step broke both): neither follows the other
    ((("a", 10), ("b", 10)), "b", (None, None)),
    # several before it: the first of them; its own later repeats do not matter
    ((("c", 5), ("a", 10), ("b", 30), ("b", 40)), "b", ("c", 25)),
    # its own earlier violation comes first even if another repeats before its later ones
    ((("b", 5), ("a", 10), ("b", 30)), "b", (None, None)),
])
def test_preceded_by_names_the_first_violation_strictly_earlier(events, prop, want):
    assert campaign.preceded_by(_recorded(*events), prop) == want


def test_a_slips_consequence_names_the_wrong_step_before_it():
    # a leader that never lets its lease lapse: the heartbeat round decided against the spec
    # comes first; leader-lease, broken by the same wrong decision, half a second later
    cfg = RunConfig("t", 0, "mutant:lease-never-expires", "dledger", "dledger-0.4", 3, "mixed", 30000)
    r = run_one(cfg)
    by_property = {x.property: x for x in r.counterexamples}
    root, later = by_property["step-conformance:decide_heartbeat_round"], by_property["leader-lease"]
    assert (root.preceded_by, root.preceded_by_ms) == (None, None)
    assert later.preceded_by == "step-conformance:decide_heartbeat_round" and later.preceded_by_ms > 0
    # the shrunk scripts keep the order: it is the replay's own
    shrunk = {x.property: x for x in shrink_result(r, ShrinkBudget(60, 60.0))}
    assert shrunk["step-conformance:decide_heartbeat_round"].preceded_by is None
    assert shrunk["leader-lease"].preceded_by == "step-conformance:decide_heartbeat_round"


def test_a_check_names_a_violation_after_another_last(tmp_path):
    assert main(["check", "--no-spark", "--quiet", "--runs", "1", "--seed", "0", "--group-size", "3",
                 "--fault-mix", "mixed", "--adapter", "mutant:lease-never-expires",
                 "--out", str(tmp_path / "results"), "--report", str(tmp_path / "report")]) == 1
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["verdict"]["adapters"]["mutant:lease-never-expires"]["why"] == (
        "violates step-conformance:decide_heartbeat_round; and, each after another violation in its "
        "counterexample, leader-lease")
    order = [(x["property"], x["preceded_by"]) for x in summary["counterexamples"]]
    assert order == [("step-conformance:decide_heartbeat_round", None),
                     ("leader-lease", "step-conformance:decide_heartbeat_round")]
    md = (tmp_path / "report" / "report.md").read_text()
    assert "This script violates step-conformance:decide_heartbeat_round first" in md
