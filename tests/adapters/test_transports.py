"""Every transport end to end, and every way an implementation can misbehave."""
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from adapters import codec, resolve, transports
from adapters.operations import OPERATIONS
from adapters.transports import StdioAdapter
from cli.main import main
from conformance.errors import AdapterError
from spec.dledger.member_state import MemberView
from spec.dledger.records import HeartBeatRequest, VoteRequest

FIXTURES = Path(__file__).parent.parent / "fixtures"
PY = sys.executable
SERVE = f"stdio:{PY} -m cli serve-stdio"
PEERS = frozenset({"n1", "n2", "n3"})


def vote_args(term=5, voted_for=None, candidate="n2"):
    member = MemberView("n1", PEERS, 5, voted_for, None, ledger_end_term=1, ledger_end_index=3)
    return {"member": member, "request": VoteRequest(term, candidate, 1, 3), "self_vote": False}


def agrees(adapter, name, args) -> bool:
    op = OPERATIONS[name]
    raw = adapter.call(name, {k: codec.encode(v) for k, v in args.items()})
    got = op.canonical(codec.decode(raw, op.result, codec.registry(op.namespace)))
    return got == op.canonical(op.spec(adapter.info.profiles.get(op.namespace), **args))


CASES = [vote_args(), vote_args(term=7), vote_args(voted_for="n3"), vote_args(candidate="x9"), vote_args(term=4)]


def test_reference_served_over_stdio():
    a = resolve(SERVE, fresh=True)
    try:
        assert a.info.implementation == "rmqha-reference" and "dledger" in a.info.nodes
        assert all(agrees(a, "dledger.handle_vote", args) for args in CASES)
    finally:
        a.close()


def test_python_object_adapter():
    a = resolve("python:adapters.reference_server:ReferenceServer", fresh=True)
    assert all(agrees(a, "dledger.handle_vote", args) for args in CASES)


@pytest.fixture
def java_shim(java_classes):
    """RmqhaShim's classes, the same build as every adapter test's (conftest.java_classes)."""
    return java_classes


def test_java_shim_over_stdio(java_shim):
    a = resolve(f"stdio:java -cp {java_shim} RmqhaShim", fresh=True)
    try:
        assert a.info.implementation == "java-shim-example"
        assert all(agrees(a, "dledger.handle_vote", args) for args in CASES)
        hb = {"member": MemberView("n1", PEERS, 5, None, None), "request": HeartBeatRequest(5, "n2")}
        assert agrees(a, "dledger.handle_heartbeat", hb)
    finally:
        a.close()


@pytest.mark.jvm
def test_java_shim_through_jpype(java_shim):
    a = resolve(f"jvm:{java_shim}:RmqhaShim", fresh=True)
    assert all(agrees(a, "dledger.handle_vote", args) for args in CASES)


def test_unsupported_operation_is_not_applicable(java_shim):
    from adapters.protocol import Unsupported

    a = resolve(f"stdio:java -cp {java_shim} RmqhaShim", fresh=True)
    try:
        with pytest.raises(Unsupported):
            a.call("truncation.find_consistent_point", {})
    finally:
        a.close()


def test_the_java_shims_stdio_loop_reads_lines_as_readline_does(java_shim):
    """RmqhaShim's own line reader (raw pipe bytes, for speed): lines end at \\n, \\r or \\r\\n,
    blank lines get no answer, a last line without its newline is answered, bad UTF-8 is
    replaced, answers are UTF-8, and nothing is read after bye."""
    lines = [b'{"rmqha":1,"id":1,"op":"hello","args":{}}\r\n', b"  \n", b"\t\r",
             b'{"rmqha":1,"id":2,"op":"x\xc3\xa9\xff"}\r', b'{"rmqha":1,"id":3,"op":"y\\u00e9"}\n',
             b'{"rmqha":1,"id":4,"op":"bye","args":{}}\n{"rmqha":1,"id":5,"op":"hello"}']
    done = subprocess.run(["java", "-cp", str(java_shim), "RmqhaShim"], input=b"".join(lines), capture_output=True,
                          timeout=60)
    answers = done.stdout.decode("utf-8").split("\n")
    assert done.returncode == 0 and answers[-1] == "" and len(answers) == 5, done
    assert [json.loads(a)["id"] for a in answers[:4]] == [1, 2, 3, 4]
    assert json.loads(answers[1])["error"]["message"] == "operation x\u00e9\ufffd is not supported"
    assert json.loads(answers[2])["error"]["message"] == "operation y\u00e9 is not supported"
    assert "\u00e9".encode() in done.stdout.split(b"\n")[2]  # written as UTF-8, not escaped


