"""Step conformance of controller-mode brokers (spec/steps/broker.py), one table per procedure.

Each row is one step of broker b1, built by hand: its view before (role, SyncStateSet,
offsets), what the slaves told it (handshakes, acks), the input and the view and
messages after; the row names the outcome and the properties it must violate (none: a
step the spec allows).
"""
from __future__ import annotations

import attrs
import pytest

from reference.node_api import Message
from spec.broker.messages import BrokerNodeConfig, BrokerNodeView, MessageTag, Produce, ProduceResult
from spec.broker.records import DEFAULT_HA_CONFIG, BrokerRoleState, LogEntry, MasterSyncStateSet, Role
from spec.controller.messages import ControllerAnswer, ControllerCall, NotifyBrokerRoleChanged
from spec.controller.records import (
    AlterSyncStateSetRequest,
    AlterSyncStateSetResponse,
    ElectMasterResponse,
    ResponseCode as RC,
    SyncStateSet,
)
from spec.steps import BOOT, MESSAGE, TICK, StepEvent, step_property
from spec.steps.broker import PROCEDURES, PROPERTIES, BrokerSteps
from spec.truncation.epoch_file import EpochEntry, EpochFile
from spec.truncation.messages import HandshakeRequest, HandshakeResponse, SlaveReport, TransferBatch
from spec.truncation.replication import Message as LogMessage
from spec.truncation.replication import TransferHeader

MASTER = BrokerRoleState(1, Role.MASTER, 3, 1, "b1", fenced=False, registered=True)
SLAVE = BrokerRoleState(1, Role.SLAVE, 3, 2, "b2", fenced=False, registered=True)
EPOCHS = EpochFile((EpochEntry(3, 0),))


def view(role=MASTER, sss=MasterSyncStateSet({1, 2}, 5), max_offset=100, confirm=50, dispatched=None, log=(),
         flushed=None):
    return BrokerNodeView("b1", role, sss, max_offset, max_offset if flushed is None else flushed, confirm,
                          confirm if dispatched is None else dispatched, EPOCHS, tuple(log))


class Broker:
    def __init__(self, before: BrokerNodeView, all_ack: bool = True):
        ha = attrs.evolve(DEFAULT_HA_CONFIG, all_ack_in_sync_state_set=all_ack)
        self.steps = BrokerSteps({"b1": BrokerNodeConfig("c", "broker-a", ("c1",), ha)})
        self.found = self.steps.check(StepEvent("b1", 0, BOOT, view=view(role=BrokerRoleState(1), sss=None)))
        self.found += self.steps.check(StepEvent("b1", 1, TICK, view=before))
        self.before = before

    def slave(self, node: str, broker_id: int, ack: int | None, learner: bool = False) -> None:
        epoch = self.before.role_state.master_epoch
        self.found += self.steps.check(StepEvent("b1", 2, MESSAGE, node, HandshakeRequest(epoch, broker_id, learner),
                                                 self.before))
        if ack is not None:
            self.found += self.steps.check(StepEvent("b1", 3, MESSAGE, node, SlaveReport(epoch, ack), self.before))

    def step(self, after: BrokerNodeView, payload=None, outputs=(), src="c1") -> list:
        kind = TICK if payload is None else MESSAGE
        self.found += self.steps.check(StepEvent("b1", 10, kind, src if payload is not None else None, payload, after,
                                                 tuple(Message("b1", dst, p) for dst, p in outputs)))
        return sorted({v.property for v in self.found})


def sp(*procedures):
    return sorted(step_property(p) for p in procedures)


def test_every_procedure_is_a_property():
    assert PROPERTIES == tuple(step_property(p) for p in PROCEDURES)


# ------------------------------------------------------------------ change_broker_role

NOTE = NotifyBrokerRoleChanged("broker-a", 1, "b1", 4, 7, frozenset({1, 3}))


