"""Step conformance of classic brokers (spec/steps/classic.py), procedure by procedure.

Each row drives a master and a slave of the reference (``reference/classic_broker.py``)
to a step, judges that step as the broker took it (the spec allows it: no violation),
then judges it again with the one thing the row names changed (the view after, or
what was sent) and expects the row's property. A row names the procedure's outcome it
exercises.
"""
from __future__ import annotations

import attrs
import pytest

from reference.classic_broker import ClassicBroker
from reference.node_api import Message
from spec.classic.profiles import PROFILES
from spec.classic.records import BrokerRole, ClassicConfig, FlushDiskType, PutMessageStatus, SlaveReport, TransferHeader
from spec.classic.rules import ClassicRules
from spec.classic.wire import (
    ClassicNodeConfig, ClientConnectionView, HAAccept, HAOpen, HAReset, HAStream, Put, PutResult, TransferFrame,
)
from spec.steps import StepEvent
from spec.steps.classic import PROCEDURES, PROPERTIES, ClassicSteps
from tests.step_harness import Harness, drop, judged_as, outputs, replace_payload, view

CONFIG = ClassicConfig(mapped_file_size_commit_log=1024, ha_transfer_batch_size=256, ha_max_gap_not_in_sync=2048,
                       os_page_size=64)


class Pair(Harness):
    """A master b1 and its slave b2, messages delivered at once in order; every step judged."""

    def __init__(self, mode=BrokerRole.SYNC_MASTER, flush=FlushDiskType.ASYNC_FLUSH, profile="rocketmq-4.9.3"):
        self.config = attrs.evolve(CONFIG, flush_disk_type=flush)
        self.profile = PROFILES[profile]
        rules = ClassicRules(config=self.config, profile=self.profile)
        super().__init__({
            "b1": ClassicBroker("b1", ClassicNodeConfig(mode, None, self.config, profile), rules=rules),
            "b2": ClassicBroker("b2", ClassicNodeConfig(BrokerRole.SLAVE, "b1", self.config, profile), rules=rules),
        }, ClassicSteps(self.config, self.profile))

    def at(self, t: int) -> "Pair":
        self.now = t
        return self

    def put(self, msg_id: str, size: int = 64, wait: bool = True) -> StepEvent:
        return self.tell("b1", Put(msg_id, size, wait))

    def wake(self, node: str) -> StepEvent:
        """``node``'s next tick, at its next deadline."""
        self.now = max(self.now, self.nodes[node].next_deadline())
        return self.event(node)

    def until_sent(self, node: str, what) -> StepEvent:
        """Wake ``node`` (judging each step) until a step sends a message ``what`` holds for: that step, unjudged."""
        for _ in range(100):
            e = self.wake(node)
            if any(what(m) for m in e.outputs):
                return e
            self.ok(e)
        raise AssertionError(f"{node} never sent it")

    def connect(self) -> "Pair":
        """The slave connects and (after haSendHeartbeatInterval) sends its first report."""
        self.ok(self.event("b2"))  # HAOpen
        self.pump()
        self.ok(self.until_sent("b2", _report))
        self.pump()
        return self


def _frame(m: Message) -> bool:
    return isinstance(m.payload, HAStream) and isinstance(m.payload.payload, TransferFrame)


def _report(m: Message) -> bool:
    return isinstance(m.payload, HAStream) and isinstance(m.payload.payload, SlaveReport)


def _stream(change):
    """Change the payload inside each HAStream segment sent."""
    return outputs(lambda m: attrs.evolve(m, payload=attrs.evolve(m.payload, payload=change(m.payload.payload)))
                   if isinstance(m.payload, HAStream) else m)


# ------------------------------------------------------------------ rows: (outcome, setup -> event, tamper, property)


def put_ok(p):
    return p.put("m1")


def put_end_of_file(p):
    for i in range(4):
        p.ok(p.put(f"f{i}", 240))  # 960 bytes: 64 remain, a 64-byte message needs 8 more
    return p.put("m1", 64)


def put_at_slave(p):
    return p.tell("b2", Put("m1"))


def async_put(p):
    return p.put("m1")


def slave_not_available(p):
    return p.put("m1")  # SYNC_MASTER without a connection


def sync_flush_put(p):
    p.ok(p.put("m1"))
    return p.at(10).event("b1")  # GroupCommitService flushes and answers


def waiting_put_acked(p):
    p.connect()
    p.ok(p.put("m1"))
    return p.pump(until=lambda m: m.dst == "b1" and _report(m))


def waiting_put_timeout(p):
    p.connect()
    p.ok(p.put("m1"))
    p.queue.clear()  # the slave never sees the message
    return p.at(p.now + p.config.slave_timeout_ms).event("b1")


