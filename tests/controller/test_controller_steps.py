"""Step conformance of controller nodes (spec/steps/controller.py), one table per procedure.

Each row is one step of a controller node, built by hand: the view before (active or
not, its metadata), the heartbeats it received, the call, and what it decided, answered
and notified; the row names the outcome and the properties it must violate (none: the
step is one the spec allows).
"""
from __future__ import annotations

import attrs
import pytest

from controller_cases import CLUSTER, NAME, R51, addr, metadata
from reference.node_api import Message
from spec.controller.api import controller_not_leader
from spec.controller.events import ElectMasterEvent
from spec.controller.heartbeat import BrokerHeartbeat, HeartbeatLiveness, HeartbeatTable
from spec.controller.messages import (
    ControllerAnswer,
    ControllerCall,
    ControllerDecision,
    ControllerNodeView,
    NotifyBrokerRoleChanged,
)
from spec.controller.records import (
    AlterSyncStateSetRequest,
    ElectMasterRequest,
    GetReplicaInfoRequest,
    ResponseCode as RC,
)
from spec.controller.rules import API_OF_REQUEST
from spec.steps import BOOT, MESSAGE, TICK, StepEvent
from spec.steps.controller import PROCEDURES, PROPERTIES, ControllerSteps
from spec.steps import step_property

RUNNING = dict(ids=(1, 2, 3), master=1, master_epoch=4, members={1, 2}, ss_epoch=6)
T = 20_000  # when the judged step happens


class Node:
    """One controller node fed to a fresh checker."""

    def __init__(self, active: bool = True, m=None):
        self.steps = ControllerSteps("rocketmq-5.1")
        self.metadata = metadata(**RUNNING) if m is None else m
        self.active = active
        self.calls = 0
        self.found = self.steps.check(StepEvent("c1", 0, BOOT, view=self.view()))

    def view(self, decisions=(), metadata_=None) -> ControllerNodeView:
        return ControllerNodeView("c1", self.active, 1, 0, metadata_ or self.metadata, tuple(decisions))

    def beat(self, broker_id: int, at: int, epoch: int = 1, max_offset: int = 100) -> None:
        hb = BrokerHeartbeat(CLUSTER, NAME, addr(broker_id), broker_id, epoch, max_offset, max_offset)
        self.found += self.steps.check(StepEvent("c1", at, MESSAGE, addr(broker_id), hb, self.view()))

    def call(self, request, at: int = T, src: str = "b1") -> int:
        """Deliver a call (answered later, by ``step``)."""
        self.calls += 1
        self.found += self.steps.check(StepEvent("c1", at, MESSAGE, src, ControllerCall(self.calls, request), self.view()))
        return self.calls

    def step(self, decisions=(), outputs=(), after=None, at: int = T) -> list:
        if after is not None:
            self.metadata = after
        self.found += self.steps.check(StepEvent("c1", at, TICK, view=self.view(decisions), outputs=tuple(outputs)))
        return sorted({v.property for v in self.found})


def table(*beats) -> HeartbeatTable:
    """The table of heartbeats (broker id, at) as the spec records them."""
    t = HeartbeatTable()
    for broker_id, at in beats:
        t = R51.on_broker_heartbeat(t, BrokerHeartbeat(CLUSTER, NAME, addr(broker_id), broker_id, 1, 100, 100), at)
    return t


def decided(request, before, live, trigger="call", result=None):
    """The spec's decision (or ``result`` instead), as a node reports it."""
    result = result or R51.handle(before, request, live)
    return ControllerDecision(API_OF_REQUEST[type(request)], trigger, request, result.response, tuple(result.events),
                              before, R51.apply(before, result.events), live)


def answer(call_id, response, dst="b1"):
    return Message("c1", dst, ControllerAnswer(call_id, response))


def notify(response, dst):
    return Message("c1", dst, NotifyBrokerRoleChanged(NAME, response.master_broker_id, response.master_address,
                                                      response.master_epoch, response.sync_state_set_epoch,
                                                      frozenset(response.sync_state_set)))


def sp(*procedures):
    return sorted(step_property(p) for p in procedures)


def test_every_procedure_is_a_property():
    assert PROPERTIES == tuple(step_property(p) for p in PROCEDURES)
    assert set(API_OF_REQUEST.values()) < set(PROCEDURES)