@pytest.mark.parametrize("outcome, note, after, violated", [
    ("becomes_master_adopting_the_set", NOTE,
     view(role=attrs.evolve(SLAVE, role=Role.MASTER, master_epoch=4, master_broker_id=1, master_address="b1"),
          sss=MasterSyncStateSet({1, 3}, 7)), []),
    ("becomes_master_adopting_itself", NOTE,
     view(role=attrs.evolve(SLAVE, role=Role.MASTER, master_epoch=4, master_broker_id=1, master_address="b1"),
          sss=MasterSyncStateSet({1}, 7)), sp("change_broker_role")),
    ("ignores_a_stale_epoch", attrs.evolve(NOTE, master_epoch=3), view(role=SLAVE, sss=None), []),
    ("applies_a_stale_epoch", attrs.evolve(NOTE, master_epoch=2),
     view(role=attrs.evolve(SLAVE, role=Role.MASTER, master_epoch=2, master_broker_id=1, master_address="b1"),
          sss=MasterSyncStateSet({1, 3}, 7)), sp("change_broker_role")),
    ("becomes_slave", attrs.evolve(NOTE, master_broker_id=3, master_address="b3"),
     view(role=attrs.evolve(SLAVE, master_epoch=4, master_broker_id=3, master_address="b3"), sss=None), []),
])
def test_change_broker_role_on_a_notification(outcome, note, after, violated):
    assert Broker(view(role=SLAVE, sss=None)).step(after, note) == violated


OLD_SET = EpochFile((EpochEntry(9, 0),))  # an epoch file from a set an admin clean restarted
AS_MASTER_4 = attrs.evolve(SLAVE, role=Role.MASTER, master_epoch=4, master_broker_id=1, master_address="b1")


@pytest.mark.parametrize("outcome, after, violated", [
    # its epoch file ends at 9, past masterEpoch 4: the replica refuses to lead (change_to_master)
    ("refuses_to_lead_in_an_epoch_its_file_is_past", attrs.evolve(view(role=AS_MASTER_4, sss=None), epoch_file=OLD_SET),
     []),
    ("adopts_a_set_it_cannot_lead", attrs.evolve(view(role=AS_MASTER_4, sss=MasterSyncStateSet({1, 3}, 7)),
                                                 epoch_file=OLD_SET), sp("change_broker_role")),
])
def test_change_broker_role_with_an_epoch_file_past_the_new_epoch(outcome, after, violated):
    """Seed 5728 of the default controller search: a broker of a set an admin clean restarted
    is told to lead in the new set's lower masterEpoch."""
    before = attrs.evolve(view(role=SLAVE, sss=None), epoch_file=OLD_SET)
    assert Broker(before).step(after, NOTE) == violated


@pytest.mark.parametrize("outcome, after, violated", [
    ("applied", view(role=attrs.evolve(SLAVE, role=Role.MASTER, master_epoch=4, master_broker_id=1, master_address="b1"),
                     sss=MasterSyncStateSet({1}, 8)), []),
    ("ignored_as_a_late_answer", view(role=SLAVE, sss=None), []),
    ("applied_at_another_epoch", view(role=attrs.evolve(SLAVE, role=Role.MASTER, master_epoch=5, master_broker_id=1),
                                      sss=MasterSyncStateSet({1}, 8)), sp("change_broker_role")),
])
def test_change_broker_role_on_an_elect_reply(outcome, after, violated):
    reply = ElectMasterResponse(RC.SUCCESS, 1, "b1", 4, 8, frozenset({1}))
    assert Broker(view(role=SLAVE, sss=None)).step(after, ControllerAnswer(1, reply)) == violated


# ------------------------------------------------------------------ apply_sync_state_set

PROPOSING = MasterSyncStateSet({1, 2}, 5, {1, 2, 3})


@pytest.mark.parametrize("outcome, code, after, violated", [
    ("accepted_and_applied", RC.SUCCESS, MasterSyncStateSet({1, 2, 3}, 6), []),
    ("rejected_keeps_the_proposal", RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, PROPOSING, []),
    ("rejected_drops_the_proposal", RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, MasterSyncStateSet({1, 2}, 5),
     sp("apply_sync_state_set")),
    ("accepted_at_the_wrong_epoch", RC.SUCCESS, MasterSyncStateSet({1, 2, 3}, 9), sp("apply_sync_state_set")),
])
def test_apply_sync_state_set_on_an_alter_reply(outcome, code, after, violated):
    reply = AlterSyncStateSetResponse(code, 6, SyncStateSet(frozenset({1, 2, 3}), 6)) if code == RC.SUCCESS \
        else AlterSyncStateSetResponse(code)
    assert Broker(view(sss=PROPOSING)).step(view(sss=after), ControllerAnswer(1, reply)) == violated