def first_report(p):
    p.ok(p.event("b2"))
    p.pump()
    p.ok(p.until_sent("b2", _report))
    return p.pump(until=lambda m: m.dst == "b1" and _report(m))


def ack_report(p):
    p.connect()
    p.ok(p.put("m1"))
    return p.pump(until=lambda m: m.dst == "b1" and _report(m))


def batch_round(p):
    p.connect()
    return p.put("m1")


def first_round_last_file(p):
    for i in range(5):
        p.ok(p.put(f"f{i}", 240))  # the master's last file starts at 1024
    p.queue.clear()
    return first_report(p)


def heartbeat_round(p):
    p.connect()
    return p.until_sent("b1", lambda m: _frame(m) and m.payload.payload.header.is_heartbeat)


def ha_open(p):
    p.ok(p.event("b2"))
    return p.pump(until=lambda m: isinstance(m.payload, HAOpen))


def ha_accept(p):
    """The slave, holding a message, loses its connection and connects again."""
    p.ok(frame_append(p))
    p.pump()
    p.ok(p.event("b2", Message("b1", "b2", HAReset(p.nodes["b2"].client.conn))))
    p.ok(p.wake("b2"))  # HAOpen
    return p.pump(until=lambda m: isinstance(m.payload, HAAccept))


def stray_segment(p):
    return p.event("b1", Message("b2", "b1", HAStream("nobody", 0, SlaveReport(0))))


def frame_append(p):
    p.connect()
    p.ok(p.put("m1"))
    return p.pump(until=lambda m: m.dst == "b2" and _frame(m))


def frame_empty_log(p):
    for i in range(5):
        p.ok(p.put(f"f{i}", 240))
    p.queue.clear()
    p.ok(p.event("b2"))
    p.pump()
    p.ok(p.until_sent("b2", _report))
    return p.pump(until=lambda m: m.dst == "b2" and _frame(m) and m.payload.payload.body)


def frame_mismatch(p):
    p.connect()
    p.ok(p.put("m1"))
    p.pump()
    # a frame from the wrong offset, as a master that lost its place would send
    conn = p.nodes["b2"].client.conn
    seq = p.nodes["b2"].client.stream.expected
    return p.event("b2", Message("b1", "b2", HAStream(conn, seq, TransferFrame(TransferHeader(4096, 8), b"x" * 8))))


def heartbeat_report(p):
    p.connect()
    return p.until_sent("b2", _report)