# ------------------------------------------------------------------ controller_not_leader

def _not_leader_answer(node, response=None, live=None, active_after=None):
    request = GetReplicaInfoRequest(NAME)
    call_id = node.call(request)
    response = response or controller_not_leader(request).response
    d = ControllerDecision("get_replica_info", "call", request, response, (), node.metadata, node.metadata, live)
    if active_after is not None:
        node.active = active_after
    return node.step([d], [answer(call_id, response)])


@pytest.mark.parametrize("outcome, active, response, live, violated", [
    ("inactive_answers_not_leader", False, None, None, []),
    ("inactive_serves_a_read", False, R51.handle(metadata(**RUNNING), GetReplicaInfoRequest(NAME), None).response,
     None, sp("controller_not_leader")),
    ("inactive_decides_as_leader", False, R51.handle(metadata(**RUNNING), GetReplicaInfoRequest(NAME), None).response,
     HeartbeatLiveness(HeartbeatTable(), T), sp("controller_not_leader")),
    ("active_answers_not_leader", True, None, None, sp("controller_not_leader")),
])
def test_controller_not_leader(outcome, active, response, live, violated):
    assert _not_leader_answer(Node(active=active), response, live) == violated


# ------------------------------------------------------------------ the APIs, with liveness rebuilt


def _failover(node, heard_from_2: bool):
    """Master 1 is dead; 2 heartbeats (or not); a broker asks electMaster for itself (2)."""
    node.beat(1, 0)
    if heard_from_2:
        node.beat(2, T - 1000)
    return ElectMasterRequest.of_broker_trigger(CLUSTER, NAME, 2)


@pytest.mark.parametrize("outcome, heard_from_2, notified, violated", [
    ("elects_the_live_member_and_notifies_it", True, ("2",), []),
    ("elects_a_member_it_never_heard_from", False, ("2",), sp("elect_master")),
    ("notifies_nobody", True, (), sp("elect_master")),
    ("notifies_a_dead_broker_only", True, ("3",), sp("elect_master")),
    # the live member and the dead old master too: upstream notifies active brokers only
    ("notifies_a_dead_member_too", True, ("2", "1"), sp("elect_master")),
])
def test_elect_master(outcome, heard_from_2, notified, violated):
    node = Node()
    request = _failover(node, heard_from_2)
    call_id = node.call(request)
    claimed = HeartbeatLiveness(table((1, 0), (2, T - 1000)), T)  # what the node says it judged by
    d = decided(request, node.metadata, claimed)
    assert d.response.code == RC.SUCCESS and d.response.master_broker_id == 2
    outputs = [answer(call_id, d.response)] + [notify(d.response, addr(int(b))) for b in notified]
    assert node.step([d], outputs, after=d.after) == violated


ALTER = AlterSyncStateSetRequest(NAME, 1, 4, frozenset({1, 2, 3}), 6)


@pytest.mark.parametrize("outcome, heard, request_, violated", [
    ("expands_to_live_members", (1, 2, 3), ALTER, []),
    ("expands_to_a_dead_member", (1, 2), ALTER, sp("alter_sync_state_set")),
    ("ignores_a_stale_sync_state_set_epoch", (1, 2, 3), attrs.evolve(ALTER, sync_state_set_epoch=5),
     sp("alter_sync_state_set")),
])
def test_alter_sync_state_set(outcome, heard, request_, violated):
    node = Node()
    for b in heard:
        node.beat(b, T - 500)
    call_id = node.call(request_)
    live = HeartbeatLiveness(table(*((b, T - 500) for b in (1, 2, 3))), T)
    # the node accepts, as if every member lived and the epochs matched
    accepted = R51.handle(node.metadata, attrs.evolve(request_, sync_state_set_epoch=6), live)
    assert accepted.code == RC.SUCCESS
    d = decided(request_, node.metadata, live, result=accepted)
    assert node.step([d], [answer(call_id, d.response)], after=d.after) == violated


# ------------------------------------------------------------------ apply_event, decisions on unknown metadata