# ------------------------------------------------------------------ maybe_expand, maybe_shrink


def _alter(new_set, epoch=5):
    return ("c1", ControllerCall(1, AlterSyncStateSetRequest("broker-a", 1, 3, frozenset(new_set), epoch)))


@pytest.mark.parametrize("outcome, ack, learner, new_set, violated", [
    ("expands_a_caught_up_slave", 60, False, {1, 2, 3}, []),
    ("expands_a_slave_behind_confirm_offset", 40, False, {1, 2, 3}, sp("maybe_expand")),
    ("expands_a_learner", 60, True, {1, 2, 3}, sp("maybe_expand")),
    ("expands_a_slave_that_never_acked", None, False, {1, 2, 3}, sp("maybe_expand")),
    ("shrinks_a_member", 60, False, {1}, []),
    ("shrinks_the_master", 60, False, {2}, sp("maybe_shrink")),
])
def test_expand_and_shrink(outcome, ack, learner, new_set, violated):
    broker = Broker(view())
    broker.slave("b3", 3, ack, learner)
    after = view(sss=MasterSyncStateSet({1, 2}, 5, new_set))
    assert broker.step(after, None, [_alter(new_set)]) == violated


def test_an_alter_carries_the_masters_epochs():
    broker = Broker(view())
    broker.slave("b3", 3, 60)
    assert broker.step(view(sss=MasterSyncStateSet({1, 2}, 5, {1, 2, 3})), None, [_alter({1, 2, 3}, epoch=4)]) \
        == sp("maybe_expand")


def test_a_handshake_naming_no_broker_id_connects_no_member():
    """A replaced machine at b3's address connects before it has an id: the id b3's earlier
    connection named (3) is not it (replaced-slave-is-not-its-old-broker-id.rmqha)."""
    broker = Broker(view())
    broker.slave("b3", 3, 60)
    epoch = broker.before.role_state.master_epoch
    broker.found += broker.steps.check(StepEvent("b1", 4, MESSAGE, "b3", HandshakeRequest(epoch, None), broker.before))
    broker.found += broker.steps.check(StepEvent("b1", 5, MESSAGE, "b3", SlaveReport(epoch, 60), broker.before))
    assert broker.step(view(sss=MasterSyncStateSet({1, 2}, 5, {1, 2, 3})), None, [_alter({1, 2, 3})]) \
        == sp("maybe_expand")


# ------------------------------------------------------------------ compute_master_confirm_offset


@pytest.mark.parametrize("outcome, acks, confirm_after, violated", [
    ("rises_to_the_members_acks", {"b2": 80}, 80, []),
    ("stays_put", {"b2": 80}, 50, []),
    ("rises_past_a_members_ack", {"b2": 80}, 90, sp("compute_master_confirm_offset")),
    ("rises_while_a_member_never_acked", {}, 90, sp("compute_master_confirm_offset")),
])
def test_compute_master_confirm_offset(outcome, acks, confirm_after, violated):
    broker = Broker(view())
    for node, ack in acks.items():
        broker.slave(node, 2, ack)
    broker.slave("b3", 3, None)  # connected, not a member: does not count
    assert broker.step(view(confirm=confirm_after)) == violated


# ------------------------------------------------------------------ put_message

WRITE = LogEntry("m9", 100, 110)


@pytest.mark.parametrize("outcome, all_ack, ack, status, violated", [
    ("acknowledged_once_every_member_acked", True, 110, "PUT_OK", []),
    ("acknowledged_before_a_member_acked", True, 100, "PUT_OK", sp("put_message")),
    ("acknowledged_by_the_master_alone_without_all_ack", False, 100, "PUT_OK", []),
    ("still_waiting", True, 100, None, []),
])
def test_put_message_acknowledgement(outcome, all_ack, ack, status, violated):
    broker = Broker(view(), all_ack=all_ack)
    broker.slave("b2", 2, ack)
    after = view(max_offset=110, log=(WRITE,))
    outputs = [("client", ProduceResult("m9", status))] if status else []
    assert broker.step(after, Produce("m9"), outputs, src="client") == violated


