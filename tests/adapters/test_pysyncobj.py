"""PySyncObj driven at node level: deterministic, durable across crashes, and judged.

PySyncObj's Raft core runs unmodified with the simulator's transport, clock, random
source and a real FileJournal per node (adapters/pysyncobj_server.py). Its findings
are scenario scripts under tests/scenarios/raft/ (run by tests/scenarios); here:
the adapter's own guarantees, and that every finding over ``datagram`` links is
harmless over TCP-like links (``fifo``), i.e. comes from the links, not the schedule.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pysyncobj import syncobj, tcp_connection
from pysyncobj.poller import POLL_EVENT_TYPE
from pysyncobj.version import VERSION

from adapters import resolve
from adapters.errors import NotApplicable, UserError
from adapters.pysyncobj_server import PySyncObjServer, from_json, to_json
from conformance.campaign import execute, plan_configs, run_one
from conformance.script import parse_script, read_script

SCRIPTS = Path(__file__).parents[1] / "scenarios" / "raft"
FAILOVER = """
scenario raft
nodes n1 n2 n3
seed 5
start-spread 500
run 2500
append-leader a
run 500
crash-leader
await-leader
append-leader b
run 1500
restart-all
run 2000
"""


def trace(adapter: str, text: str = FAILOVER) -> str:
    ex = execute(parse_script(text), adapter, record_trace=True)
    assert ex.error is None and not ex.violations
    return ex.cluster.trace_jsonl()


def test_hello_declares_raft_nodes_and_no_handler_operations():
    info = resolve("pysyncobj").info
    assert (info.implementation, info.version, info.nodes, info.operations) == (
        "pysyncobj", VERSION, frozenset({"raft"}), frozenset())
    assert resolve("pysyncobj:datagram:memory", fresh=True).info.implementation == "pysyncobj+datagram+memory"


def test_one_seed_one_run():
    first = trace("pysyncobj")
    assert '"kind":"deliver"' in first and '"msg":"append_entries"' in first
    assert trace("pysyncobj") == first


def test_the_stdio_transport_changes_nothing():
    served = f"stdio:{sys.executable} -m adapters.stdio_server --implementation pysyncobj"
    assert trace(served) == trace("pysyncobj")


def test_pysyncobj_gets_its_clock_and_random_back_after_each_activation():
    before = syncobj.monotonicTime, syncobj.random
    trace("pysyncobj")
    assert (syncobj.monotonicTime, syncobj.random) == before


def _create(server, handle, durable=None, now=0):
    reply = server.handle({"rmqha": 1, "id": 1, "op": "node.create", "args": {
        "kind": "raft", "handle": handle, "node_id": "n1", "peers": ["n1", "n2", "n3"], "seed": 7,
        "durable": durable, "now": now}})
    assert reply["ok"], reply


def _call(server, op, **args):
    reply = server.handle({"rmqha": 1, "id": 2, "op": op, "args": args})
    assert reply["ok"], reply
    return reply["result"]


def _view(server, handle):
    return _call(server, "node.observe", handle=handle)["view"]


@pytest.fixture
def servers():
    """In-process servers, closed after the test (each node's journal directory goes with it)."""
    made: list[PySyncObjServer] = []

    def make(**kwargs) -> PySyncObjServer:
        made.append(PySyncObjServer(**kwargs))
        return made[-1]

    yield make
    for server in made:
        server.close()


def test_term_and_vote_survive_a_crash_in_the_file_journal_not_in_memory(servers):
    for journal, survives in (("file", True), ("memory", False)):
        server = servers(journal=journal)
        _create(server, "a")
        now = 0
        while _view(server, "a")["curr_term"] == 0:  # an election timeout makes it a candidate
            now += 10
            _call(server, "node.tick", handle="a", now=now)
        before = _view(server, "a")
        durable = _call(server, "node.crash", handle="a")["durable"]
        _create(server, "b", durable, now)
        after = _view(server, "b")
        kept = (after["curr_term"], after["voted_for"]) == (before["curr_term"], before["voted_for"]) == (1, "n1")
        assert kept is survives, (journal, before, after)


def _vote_request(term: int, seq: int) -> dict:
    return {"type": "request_vote", "link": ["n2#1", seq],
            "message": to_json({"type": "request_vote", "term": term, "last_log_index": 1, "last_log_term": 0})}


@pytest.mark.parametrize("links,final_term", [("fifo", 5), ("datagram", 7)])
def test_fifo_links_discard_what_a_tcp_stream_would_never_show(links, final_term, servers):
    server = servers(links=links)
    _create(server, "a")
    server.incarnation["n2#1"] = 5  # the sender's incarnation, as if created on this server
    for term, seq in ((5, 2), (7, 1), (7, 2)):  # a newer message, then an older one, then a duplicate
        _call(server, "node.step", handle="a", now=10,
              message={"src": "n2", "dst": "n1", "payload": _vote_request(term, seq)})
    assert _view(server, "a")["curr_term"] == final_term


def test_messages_round_trip_through_tagged_json():
    message = {"type": "append_entries", "entries": [(b"\x01\x00", 2, 1)], "commit_index": 1, "serialized": None}
    assert from_json(to_json(message)) == message
    with pytest.raises(TypeError, match="cannot carry a set"):
        to_json({"type": "x", "nodes": {1}})


DATAGRAM_FINDINGS = sorted(p for p in SCRIPTS.glob("*.rmqha") if read_script(str(p)).adapter == "pysyncobj:datagram")
MEMORY_FINDINGS = sorted(p for p in SCRIPTS.glob("*.rmqha") if read_script(str(p)).adapter == "pysyncobj:memory")


@pytest.mark.parametrize("path", DATAGRAM_FINDINGS + MEMORY_FINDINGS, ids=lambda p: p.name)
def test_each_finding_needs_its_links_or_its_journal(path):
    script = read_script(str(path))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    ex = execute(script, "pysyncobj", record_trace=False)
    assert ex.error is None
    assert [r.violation.message for r in ex.violations] == []


def test_there_are_findings_for_both():
    assert len(DATAGRAM_FINDINGS) >= 3 and MEMORY_FINDINGS


def test_a_leader_exposes_pysyncobjs_own_next_and_match_indexes():
    ex = execute(parse_script(FAILOVER), "pysyncobj", record_trace=False)
    assert ex.error is None and not ex.violations
    assert ex.cluster.not_applicable() == set()  # follower-progress and leader-commit-rule judged
    views = [v for v in ex.cluster.views() if v is not None]
    (leader,) = [v for v in views if v.role.value == "LEADER"]
    assert [p.peer for p in leader.progress] == sorted(v.node_id for v in views if v is not leader)
    for p in leader.progress:  # the values of PySyncObj's own __raftNextIndex / __raftMatchIndex
        assert 0 <= p.match_index < p.next_index <= leader.last_index + 1
    assert all(v.progress is None for v in views if v is not leader)


# ------------------------------------------------------------------ over its own TCP transport

TCP_FAULTS = """
scenario raft
nodes n1 n2 n3
seed 5
start-spread 500
run 3000
append-leader a
run 500
reset n2 n1
half-open n2 n3
run 300
append-leader b
run 8000
await-leader
append-leader c
run 2000
"""


def test_over_tcp_its_connection_code_runs_deterministically_and_survives_link_faults():
    first = trace("pysyncobj:tcp", TCP_FAULTS)  # no violation, no error: connections come back
    assert all(f'"msg":"{kind}"' in first for kind in ("syn", "synack", "data", "ack", "rst"))
    assert first.count('"kind":"network"') == 2  # the two LinkFaults, delivered to n1 and n2
    assert trace("pysyncobj:tcp", TCP_FAULTS) == first
    served = f"stdio:{sys.executable} -m adapters.stdio_server --implementation pysyncobj --links tcp"
    assert trace(served, TCP_FAULTS) == first
    assert resolve("pysyncobj:tcp").info.link_faults == frozenset({"raft"})


def test_link_faults_are_not_applicable_to_nodes_without_connections_of_their_own():
    script = parse_script("scenario raft\nnodes n1 n2 n3\nrun 100\nreset n1 n2\n")
    for adapter in ("pysyncobj", "reference"):
        with pytest.raises(NotApplicable, match="no connections of its own"):
            execute(script, adapter, record_trace=False)
    with pytest.raises(UserError, match="pysyncobj"):
        resolve("pysyncobj:tcp:datagram", fresh=True)


def test_an_error_in_its_connection_handling_is_an_error_verdict_with_the_exchange(monkeypatch):
    handle = tcp_connection.TcpConnection._TcpConnection__processConnection

    def reads_the_error(self, descr, event):  # a slip: on POLLERR it reads to fetch the error, unguarded
        if event & POLL_EVENT_TYPE.ERROR:
            self._TcpConnection__socket.recv(1)
        return handle(self, descr, event)

    monkeypatch.setattr(tcp_connection.TcpConnection, "_TcpConnection__processConnection", reads_the_error)
    ex = execute(parse_script(TCP_FAULTS), "pysyncobj:tcp", record_trace=False)
    assert ex.error is not None and "ConnectionResetError" in ex.error, ex.error
    assert "pysyncobj:tcp: node.tick failed: internal" in ex.error
    (config,) = plan_configs("tcp", 1, 0, "raft", ("pysyncobj:tcp",), None, (3,), ("transport",))
    result = run_one(config)
    assert result.verdict == "error" and "ConnectionResetError" in result.error


@pytest.mark.parametrize("leave", ["bye", "end of input"])
def test_its_journal_directories_go_with_the_server_however_the_client_leaves(tmp_path, leave):
    """Each node keeps its FileJournal in a directory of its own; a client that ends
    with ``bye`` or just closes the server's input (rmqha's process exiting) leaves none
    behind (before, the second left one per node in the temporary directory)."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    server = subprocess.Popen([sys.executable, "-m", "adapters.stdio_server", "--implementation", "pysyncobj"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                              cwd=Path(__file__).parents[2])
    requests = [{"id": 1, "op": "hello", "args": {}}] + [
        {"id": 2 + i, "op": "node.create", "args": {"kind": "raft", "handle": f"h{i}", "node_id": n,
                                                     "peers": ["n1", "n2", "n3"], "seed": 1, "now": 0}}
        for i, n in enumerate(["n1", "n2", "n3"])]
    for req in requests:
        server.stdin.write(json.dumps(req) + "\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["ok"]
    assert len(list(tmp_path.glob("rmqha-pysyncobj-*"))) == 3
    if leave == "bye":
        server.stdin.write(json.dumps({"id": 9, "op": "bye", "args": {}}) + "\n")
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    server.stdout.close()
    assert list(tmp_path.glob("rmqha-pysyncobj-*")) == []
