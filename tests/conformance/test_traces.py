"""``rmqha validate``: step traces judged offline by the step-conformance code.

The fixtures are traces written by a DLedger node in Java (tests/fixtures/java/
DLedgerJavaNode.java) through its logging hook, driven by rmqha's simulator: a correct
run, and its buggy twin (``--bug vote-order``: the vote checks in release-0.1's order)
that validation must reject at the first step where the twin's behaviour departs.
"""
import io
import json
import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from adapters import close_all
from cli.main import main
from conformance.campaign import execute
from conformance.errors import UserError
from conformance.script import read_script
from conformance.traces import TraceWriter, validate

ROOT = Path(__file__).parents[2]
TRACES = ROOT / "tests" / "fixtures" / "traces"
GOOD = TRACES / "dledger-java.trace.jsonl"
BUGGY = TRACES / "dledger-java-vote-order.trace.jsonl"


def first_departure(a: Path, b: Path) -> int:
    """The first event line (after the headers) where two traces differ."""
    for number, (x, y) in enumerate(zip(a.read_text().splitlines(), b.read_text().splitlines()), 1):
        if number > 1 and x != y:
            return number
    raise AssertionError("the traces do not differ")


def test_the_java_nodes_trace_is_valid(capsys):
    assert main(["validate", str(GOOD)]) == 0
    out = capsys.readouterr().out
    assert "steps of dledger-java judged against dledger-0.4 (3 nodes): every step is one the spec allows" in out
    for procedure in ("handle_vote", "handle_push", "next_push", "candidate_action", "decide_heartbeat_round"):
        assert procedure in out.splitlines()[-1]


def test_the_buggy_twin_is_rejected_at_the_step_where_it_departs(capsys):
    assert main(["validate", str(BUGGY)]) == 1
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    line = first_departure(GOOD, BUGGY)
    assert out[0].startswith(f"{BUGGY}:{line}: step-conformance:handle_vote: ")
    # a candidate with a higher term and a shorter log: the log check decides (V-B), not the term
    assert out[2] == ("  expected: reply VoteResponse(term=1, result=VoteResult.REJECT_SMALL_LEDGER_END_INDEX, "
                      "round=3) (dledger-0.4, row small_ledger_end_index)")
    assert out[3] == "  observed: reply VoteResponse(term=1, result=VoteResult.REJECT_TERM_NOT_READY, round=3)"
    assert "1 step(s) the spec does not allow" in out[4]
    assert captured.err == (f"exit status 1: 1 step(s) the spec does not allow, the first at line {line} "
                            "(step-conformance:handle_vote)\n")


def test_a_profile_given_on_the_command_line_wins(capsys):
    # judged as release-0.1 (V-A order), the twin's vote answers are the profile's own:
    # what fails then is something else (0.1's G1 compare, not the vote order)
    main(["validate", str(BUGGY), "--profile", "dledger-0.1"])
    out = capsys.readouterr().out
    assert "judged against dledger-0.1" in out and "row expired_ledger_term" not in out


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="no JDK")
def test_the_fixtures_are_what_the_java_node_writes(tmp_path):
    build = tmp_path / "build"
    java = ROOT / "tests" / "fixtures" / "java"
    subprocess.run(["javac", "-d", str(build), str(java / "RmqhaShim.java"), str(java / "DLedgerJavaNode.java")],
                   check=True, capture_output=True)
    script = read_script(str(TRACES / "java-run.rmqha"))
    for fixture, extra in ((GOOD, ""), (BUGGY, " --bug vote-order")):
        out = tmp_path / fixture.name
        ex = execute(script, f"stdio:java -cp {build} DLedgerJavaNode --trace {out}{extra}", record_trace=False)
        assert ex.error is None
        # judged online too, by the same step checks: the twin fails there as well
        seen = {r.violation.property for r in ex.violations}
        assert seen == set() if fixture is GOOD else "step-conformance:handle_vote" in seen
        close_all()  # the process says goodbye and closes its trace
        assert out.read_text() == fixture.read_text()


def test_rmqhas_own_run_writes_a_trace_that_validates_like_the_run(tmp_path, capsys):
    ok, bad = tmp_path / "ok.jsonl", tmp_path / "bad.jsonl"
    scripts = ROOT / "tests" / "scenarios" / "dledger"
    assert main(["replay", str(scripts / "leader-crash-failover.rmqha"), "--step-trace", str(ok)]) == 0
    assert main(["validate", str(ok)]) == 0
    assert "every step is one the spec allows" in capsys.readouterr().out
    # a counterexample's run fails offline on the property it fails online
    assert main(["replay", str(scripts / "mutant-pr37-no-parse-reset.rmqha"), "--step-trace", str(bad)]) == 0
    capsys.readouterr()
    assert main(["validate", str(bad)]) == 1
    assert "step-conformance:candidate_action" in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("mutant,prop", [("ack-before-replicate", "confirm_offset"),
                                          ("header-epoch-not-recorded", "on_transfer_header")])