@pytest.mark.parametrize("outcome, tamper, violated", [
    ("after_is_the_events_applied", lambda d: d, []),
    ("after_keeps_the_master_epoch", lambda d: attrs.evolve(d, after=metadata(**{**RUNNING, "master": 2, "members": {2},
                                                                                 "ss_epoch": 7})),
     sp("apply_event")),
    ("decided_on_metadata_never_held", lambda d: attrs.evolve(d, before=metadata(**{**RUNNING, "ss_epoch": 9})),
     sp("elect_master")),
])
def test_apply_event_and_the_metadata_decided_on(outcome, tamper, violated):
    node = Node()
    request = _failover(node, True)
    call_id = node.call(request)
    d = tamper(decided(request, node.metadata, HeartbeatLiveness(table((1, 0), (2, T - 1000)), T)))
    assert node.step([d], [answer(call_id, d.response), notify(d.response, addr(2))], after=d.after) == violated


# ------------------------------------------------------------------ trigger_elect_master


def _scan_tries(node, trigger, count, live_ids):
    live = HeartbeatLiveness(table(*((b, T - 500) for b in live_ids)), T)
    request, before, out = ElectMasterRequest.of_controller_trigger(NAME), node.metadata, []
    for _ in range(count):
        d = decided(request, before, live, trigger)
        out.append(d)
        before = d.after
    return out


@pytest.mark.parametrize("outcome, live_ids, tries, violated", [
    ("reelects_a_dead_master", (2,), 1, []),
    ("reelects_while_the_master_lives", (1, 2), 1, sp("trigger_elect_master")),
    ("three_failed_tries", (3,), 3, []),  # 3 lives but is not in the SyncStateSet
    ("gives_up_after_one_failed_try", (3,), 1, sp("trigger_elect_master")),
])
def test_trigger_elect_master(outcome, live_ids, tries, violated):
    node = Node()
    for b in live_ids:
        node.beat(b, T - 500)
    ds = _scan_tries(node, "reelect_scan", tries, live_ids)
    notes = [notify(d.response, addr(2)) for d in ds if d.response.code == RC.SUCCESS]
    assert node.step(ds, notes, after=ds[-1].after) == violated


# ------------------------------------------------------------------ answers


@pytest.mark.parametrize("outcome, copies, answers, reply, violated", [
    ("answered_with_the_decision", 1, 1, "decided", []),
    ("duplicated_call_answered_twice", 2, 2, "decided", []),
    ("answered_twice_once_called", 1, 2, "decided", sp("get_replica_info")),
    ("answered_otherwise_than_decided", 1, 1, "other", sp("get_replica_info")),
])
def test_answers(outcome, copies, answers, reply, violated):
    node = Node()
    request = GetReplicaInfoRequest(NAME)
    for _ in range(copies):
        node.found += node.steps.check(StepEvent("c1", T, MESSAGE, "b1", ControllerCall(7, request), node.view()))
    d = decided(request, node.metadata, HeartbeatLiveness(HeartbeatTable(), T))
    response = d.response if reply == "decided" else attrs.evolve(d.response, master_epoch=3)
    assert node.step([d] * answers, [answer(7, response)] * answers) == violated


def test_an_answer_to_no_call_is_charged_to_its_api():
    node = Node()
    response = R51.handle(node.metadata, GetReplicaInfoRequest(NAME), None).response
    assert node.step([], [answer(99, response)]) == sp("get_replica_info")


def test_a_reply_without_a_reported_decision_is_judged_on_the_metadata_held():
    node = Node()
    request = GetReplicaInfoRequest(NAME)
    good = R51.handle(node.metadata, request, None).response
    call_id = node.call(request)
    assert node.step([], [answer(call_id, good)]) == []
    call_id = node.call(request)
    assert node.step([], [answer(call_id, attrs.evolve(good, master_broker_id=3))]) == sp("get_replica_info")


def test_a_broker_back_after_its_entry_expired_may_be_fresh_or_updated():
    """The expiry scan's instant is the implementation's: a broker that heartbeats again
    after its entry expired has either a fresh entry (confirmOffset 0, its epoch and
    offset) or the old one updated (epoch and offset kept unless they grew)."""
    node = Node()
    node.beat(2, 0, epoch=5, max_offset=900)
    node.beat(2, 15_000, epoch=4, max_offset=100)  # expired at 10 s; scanned or not
    tables = node.steps.nodes["c1"].tables_at(15_000)
    kept = {(t.entries[k].epoch, t.entries[k].max_offset) for t in tables for k in t.entries}
    assert kept == {(5, 900), (4, 100)}


