"""Step conformance of broker replicas (spec/steps/replica.py), procedure by procedure.

Each row drives replicas of the reference (``reference/broker_replica.py``) to a step,
judges that step as the replica took it (the spec allows it), then judges it again
with the one thing the row names changed and expects the row's property. A row names
the outcome of the procedure it exercises.
"""
from __future__ import annotations

import attrs
import pytest

from reference.broker_replica import BrokerReplica, ReplicaDurable
from reference.node_api import Message
from spec.steps.replica import PROCEDURES, PROPERTIES, ReplicaSteps
from spec.truncation.epoch_file import EpochFile, of
from spec.truncation.messages import (
    BecomeMaster, BecomeSlave, ClientWrite, HandshakeRequest, HandshakeResponse, ReplicaRole, SlaveReport, SlaveState,
    TransferBatch, WriteAcknowledged,
)
from spec.truncation.replication import Message as LogMessage
from spec.truncation.replication import TransferHeader
from tests.step_harness import Harness, drop, judged_as, outputs, replace_payload, view

PEERS = ("r1", "r2")


class Set(Harness):
    """Replicas r1 and r2 (optionally booted from durable state); messages delivered at once, in order."""

    def __init__(self, **durable: ReplicaDurable):
        super().__init__({n: BrokerReplica(n, PEERS, durable.get(n)) for n in PEERS}, ReplicaSteps(PEERS))

    def failover(self, master: str, epoch: int) -> "Set":
        self.ok(self.tell(master, BecomeMaster(epoch)))
        for n in PEERS:
            if n != master:
                self.ok(self.tell(n, BecomeSlave(master, epoch)))
        return self

    def connect(self, slave: str) -> "Set":
        self.now += 10
        self.ok(self.event(slave))  # READY: the handshake request
        self.pump()
        return self


def _log(*epochs: int, size: int = 10) -> tuple:
    return tuple((LogMessage(i * size, size, e), f"x{i}") for i, e in enumerate(epochs))


def _is(kind):
    return lambda m: isinstance(m.payload, kind)


# ------------------------------------------------------------------ rows


def become_master(s):
    return s.tell("r1", BecomeMaster(1))


def become_master_older(s):
    s.ok(s.tell("r1", BecomeMaster(3)))
    return s.tell("r1", BecomeMaster(2))


def become_slave(s):
    s.ok(s.tell("r1", BecomeMaster(1)))
    return s.tell("r2", BecomeSlave("r1", 1))


def handshake_request(s):
    s.failover("r1", 1)
    s.now += 10
    s.ok(s.event("r2"))
    return s.pump(until=_is(HandshakeRequest))


def transfer_from_start(s):
    s.failover("r1", 1)
    s.ok(s.tell("r1", ClientWrite("w1")))
    s.now += 10
    s.ok(s.event("r2"))
    return s.pump(until=_is(HandshakeResponse))


def diverged():
    """r1 and r2 both wrote epoch 1; r2 also wrote an epoch 2 that r1 never saw."""
    return Set(r1=ReplicaDurable(_log(1, 1, 1), of((1, 0))), r2=ReplicaDurable(_log(1, 1, 2, 2), of((1, 0), (2, 20))))


def no_point():
    """r2 holds only an epoch r1 never saw."""
    return Set(r1=ReplicaDurable(_log(2, 2), of((2, 0))), r2=ReplicaDurable(_log(1, 1), of((1, 0))))


def truncate_and_transfer(s):
    s.failover("r1", 3)
    s.now += 10
    s.ok(s.event("r2"))
    return s.pump(until=_is(HandshakeResponse))


def no_consistent_point(s):
    s.failover("r1", 3)
    s.now += 10
    s.ok(s.event("r2"))
    return s.pump(until=_is(HandshakeResponse))


def batch_sent(s):
    s.failover("r1", 1).connect("r2")
    return s.tell("r1", ClientWrite("w1"))


def batch_received(s):
    s.failover("r1", 1).connect("r2")
    s.ok(s.tell("r1", ClientWrite("w1")))
    return s.pump(until=_is(TransferBatch))


def batch_mismatch(s):
    s.failover("r1", 1).connect("r2")
    s.ok(s.tell("r1", ClientWrite("w1")))
    s.pump()
    header = TransferHeader(40, 1, 0, 0, 10)  # the slave is at 10
    return s.event("r2", Message("r1", "r2", TransferBatch(1, header, (LogMessage(40, 10, 1),), ("w9",))))


def write_at_master(s):
    s.failover("r1", 1)
    return s.tell("r1", ClientWrite("w1"))


def write_at_slave(s):
    s.failover("r1", 1)
    return s.tell("r2", ClientWrite("w1"))


def ack_after_report(s):
    s.failover("r1", 1).connect("r2")
    s.ok(s.tell("r1", ClientWrite("w1")))
    s.ok(s.pump(until=_is(TransferBatch)))
    return s.pump(until=lambda m: m.dst == "r1" and isinstance(m.payload, SlaveReport))


def _ack(e):
    return attrs.evolve(e, outputs=e.outputs + (Message(e.node, "client", WriteAcknowledged(e.payload.id)),))