@pytest.mark.parametrize("outcome, before, status, violated", [
    ("a_slave_refuses", view(role=SLAVE, sss=None), "SERVICE_NOT_AVAILABLE", []),
    ("a_slave_answers_another_status", view(role=SLAVE, sss=None), "IN_SYNC_REPLICAS_NOT_ENOUGH", sp("put_message")),
    ("a_fenced_master_refuses", view(role=attrs.evolve(MASTER, fenced=True)), "SERVICE_NOT_AVAILABLE", []),
])
def test_put_message_admission(outcome, before, status, violated):
    broker = Broker(before)
    assert broker.step(before, Produce("m9"), [("client", ProduceResult("m9", status))], src="client") == violated


# ------------------------------------------------------------------ next_batch and flushed_for_transfer

TAG = MessageTag("m9", "q0", 0)


def batch(offset=100, size=10, label=(3, 0), confirm=50, epoch=3, messages=None):
    """A batch of b1's (masterEpoch 3) ``WRITE`` unless told otherwise."""
    if messages is None:
        messages = ((LogMessage(100, 10, 3), TAG),) if size else ()
    return TransferBatch(epoch, TransferHeader(offset, *label, confirm, size), tuple(m for m, _ in messages),
                         tuple(i for _, i in messages))


@pytest.mark.parametrize("outcome, flushed_before, flushed_after, size, violated", [
    ("flushed_before_it_is_sent", 90, 110, 10, []),
    ("flushed_already", 110, 110, 10, []),
    ("sent_unflushed", 90, 100, 10, sp("flushed_for_transfer")),
    ("sent_one_byte_short_of_flushed", 90, 109, 10, sp("flushed_for_transfer")),
    ("keep_alive_ships_nothing", 90, 90, 0, []),
])
def test_flushed_for_transfer(outcome, flushed_before, flushed_after, size, violated):
    broker = Broker(view(max_offset=110, flushed=flushed_before, log=(WRITE,)))
    broker.slave("b2", 2, 100)
    after = view(max_offset=110, flushed=flushed_after, log=(WRITE,))
    assert broker.step(after, outputs=[("b2", batch(size=size))]) == violated


# two epochs: 3 from 0, 4 from 105; b1 (masterEpoch 4) holds m8 [100, 105) of epoch 3 and m9 [105, 110) of 4
M8, M9 = LogEntry("m8", 100, 105), LogEntry("m9", 105, 110, queue_offset=1)
TAG8, TAG9 = MessageTag("m8", "q0", 0), MessageTag("m9", "q0", 1)
TWO_EPOCHS = EpochFile((EpochEntry(3, 0), EpochEntry(4, 105)))
MASTER4 = attrs.evolve(MASTER, master_epoch=4)


def two_epochs(role=MASTER4):
    return attrs.evolve(view(role=role, max_offset=110, log=(M8, M9)), epoch_file=TWO_EPOCHS)


@pytest.mark.parametrize("outcome, shipped, violated", [
    ("the_rest_of_an_epoch_labelled_with_it", batch(size=5, label=(3, 0), epoch=4,
                                                    messages=((LogMessage(100, 5, 3), TAG8),)), []),
    ("cut_past_the_end_of_its_epoch", batch(size=10, label=(3, 0), epoch=4,
                                            messages=((LogMessage(100, 5, 3), TAG8), (LogMessage(105, 5, 4), TAG9))),
     sp("next_batch")),
    ("labelled_with_the_next_epoch", batch(size=5, label=(4, 105), epoch=4,
                                           messages=((LogMessage(100, 5, 3), TAG8),)), sp("next_batch")),
    ("another_message_than_the_masters", batch(size=5, label=(3, 0), epoch=4,
                                               messages=((LogMessage(100, 5, 3), TAG9),)), sp("next_batch")),
    ("another_confirm_offset", batch(size=5, label=(3, 0), epoch=4, confirm=60,
                                     messages=((LogMessage(100, 5, 3), TAG8),)), sp("next_batch")),
    ("from_an_offset_the_slave_never_reported", batch(offset=105, size=5, label=(4, 105), epoch=4,
                                                      messages=((LogMessage(105, 5, 4), TAG9),)), sp("next_batch")),
    ("in_an_older_masterEpoch", batch(size=5, label=(3, 0), epoch=3, messages=((LogMessage(100, 5, 3), TAG8),)),
     sp("next_batch")),
    ("a_keep_alive_at_the_ack", batch(size=0, label=(3, 0), epoch=4), []),
    ("nothing_there", batch(offset=100, size=5, label=(3, 0), epoch=4, messages=()), sp("next_batch")),
])
def test_next_batch(outcome, shipped, violated):
    broker = Broker(two_epochs())
    broker.slave("b2", 2, 100)
    assert broker.step(two_epochs(), outputs=[("b2", shipped)]) == violated