def test_elect_event_without_winner_is_judged_too():
    """A controller-triggered electMaster with nobody to elect records the master as gone."""
    node = Node()
    ds = _scan_tries(node, "expiry_scan", 3, ())
    assert [d.response.code for d in ds] == [RC.CONTROLLER_MASTER_NOT_AVAILABLE] * 3
    assert all(e == ElectMasterEvent(NAME, False) for d in ds for e in d.events)
    node.beat(1, 0)  # the master's last heartbeat: it expired at 10 s
    assert node.step(ds, (), after=ds[-1].after) == []


def test_a_registration_at_a_heartbeats_instant_may_have_come_after_it():
    """A broker's heartbeat and its registration reach the controller at one instant: either
    may come first. rmqha's reference counts a registration as a heartbeat (without the
    broker's priority), so a table where it came last is one the node may have judged by
    (seed 5637 of the default controller search: a false step-conformance:elect_master)."""
    from spec.controller.records import RegisterBrokerRequest
    node = Node(m=metadata(ids=(1, 2, 3), master=1, master_epoch=4, members={1, 2, 3}, ss_epoch=6))
    for broker_id, priority in ((3, 2), (2, 1)):  # 2 is preferred by its priority (lower wins)
        beat = BrokerHeartbeat(CLUSTER, NAME, addr(broker_id), broker_id, 1, 100, 100, election_priority=priority)
        node.found += node.steps.check(StepEvent("c1", T - 10, MESSAGE, addr(broker_id), beat, node.view()))
    register = RegisterBrokerRequest(CLUSTER, NAME, addr(2), 2)
    call_id = node.call(register, at=T - 10, src="b2")
    live = node.steps.nodes["c1"].tables_at(T - 10)[-1]
    reg = decided(register, node.metadata, HeartbeatLiveness(live, T - 10))
    assert reg.response.code == RC.SUCCESS
    assert node.step([reg], [answer(call_id, reg.response, dst="b2")], at=T - 10) == []
    # the node's table: 2's registration after its heartbeat, so 2 has the default priority
    registered = R51.on_broker_heartbeat(live, BrokerHeartbeat(CLUSTER, NAME, addr(2), 2), T - 10)
    request = ElectMasterRequest.of_broker_trigger(CLUSTER, NAME, 3)
    call_id = node.call(request)
    d = decided(request, node.metadata, HeartbeatLiveness(registered, T))
    assert d.response.master_broker_id == 3  # (with 2's heartbeat last, 2 would win)
    outputs = [answer(call_id, d.response, dst="b1")] + [notify(d.response, addr(b)) for b in (2, 3)]
    assert node.step([d], outputs, after=d.after) == []


def test_a_registration_after_the_entry_expired_may_make_a_fresh_entry():
    """rmqha's reference counts a registration as a heartbeat; a broker registering again
    after its entry expired has either a fresh entry, without the epoch and offsets of its
    last heartbeat (the expiry scan removed the old one first), or the old one updated
    (seed 40021 of the default controller search from 40000: a false
    step-conformance:elect_master after every broker re-registered)."""
    from spec.controller.records import RegisterBrokerRequest
    node = Node()
    node.beat(2, 0, epoch=5, max_offset=900)
    at = 15_000  # 2's entry expired at 10 s; scanned away or not
    register = RegisterBrokerRequest(CLUSTER, NAME, addr(2), 2)
    call_id = node.call(register, at=at, src="b2")
    reg = decided(register, node.metadata, HeartbeatLiveness(node.steps.nodes["c1"].tables_at(at)[-1], at))
    assert node.step([reg], [answer(call_id, reg.response, dst="b2")], at=at) == []
    lives = node.steps._livenesses(node.steps.nodes["c1"], at)
    identity = next(iter(lives[0].table.entries))
    seen = {(live.table.entries[identity].epoch, live.table.entries[identity].max_offset, live.is_alive(CLUSTER, NAME, 2))
            for live in lives}
    assert seen == {(5, 900, False), (5, 900, True), (-1, -1, True)}