OK = None
ROWS = [
    # role_change
    ("role_change", "BecomeMaster ACCEPTED", Set, become_master, None, OK),
    ("role_change", "BecomeMaster ACCEPTED/epoch not recorded", Set, become_master,
     lambda e: view(e, epoch_file=EpochFile()), "role_change"),
    ("role_change", "BecomeMaster REFUSED_OLDER_EPOCH", Set, become_master_older, None, OK),
    ("role_change", "BecomeMaster REFUSED_OLDER_EPOCH/taken", Set, become_master_older,
     lambda e: view(e, epoch=2), "role_change"),
    ("role_change", "BecomeSlave ACCEPTED", Set, become_slave, None, OK),
    ("role_change", "BecomeSlave ACCEPTED/not a slave", Set, become_slave,
     lambda e: view(e, role=ReplicaRole.NONE), "role_change"),
    # handshake
    ("handshake", "master answers", Set, handshake_request, None, OK),
    ("handshake", "master answers/no answer", Set, handshake_request, drop(HandshakeResponse), "handshake"),
    ("handshake", "master answers/wrong max", Set, handshake_request,
     replace_payload(HandshakeResponse, lambda r: attrs.evolve(r, max_offset=r.max_offset + 10)), "handshake"),
    ("handshake", "TRANSFER_FROM_START", Set, transfer_from_start, None, OK),
    ("handshake", "TRUNCATE_AND_TRANSFER", diverged, truncate_and_transfer, None, OK),
    ("handshake", "TRUNCATE_AND_TRANSFER/tail kept", diverged, truncate_and_transfer,
     lambda e: view(e, log=e.view.log + (e.view.log[-1],), max_offset=e.view.max_offset + 10), "handshake"),
    ("handshake", "TRUNCATE_AND_TRANSFER/no report", diverged, truncate_and_transfer, drop(SlaveReport), "handshake"),
    # an entry starting at the cut holds no data, but kept it would make r2 refuse epoch 1's batches from 20
    ("handshake", "TRUNCATE_AND_TRANSFER/epoch past the cut kept", diverged, truncate_and_transfer,
     lambda e: view(e, epoch_file=of((1, 0), (2, 20))), "handshake"),
    ("handshake", "NO_CONSISTENT_POINT", no_point, no_consistent_point, None, OK),
    ("handshake", "NO_CONSISTENT_POINT/transfers anyway", no_point, no_consistent_point,
     lambda e: view(e, slave_state=SlaveState.TRANSFER), "handshake"),
    # next_batch
    ("next_batch", "batch from the ack", Set, batch_sent, None, OK),
    ("next_batch", "batch from the ack/mislabelled", Set, batch_sent,
     replace_payload(TransferBatch, lambda b: attrs.evolve(b, header=attrs.evolve(b.header, epoch=2))), "next_batch"),
    ("next_batch", "batch from the ack/not from the ack", Set, batch_sent,
     replace_payload(TransferBatch, lambda b: attrs.evolve(b, header=attrs.evolve(b.header, offset=10))), "next_batch"),
    ("next_batch", "batch from the ack/sent unflushed", Set, batch_sent, lambda e: view(e, flushed=0), "next_batch"),
    # on_transfer_header
    ("on_transfer_header", "APPEND_AND_RECORD_EPOCH", Set, batch_received, None, OK),
    ("on_transfer_header", "APPEND_AND_RECORD_EPOCH/epoch not recorded", Set, batch_received,
     lambda e: view(e, epoch_file=EpochFile()), "on_transfer_header"),
    ("on_transfer_header", "APPEND_AND_RECORD_EPOCH/no report", Set, batch_received, drop(SlaveReport),
     "on_transfer_header"),
    ("on_transfer_header", "APPEND_AND_RECORD_EPOCH/reported unflushed", Set, batch_received,
     lambda e: view(e, flushed=0), "on_transfer_header"),
    ("on_transfer_header", "OFFSET_MISMATCH", Set, batch_mismatch, None, OK),
    ("on_transfer_header", "OFFSET_MISMATCH/appended", Set, batch_mismatch,
     lambda e: view(e, log=e.view.log + ((40, 1, "w9"),), max_offset=50, slave_state=SlaveState.TRANSFER),
     "on_transfer_header"),
    # confirm_offset
    ("confirm_offset", "write at the master", Set, write_at_master, None, OK),
    ("confirm_offset", "write at the master/wrong epoch", Set, write_at_master,
     lambda e: view(e, log=((0, 7, "w1"),)), "confirm_offset"),
    ("confirm_offset", "write at the master/acknowledged at once", Set, write_at_master, _ack, "confirm_offset"),
    ("confirm_offset", "write at a slave", Set, write_at_slave, None, OK),
    ("confirm_offset", "write at a slave/appended", Set, write_at_slave,
     lambda e: view(e, log=e.view.log + ((e.view.max_offset, 1, "w1"),), max_offset=e.view.max_offset + 10),
     "confirm_offset"),
    ("confirm_offset", "acknowledged once every replica holds it", Set, ack_after_report, None, OK),
]


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}:{r[1]}" for r in ROWS])
def test_each_outcome_is_allowed_and_each_departure_is_named(row):
    procedure, outcome, make, setup, tamper, expected = row
    s = make()
    judged_as(s, setup(s), tamper, expected)


def test_the_acknowledgement_follows_the_spec():
    s = Set()
    e = ack_after_report(s)
    assert any(isinstance(m.payload, WriteAcknowledged) for m in e.outputs)


def test_every_procedure_has_rows_and_a_property():
    assert {r[0] for r in ROWS} == set(PROCEDURES)
    assert PROPERTIES == tuple("step-conformance:" + p for p in PROCEDURES)