@pytest.mark.parametrize("outcome, report, offset, violated", [
    ("from_the_report_it_answers", 105, 105, []),
    ("from_the_report_before_it", 105, 100, []),
    ("from_neither", 105, 101, sp("next_batch")),
])
def test_next_batch_starts_at_the_latest_report(outcome, report, offset, violated):
    broker = Broker(two_epochs())
    broker.slave("b2", 2, 100)
    shipped = batch(offset=offset, size=5, label=(4, 105), epoch=4, messages=((LogMessage(105, 5, 4), TAG9),)) \
        if offset == 105 else batch(offset=offset, size=5, label=(3, 0), epoch=4,
                                    messages=((LogMessage(100, 5, 3), TAG8),))
    assert broker.step(two_epochs(), SlaveReport(4, report), [("b2", shipped)], src="b2") == violated


@pytest.mark.parametrize("outcome, offset, violated", [
    ("from_the_highest_report", 105, []),
    ("from_the_latest_a_late_lower_copy", 100, []),
    ("from_neither", 101, sp("next_batch")),
])
def test_next_batch_after_a_late_copy_of_a_lower_report(outcome, offset, violated):
    """b2 reported 105, then a late copy of its earlier report (100) arrives: its log only
    grows within the connection, so the master may ship from either (rmqha's reference
    keeps the highest)."""
    broker = Broker(two_epochs())
    broker.slave("b2", 2, 100)
    broker.step(two_epochs(), SlaveReport(4, 105), src="b2")
    assert broker.step(two_epochs(), SlaveReport(4, 100), src="b2") == []  # taken, nothing shipped
    shipped = batch(offset=offset, size=5, label=(4, 105), epoch=4, messages=((LogMessage(105, 5, 4), TAG9),)) \
        if offset == 105 else batch(offset=offset, size=5, label=(3, 0), epoch=4,
                                    messages=((LogMessage(100, 5, 3), TAG8),))
    assert broker.step(two_epochs(), outputs=[("b2", shipped)]) == violated  # at the next write or tick


def test_a_handshake_starts_a_connection_over():
    """After a handshake and before its first report, the master knows no ack to ship from."""
    broker = Broker(two_epochs())
    broker.slave("b2", 2, 100)
    broker.slave("b2", 2, None)
    assert broker.step(two_epochs(), outputs=[("b2", batch(size=5, label=(3, 0), epoch=4,
                                                           messages=((LogMessage(100, 5, 3), TAG8),)))]) \
        == sp("next_batch")


def test_only_a_master_ships():
    slave = attrs.evolve(MASTER4, role=Role.SLAVE, master_broker_id=2, master_address="b2")
    broker = Broker(two_epochs(slave))
    assert broker.step(two_epochs(slave), outputs=[("b3", batch(size=5, label=(3, 0), epoch=4,
                                                                messages=((LogMessage(100, 5, 3), TAG8),)))]) \
        == sp("next_batch")


# ------------------------------------------------------------------ on_restart


