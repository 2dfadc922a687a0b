"""Counterexamples: one per violated property, committed before shrinking, shrunk within a
budget, and shown with the message of the script that is shown."""
from __future__ import annotations

import pytest

from cli.main import main
from conformance import campaign
from conformance.campaign import NO_SHRINK, ShrinkBudget, execute, run_one, shrink_result
from conformance.script import parse_script
from conformance.spark_campaign import CampaignSpec, run_campaign
from results import io
from results.runresult import RunConfig


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
    r = failing_run("mutant:term-not-durable", at_least=2)
    failed = [p.name for p in r.properties if p.verdict == "fail"]
    assert sorted(x.property for x in r.counterexamples) == sorted(failed)
    for x in r.counterexamples:
        assert not x.shrunk and x.trace_jsonl == ""
        assert x.shrunk_steps <= x.original_steps
        assert x.property in violated(x.script, "mutant:term-not-durable")


def test_a_shrunk_counterexample_carries_the_message_of_its_own_replay():
    r = failing_run("mutant:term-not-durable", at_least=2)
    shrunk = shrink_result(r, ShrinkBudget(60, 60.0))
    assert {x.property for x in shrunk} == {p.name for p in r.properties if p.verdict == "fail"}
    for x in shrunk:
        assert x.shrunk and x.trace_jsonl
        script = parse_script(x.script, "<cx>")
        replay = execute(script.with_steps(s for s in script.steps if s.op != "expect"), "mutant:term-not-durable")
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


def test_a_campaign_commits_verdicts_then_shrunk_counterexamples(tmp_path):
    spec = CampaignSpec("t", "dledger", ("mutant:double-vote",), runs=4, group_sizes=(3,), fault_mixes=("none",),
                        duration_ms=4000, chunk_size=2, shrink_replays=40, shrink_seconds=30.0)
    run_campaign(tmp_path / "c", spec, master=None, progress=False)
    markers = io.committed_chunks(tmp_path / "c")
    assert set(markers) == {"a00-s000000000", "a00-s000000002", "a00-s000000000.shrunk", "a00-s000000002.shrunk"}
    cx = io.read_table(tmp_path / "c", "counterexamples").to_pylist()
    assert {(r["seed"], r["shrunk"]) for r in cx} >= {(0, True), (2, True)}
    assert all(r["shrunk_steps"] <= r["original_steps"] for r in cx)

    no_shrink = CampaignSpec("u", "dledger", ("mutant:double-vote",), runs=2, group_sizes=(3,),
                             fault_mixes=("none",), duration_ms=4000, chunk_size=2,
                             shrink_replays=NO_SHRINK.replays, shrink_seconds=NO_SHRINK.seconds)
    run_campaign(tmp_path / "u", no_shrink, master=None, progress=False)
    assert set(io.committed_chunks(tmp_path / "u")) == {"a00-s000000000"}
    assert {r["shrunk"] for r in io.read_table(tmp_path / "u", "counterexamples").to_pylist()} == {False}


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