OK = None
ROWS = [
    # place_message
    ("place_message", "PUT_OK", put_ok, None, OK),
    ("place_message", "PUT_OK/misplaced", put_ok, lambda e: view(e, max_offset=e.view.max_offset + 8), "place_message"),
    ("place_message", "END_OF_FILE", put_end_of_file, None, OK),
    ("place_message", "END_OF_FILE/no blank", put_end_of_file,
     lambda e: view(e, data=e.view.data[:960] + e.view.data[1024:1024 + 64], max_offset=1024), "place_message"),
    ("place_message", "SERVICE_NOT_AVAILABLE", put_at_slave, None, OK),
    ("place_message", "SERVICE_NOT_AVAILABLE/accepted", put_at_slave,
     replace_payload(PutResult, lambda r: attrs.evolve(r, status=PutMessageStatus.PUT_OK)), "place_message"),
    # transfer_status (submit_replica_request, doWaitTransfer)
    ("transfer_status", "NOT_SYNC_MASTER", async_put, None, OK),
    ("transfer_status", "NOT_SYNC_MASTER/unanswered", async_put, drop(PutResult), "transfer_status"),
    ("transfer_status", "SLAVE_NOT_AVAILABLE", slave_not_available, None, OK),
    ("transfer_status", "SLAVE_NOT_AVAILABLE/PUT_OK", slave_not_available,
     replace_payload(PutResult, lambda r: attrs.evolve(r, status=PutMessageStatus.PUT_OK)), "transfer_status"),
    ("transfer_status", "PUT_OK after the ack", waiting_put_acked, None, OK),
    ("transfer_status", "FLUSH_SLAVE_TIMEOUT at the deadline", waiting_put_timeout, None, OK),
    ("transfer_status", "FLUSH_SLAVE_TIMEOUT/PUT_OK without an ack", waiting_put_timeout,
     replace_payload(PutResult, lambda r: attrs.evolve(r, status=PutMessageStatus.PUT_OK)), "transfer_status"),
    # group_commit_status
    ("group_commit_status", "PUT_OK flushed", sync_flush_put, None, OK),
    ("group_commit_status", "PUT_OK/not flushed", sync_flush_put, lambda e: view(e, flushed=0),
     "group_commit_status"),
    # on_slave_report
    ("on_slave_report", "REQUEST", first_report, None, OK),
    ("on_slave_report", "REQUEST/ack not taken", first_report,
     lambda e: view(e, connections=tuple(attrs.evolve(c, slave_ack_offset=c.slave_ack_offset + 1)
                                          for c in e.view.connections)), "on_slave_report"),
    ("on_slave_report", "ACK", ack_report, None, OK),
    ("on_slave_report", "ACK/push2 not raised", ack_report, lambda e: view(e, push2_slave_max_offset=0),
     "on_slave_report"),
    # write_socket_round
    ("write_socket_round", "TRANSFER", batch_round, None, OK),
    ("write_socket_round", "TRANSFER/oversized batch", batch_round,
     _stream(lambda f: attrs.evolve(f, header=attrs.evolve(f.header, body_size=f.header.body_size + 8),
                                    body=f.body + b"x" * 8) if isinstance(f, TransferFrame) else f),
     "write_socket_round"),
    ("write_socket_round", "LAST_FILE_START", first_round_last_file, None, OK),
    ("write_socket_round", "LAST_FILE_START/from 0", first_round_last_file,
     _stream(lambda f: attrs.evolve(f, header=TransferHeader(0, f.header.body_size)) if isinstance(f, TransferFrame)
             else f), "write_socket_round"),
    ("write_socket_round", "HEARTBEAT", heartbeat_round, None, OK),
    # on_connect
    ("on_connect", "HAOpen accepted", ha_open, None, OK),
    ("on_connect", "HAOpen/not answered", ha_open, drop(HAAccept), "on_connect"),
    ("on_connect", "HAAccept connected", ha_accept, None, OK),
    ("on_connect", "HAAccept/reported 0", ha_accept,
     lambda e: view(e, client=attrs.evolve(e.view.client, current_reported_offset=0)), "on_connect"),
    ("on_connect", "stray segment reset", stray_segment, None, OK),
    ("on_connect", "stray segment/no reset", stray_segment, drop(HAReset), "on_connect"),
    # on_frame
    ("on_frame", "APPEND", frame_append, None, OK),
    ("on_frame", "APPEND/refused", frame_append, lambda e: view(e, max_offset=0, data=b""), "on_frame"),
    ("on_frame", "EMPTY_LOG", frame_empty_log, None, OK),
    ("on_frame", "EMPTY_LOG/at 0", frame_empty_log, lambda e: view(e, min_offset=0, max_offset=e.view.max_offset
                                                                     - e.view.min_offset), "on_frame"),
    ("on_frame", "OFFSET_MISMATCH", frame_mismatch, None, OK),
    ("on_frame", "OFFSET_MISMATCH/kept open", frame_mismatch,
     lambda e: view(e, client=ClientConnectionView(e.payload.conn, True, 0)), "on_frame"),
    # slave_report
    ("slave_report", "PROGRESS", frame_append, None, OK),
    ("slave_report", "PROGRESS/missing", frame_append, drop(HAStream), "slave_report"),
    ("slave_report", "HEARTBEAT", heartbeat_report, None, OK),
    ("slave_report", "HEARTBEAT/wrong offset", heartbeat_report,
     _stream(lambda r: SlaveReport(r.offset + 1) if isinstance(r, SlaveReport) else r), "slave_report"),
]


def _setup(row):
    procedure, outcome, setup, tamper, expected = row
    kwargs = {}
    if setup in (async_put,):
        kwargs["mode"] = BrokerRole.ASYNC_MASTER
    if setup in (sync_flush_put,):
        kwargs["flush"], kwargs["mode"] = FlushDiskType.SYNC_FLUSH, BrokerRole.ASYNC_MASTER
    return Pair(**kwargs)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}:{r[1]}" for r in ROWS])
def test_each_outcome_is_allowed_and_each_departure_is_named(row):
    procedure, outcome, setup, tamper, expected = row
    p = _setup(row)
    judged_as(p, setup(p), tamper, expected)


def test_every_procedure_has_rows_and_a_property():
    assert {r[0] for r in ROWS} == set(PROCEDURES)
    assert PROPERTIES == tuple("step-conformance:" + p for p in PROCEDURES)


def test_a_wrong_put_ok_names_each_connection_once_with_its_acks():
    """The message of a transfer_status violation lists every connection the step saw by name,
    once, with the distinct acks it had (it listed each three times, unnamed: the view before,
    the view after and the rebuilt state)."""
    import re
    from pathlib import Path

    from conformance.campaign import execute
    from conformance.script import read_script

    script = read_script(str(Path(__file__).parents[1] / "scenarios" / "classic"
                             / "mutant-replica-request-at-message-start.rmqha"))
    run = execute(script, script.adapter, record_trace=False)
    message = next(r.violation.message for r in run.violations
                   if r.violation.property == "step-conformance:transfer_status")
    listed = re.findall(r"(b[23]:\S+) ack", message)
    assert sorted(listed) == sorted(set(listed)) and len(listed) == 2, message