@pytest.mark.parametrize("outcome, booted, violated", [
    ("fenced_without_a_role", view(role=BrokerRoleState(1), sss=None), []),
    ("serving_as_master", view(role=MASTER, sss=MasterSyncStateSet({1}, 0)), sp("on_restart")),
    ("consume_queue_past_confirm_offset", view(role=BrokerRoleState(1), sss=None, confirm=50, dispatched=100),
     sp("on_restart")),
])
def test_on_restart(outcome, booted, violated):
    steps = BrokerSteps({})
    found = steps.check(StepEvent("b1", 0, BOOT, view=booted))
    assert sorted({v.property for v in found}) == violated


# ------------------------------------------------------------------ handshake and on_transfer_header (both ends)

FOLLOWER = BrokerRoleState(1, Role.SLAVE, 4, 2, "b2", fenced=False, registered=True)  # b1 follows b2, masterEpoch 4
A, B = LogEntry("a", 0, 10), LogEntry("b", 10, 20, queue_offset=1)
SLAVE_FILE = EpochFile((EpochEntry(3, 0), EpochEntry(4, 10)))  # a of epoch 3, b of epoch 4


def slave_view(log=(A, B), epochs=SLAVE_FILE, confirm=0):
    end = log[-1].end if log else 0
    return attrs.evolve(view(role=FOLLOWER, sss=None, max_offset=end, confirm=confirm, log=log), epoch_file=epochs)


def shaking(before=None) -> Broker:
    """b1, a slave of b2 in masterEpoch 4, has sent b2 its handshake."""
    before = before or slave_view()
    broker = Broker(before)
    broker.step(before, outputs=[("b2", HandshakeRequest(4, 1, False))])
    return broker


def answer(entries, max_offset):
    return HandshakeResponse(4, max_offset, tuple(entries))


CUT_AT_10 = answer((EpochEntry(3, 0),), 30)  # the master wrote epoch 3 to 30: b's epoch 4 is not the master's
NO_POINT = answer((EpochEntry(2, 0),), 30)  # no epoch in common


@pytest.mark.parametrize("outcome, response, after, reports, violated", [
    ("truncates_to_the_consistent_point", CUT_AT_10, slave_view((A,), EpochFile((EpochEntry(3, 0),))), [10], []),
    ("keeps_what_it_must_cut", CUT_AT_10, slave_view(), [20], sp("handshake")),
    ("cuts_but_does_not_report", CUT_AT_10, slave_view((A,), EpochFile((EpochEntry(3, 0),))), [], sp("handshake")),
    ("ignores_the_answer_altogether", CUT_AT_10, slave_view(), [], []),  # (it may have given the handshake up)
    ("cuts_too_much", CUT_AT_10, slave_view((), EpochFile(())), [0], sp("handshake")),
    ("no_consistent_point_keeps_everything", NO_POINT, slave_view(), [], []),
    ("no_consistent_point_but_transfers", NO_POINT, slave_view(), [20], sp("handshake")),
])
def test_slave_handshake(outcome, response, after, reports, violated):
    broker = shaking()
    assert broker.step(after, response, [("b2", SlaveReport(4, r)) for r in reports], src="b2") == violated


def test_an_answer_it_did_not_ask_for_is_not_judged():
    broker = Broker(slave_view())  # sent no handshake
    assert broker.step(slave_view(), CUT_AT_10, src="b2") == []


@pytest.mark.parametrize("outcome, before, handshake, answers, violated", [
    ("answers_with_its_end_and_epochs", view(max_offset=100), HandshakeRequest(3, 2, False),
     [HandshakeResponse(3, 100, EPOCHS.entries)], []),
    ("answers_with_another_end", view(max_offset=100), HandshakeRequest(3, 2, False),
     [HandshakeResponse(3, 90, EPOCHS.entries)], sp("handshake")),
    ("answers_a_handshake_of_another_epoch", view(max_offset=100), HandshakeRequest(2, 2, False),
     [HandshakeResponse(3, 100, EPOCHS.entries)], sp("handshake")),
    ("a_slave_answers", view(role=SLAVE, sss=None), HandshakeRequest(3, 2, False),
     [HandshakeResponse(3, 100, EPOCHS.entries)], sp("handshake")),
    ("does_not_answer_yet", view(max_offset=100), HandshakeRequest(3, 2, False), [], []),
])
def test_master_handshake_answer(outcome, before, handshake, answers, violated):
    broker = Broker(before)
    assert broker.step(before, handshake, [("b2", a) for a in answers], src="b2") == violated