def test_a_replica_trace_validates_like_the_run(tmp_path, capsys, mutant, prop):
    """Broker replicas (node kind replica, the truncation scenario) write and validate traces
    too: the reference's run passes, a mutant's run fails offline on the step it fails online."""
    ok, bad = tmp_path / "ok.jsonl", tmp_path / "bad.jsonl"
    scripts = ROOT / "tests" / "scenarios" / "truncation"
    assert main(["replay", str(scripts / "flush-loss-failover.rmqha"), "--step-trace", str(ok)]) == 0
    assert json.loads(ok.read_text().splitlines()[0])["kind"] == "replica"
    assert main(["validate", str(ok)]) == 0
    out = capsys.readouterr().out
    assert "judged against rocketmq-5.1" in out and "every step is one the spec allows" in out
    assert main(["replay", str(scripts / f"mutant-{mutant}.rmqha"), "--step-trace", str(bad)]) == 0
    online = capsys.readouterr().out
    assert main(["validate", str(bad)]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert f"step-conformance:{prop}" in first and f"step-conformance:{prop}" in online


@pytest.mark.parametrize("script, verdict, first", [
    ("admin-clean-between-snapshots.rmqha", 0, None),
    ("mutant-follower-serves-reads.rmqha", 1, "step-conformance:controller_not_leader"),
    ("mutant-all-ack-ignored.rmqha", 1, "step-conformance:put_message"),
])
def test_a_controller_stacks_trace_validates_like_its_run(tmp_path, capsys, script, verdict, first):
    """Controllers and brokers (kind "controller"): judged offline by the checks that judge
    them online; a counterexample fails at the step where it fails online."""
    trace = tmp_path / "stack.jsonl"
    assert main(["replay", str(ROOT / "tests" / "scenarios" / "controller" / script), "--step-trace", str(trace)]) == 0
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["kind"] == "controller" and header["controllers"] == ["c1", "c2", "c3"]
    capsys.readouterr()
    assert main(["validate", str(trace)]) == verdict
    out = capsys.readouterr().out
    if first is None:
        assert "every step is one the spec allows" in out and "on_restart" in out
    else:
        assert first in out.splitlines()[0]


@pytest.mark.parametrize("header, message", [
    ({"controllers": []}, "controllers must be a non-empty list"),
    ({"controllers": ["c9"]}, "controllers must be a non-empty list"),
    ({"controllers": ["c1"], "brokers": {"b1": {"@type": "Nope"}}}, "brokers.b1"),
])
def test_a_bad_controller_header_is_one_line_of_bad_input(tmp_path, capsys, header, message):
    trace = tmp_path / "bad.jsonl"
    trace.write_text(json.dumps({"trace": "rmqha-trace/1", "kind": "controller", "nodes": ["c1", "b1"],
                                 "profile": "rocketmq-5.1", **header}) + "\n")
    assert main(["validate", str(trace)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_validation_streams_and_stops_at_the_first_violation():
    lines = BUGGY.read_text().splitlines(keepends=True)
    stop = first_departure(GOOD, BUGGY)

    def never():
        raise AssertionError("read past the first violation")
        yield  # pragma: no cover

    result = validate(itertools.chain(lines[:stop], never()), "t")
    assert [f.line for f in result.findings] == [stop]


def test_the_writer_gives_logs_as_tails():
    script = read_script(str(ROOT / "tests" / "scenarios" / "dledger" / "leader-crash-failover.rmqha"))
    out = io.StringIO()
    writer = TraceWriter(out, "dledger", script.nodes, "dledger-0.4", "test", "each-step")
    execute(script, "reference", record_trace=False, step_sink=writer.write)
    lines = out.getvalue().splitlines()
    views = [json.loads(line).get("view") for line in lines[1:]]
    full = [v for v in views if v is not None and "log" in v]
    assert len(full) == sum(json.loads(line)["input"] == "boot" for line in lines[1:])  # full logs only at boots
    assert not validate(lines, "t").findings


@pytest.mark.parametrize("text,message", [
    ("", "empty trace: nothing to validate"),
    ('{"kind": "dledger"}\n', "not an rmqha-trace/1 header"),
    ('{"trace": "rmqha-trace/1", "kind": "raft", "nodes": ["n1"]}\n', "kind 'raft' cannot be validated"),
    ('{"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1"], "profile": "dledger-9"}\n{}\n',
     "unknown DLedger profile 'dledger-9'"),
    ('{"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1"]}\n{}\n', "declares no profile"),
    ('{"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1"], "profile": "dledger-0.4"}\nnot json\n',
     "t:2: not JSON"),
    ('{"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1"], "profile": "dledger-0.4"}\n'
     '{"node": "n9", "time": 0, "input": "boot"}\n', "t:2: node: 'n9' is not one of the header's nodes"),
    ('{"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1"], "profile": "dledger-0.4"}\n'
     '{"node": "n1", "time": 0, "input": "boot", "view": {"role": "LEADER"}}\n', "t:2: view.node_id: missing field"),
])
def test_an_unreadable_trace_is_one_line_of_bad_input(text, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate(io.StringIO(text), "t")


def test_a_trace_without_steps_is_not_a_pass(tmp_path, capsys):
    path = tmp_path / "header-only.jsonl"
    path.write_text('{"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1"], "profile": "dledger-0.4"}\n')
    assert main(["validate", str(path)]) == 2
    assert "nothing was judged" in capsys.readouterr().err


def test_a_trace_whose_steps_no_procedure_judges_is_not_a_pass(tmp_path, capsys):
    # a node's boot alone: read, but no input, change or output that any procedure judges
    path = tmp_path / "boot-only.jsonl"
    path.write_text("".join(GOOD.read_text().splitlines(keepends=True)[:2]))
    assert main(["validate", str(path)]) == 2
    assert "1 steps, none that a procedure judges" in capsys.readouterr().err