@pytest.mark.parametrize("mode,message", [
    ("exit", "the process exited (status 7) fatal: simulated crash"),
    ("hang", "no answer within 1 s (killed)"),
    ("garbage", "answered something that is not a JSON object"),
    ("wrong-id", "malformed response to call"),
    ("internal", "call failed: internal: NullPointerException"),
])
def test_misbehaving_adapter_is_a_clear_error(mode, message):
    a = StdioAdapter(f"stdio:{mode}", f"{PY} {FIXTURES / 'misbehaving_adapter.py'} {mode}", timeout_s=1)
    a.hello()
    with pytest.raises(AdapterError) as failure:
        a.call("dledger.handle_vote", {k: codec.encode(v) for k, v in vote_args().items()})
    assert message in str(failure.value)
    assert failure.value.exchange and "sent" in failure.value.exchange
    a.close()


def test_a_slow_start_is_not_a_hang(monkeypatch):
    """The first answer waits for the process to start (an interpreter or a JVM on a busy
    machine); every later request has the plain timeout, so a hang is still caught fast."""
    monkeypatch.setattr(transports, "STARTUP_ALLOWANCE_S", 5.0)
    command = f"sh -c 'sleep 1.5; exec {PY} {FIXTURES / 'misbehaving_adapter.py'} hang'"
    a = StdioAdapter("stdio:slow", command, timeout_s=0.5)
    try:
        assert a.hello().implementation == "misbehaving-hang"
        with pytest.raises(AdapterError, match=r"no answer within 0\.5 s \(killed\)"):
            a.call("dledger.handle_vote", {k: codec.encode(v) for k, v in vote_args().items()})
    finally:
        a.close()


def test_command_that_does_not_start():
    with pytest.raises(AdapterError, match="cannot start"):
        resolve("stdio:/nonexistent/binary --x", fresh=True)


def test_campaign_against_the_stdio_reference(tmp_path, capsys):
    code = main(["run", "--no-spark", "--adapter", SERVE, "--runs", "2", "--group-size", "3", "--duration", "5000",
                 "--out", str(tmp_path / "r"), "--quiet"])
    assert code == 0, capsys.readouterr()


def test_campaign_against_a_crashing_adapter_records_errors(tmp_path, capsys):
    spec = f"stdio:{PY} {FIXTURES / 'misbehaving_adapter.py'} exit"
    code = main(["run", "--no-spark", "--adapter", spec, "--runs", "2", "--group-size", "3", "--duration", "5000",
                 "--out", str(tmp_path / "r"), "--quiet"])
    assert code == 3  # errored runs, no violation: the implementation failed
    from results import io

    runs = io.read_table(tmp_path / "r", "runs").to_pylist()
    assert {r["verdict"] for r in runs} == {"error"}
    assert all("the process exited" in r["error"] for r in runs)


def test_the_watchdog_abandons_a_late_call_and_never_hands_its_answer_to_the_next():
    """A call that times out is left to its (daemon) worker; the next call runs on a fresh
    one and gets its own answer, even when the abandoned call finishes in between."""
    watchdog = transports.Watchdog("rmqha-test")
    release = threading.Event()
    assert watchdog.run(lambda: release.wait(5) and "late", 0.05) == (False, None)
    assert watchdog.run(lambda: "next", 5) == (True, (True, "next"))
    release.set()
    finished, (ok, exc) = watchdog.run(lambda: 1 // 0, 5)
    assert finished and not ok and isinstance(exc, ZeroDivisionError)
    assert watchdog.run(lambda: "again", 5) == (True, (True, "again"))


def test_a_protocol_line_is_written_and_read_as_json_dumps_and_json_loads_do():
    """adapters.protocol.compact_json and parse_json are json.dumps(separators=(",", ":"))
    and json.loads, made faster: the same text, the same values, the same errors."""
    from adapters.protocol import compact_json, parse_json

    values = [{"rmqha": 1, "id": 7, "op": "node.tick", "args": {"handle": "c1#1", "now": 10}}, [], {}, "é\n\"",
              [1.5, -0.0, 2**70, None, True, False, "\u2028"], {"a": [{"b": {"c": [1, 2, {"d": "x" * 300}]}}]},
              float("inf")]
    for value in values:
        assert compact_json(value) == json.dumps(value, separators=(",", ":"))
        text = compact_json(value)
        assert parse_json(text) == json.loads(text)
    with pytest.raises(TypeError, match="not JSON serializable"):
        compact_json({"x": object()})
    for text in (' {"a": 1} ', '{"a":1}\r', "1"):
        assert parse_json(text) == json.loads(text)
    for bad in ('{"a":1} {"b":2}', '{"a":', "", "nope", '{"a":1}x'):
        with pytest.raises(json.JSONDecodeError) as ours:
            parse_json(bad)
        with pytest.raises(json.JSONDecodeError) as theirs:
            json.loads(bad)
        assert str(ours.value) == str(theirs.value)