TAG_C = MessageTag("c", "q0", 2)
C = LogEntry("c", 10, 20, queue_offset=2)
TRUNCATED = slave_view((A,), EpochFile((EpochEntry(3, 0),)))


def transferring() -> Broker:
    """b1 truncated to 10 on b2's answer and reported: it is in the transfer."""
    broker = shaking()
    assert broker.step(TRUNCATED, CUT_AT_10, [("b2", SlaveReport(4, 10))], src="b2") == []
    return broker


def header_batch(offset=10, label=(3, 0), confirm=5, messages=((LogMessage(10, 10, 3), TAG_C),)):
    size = sum(m.size for m, _ in messages)
    return TransferBatch(4, TransferHeader(offset, *label, confirm, size), tuple(m for m, _ in messages),
                         tuple(i for _, i in messages))


@pytest.mark.parametrize("outcome, shipped, after, reports, violated", [
    ("appends_at_its_end", header_batch(), slave_view((A, C), TRUNCATED.epoch_file, confirm=5), [20], []),
    ("appends_but_does_not_report", header_batch(), slave_view((A, C), TRUNCATED.epoch_file, confirm=5), [],
     sp("on_transfer_header")),
    ("reports_before_flushing", header_batch(),
     attrs.evolve(slave_view((A, C), TRUNCATED.epoch_file, confirm=5), flushed=10), [20], sp("on_transfer_header")),
    ("appends_another_message", header_batch(), slave_view((A, B), TRUNCATED.epoch_file, confirm=5), [20],
     sp("on_transfer_header")),
    ("confirms_past_the_masters", header_batch(), slave_view((A, C), TRUNCATED.epoch_file, confirm=20), [20],
     sp("on_transfer_header")),
    ("records_the_new_epoch", header_batch(label=(4, 10), messages=((LogMessage(10, 10, 4), TAG_C),)),
     slave_view((A, C), SLAVE_FILE, confirm=5), [20], []),
    ("does_not_record_the_new_epoch", header_batch(label=(4, 10), messages=((LogMessage(10, 10, 4), TAG_C),)),
     slave_view((A, C), TRUNCATED.epoch_file, confirm=5), [20], sp("on_transfer_header")),
    ("drops_a_batch_past_its_end", header_batch(offset=15), TRUNCATED, [], []),
    ("appends_a_batch_past_its_end", header_batch(offset=15), slave_view((A, C), TRUNCATED.epoch_file, confirm=5),
     [20], sp("on_transfer_header")),
    ("ignores_a_keep_alive", header_batch(messages=()), TRUNCATED, [], []),
    ("ignores_a_batch_at_its_end", header_batch(), TRUNCATED, [], []),  # (it may have dropped the connection)
])
def test_on_transfer_header(outcome, shipped, after, reports, violated):
    broker = transferring()
    assert broker.step(after, shipped, [("b2", SlaveReport(4, r)) for r in reports], src="b2") == violated


def test_a_dropped_connection_appends_nothing_until_it_hand_shakes_again():
    broker = transferring()
    assert broker.step(TRUNCATED, header_batch(offset=15), src="b2") == []  # OFFSET_MISMATCH: dropped
    assert broker.step(TRUNCATED, header_batch(), src="b2") == []  # a late batch of the dropped connection, ignored
    assert broker.step(slave_view((A, C), TRUNCATED.epoch_file, confirm=5), header_batch(), src="b2") \
        == sp("on_transfer_header")  # appended outside a transfer


def test_a_batch_left_alone_ends_the_transfer():
    broker = transferring()
    assert broker.step(TRUNCATED, header_batch(), src="b2") == []  # dropped on its own timer
    assert broker.step(slave_view((A, C), TRUNCATED.epoch_file, confirm=5), header_batch(), [("b2", SlaveReport(4, 20))],
                       src="b2") == sp("on_transfer_header")


def test_a_slave_changes_its_log_only_on_its_masters_answer_or_batch():
    broker = transferring()
    assert broker.step(slave_view((), EpochFile(())), outputs=()) == sp("on_transfer_header")  # on a tick
