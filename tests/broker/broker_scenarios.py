"""Small failover stories told with spec calls only (controller rules + broker rules).

Each story takes the rules to use and returns the invariant violations it observed,
so a test can run it with the spec (expect none) and with a mutant (expect its
invariant). Brokers: A = id 1, B = id 2, C = id 3, of set ``broker-a``.
"""
from __future__ import annotations

import attrs

from spec.broker.records import BrokerHAConfig, BrokerRoleState, LogEntry, MasterSyncStateSet, Role, SlaveConnection
from spec.broker.rules import DEFAULT_BROKER_RULES, BrokerRules
from spec.broker.write import ReplicationOutcome
from spec.controller.heartbeat import StaticLiveness
from spec.controller.records import (
    AlterSyncStateSetRequest,
    BrokerRegistration,
    BrokerReplicaInfo,
    BrokerSetMetadata,
    ControllerMetadata,
    ElectMasterRequest,
    RegisterBrokerRequest,
    ResponseCode,
    SyncStateInfo,
)
from spec.controller.rules import DEFAULT_RULES, ControllerRules
from spec.invariants import controller as inv

CLUSTER, NAME = "c1", "broker-a"
A, B, C = 1, 2, 3
ALL_ACK = BrokerHAConfig(all_ack_in_sync_state_set=True)


def addr(broker_id: int) -> str:
    return f"10.0.0.{broker_id}:30911"


def controller_state(master, master_epoch, members, ss_epoch, ids=(A, B)) -> ControllerMetadata:
    replicas = BrokerReplicaInfo(len(ids) + 1, {i: BrokerRegistration(addr(i), f"{addr(i)};1") for i in ids})
    sync = SyncStateInfo(master, master_epoch, frozenset(members), ss_epoch)
    return ControllerMetadata({NAME: BrokerSetMetadata(CLUSTER, replicas, sync)})


def alive(*ids) -> StaticLiveness:
    return StaticLiveness.of(NAME, ids)


def msg(n: int, size: int = 100, queue: str = "q") -> LogEntry:
    return LogEntry(f"m{n}", n * size, (n + 1) * size, queue, n)


def master_role(broker_id: int, epoch: int) -> BrokerRoleState:
    return BrokerRoleState(broker_id, Role.MASTER, epoch, broker_id, addr(broker_id), fenced=False, registered=True)


def failover(controller: ControllerRules, metadata: ControllerMetadata, survivors) -> ControllerMetadata:
    """The old master is gone: the controller-triggered election among ``survivors``."""
    result, after = controller.execute(metadata, ElectMasterRequest.of_controller_trigger(NAME), alive(*survivors))
    assert result.code == ResponseCode.SUCCESS, result
    return after


def write(broker: BrokerRules, role: BrokerRoleState, view: MasterSyncStateSet, entry: LogEntry, acks, now=0, deadline=3_000):
    """A producer's write on ``role``: appended when admitted, acknowledged when PUT_OK."""
    admission = broker.admission(role, view)
    if not admission.admitted:
        return False, False
    outcome = broker.replication_status(admission.need_ack_nums, entry.end, broker.in_use(view), role.broker_id, acks, now, deadline)
    return True, outcome is ReplicationOutcome.PUT_OK


# --------------------------------------------------------------------------- stories


def expansion_reply_lost(controller=DEFAULT_RULES, broker=DEFAULT_BROKER_RULES):
    """#5663. A is master of {A}; B catches up, A proposes {A, B}; the controller accepts but
    the reply is lost. B is then partitioned while m1 is written with allAck. A dies and
    B -- in the controller's set -- is elected."""
    broker = attrs.evolve(broker, config=ALL_ACK)
    metadata = controller_state(A, 1, {A}, 1)
    view = MasterSyncStateSet({A}, 1)
    a_log, b_log = [msg(0)], [msg(0)]
    ack = broker.on_slave_ack(view.local, SlaveConnection(B, last_master_max_offset=100, last_transfer_time_ms=5), 100, 100, 100, 0, 10)
    proposal = ack.expand.new_set
    view = broker.propose(view, proposal)
    result, metadata = controller.execute(metadata, AlterSyncStateSetRequest(NAME, A, 1, proposal, 1), alive(A, B))
    assert result.code == ResponseCode.SUCCESS  # accepted; the reply never reaches A
    acked = {"m0"}
    appended, ok = write(broker, master_role(A, 1), view, msg(1), acks={B: 100}, now=3_000)
    if appended:
        a_log.append(msg(1))
    if ok:
        acked.add("m1")
    metadata = failover(controller, metadata, [B])
    assert metadata.known(NAME).sync_state.master_broker_id == B
    return inv.acknowledged_messages_present(acked, b_log)


def default_acks_failover(all_ack: bool):
    """#7017, a documented limit: with the default inSyncReplicas = 1 the master acknowledges
    alone; a failover to a lagging member of the set loses the message. allAck keeps it."""
    broker = attrs.evolve(DEFAULT_BROKER_RULES, config=BrokerHAConfig(all_ack_in_sync_state_set=all_ack))
    metadata = controller_state(A, 1, {A, B}, 2)
    view = MasterSyncStateSet({A, B}, 2)
    acked = {"m0"}
    _, ok = write(broker, master_role(A, 1), view, msg(1), acks={B: 100}, now=3_000)
    if ok:
        acked.add("m1")
    failover(DEFAULT_RULES, metadata, [B])
    return inv.acknowledged_messages_present(acked, [msg(0)])


def restarted_slave_serves_before_its_role_is_confirmed(controller=DEFAULT_RULES, broker=DEFAULT_BROKER_RULES):
    """#6508. A is master of {A, B} in masterEpoch 1; B, its slave, restarts. Until the
    controller confirms a role B must refuse writes: the controller's master of epoch 1 is A."""
    metadata = controller_state(A, 1, {A, B}, 2)
    history, found = inv.MasterEpochHistory().observe_controller(metadata)
    assert found == []
    slave = BrokerRoleState(B, Role.SLAVE, 1, A, addr(A), fenced=False, registered=True)
    b = broker.on_restart(slave)
    _, found = history.observe(NAME, b)
    return found


def consumed_past_confirm_offset(controller=DEFAULT_RULES, broker=DEFAULT_BROKER_RULES):
    """#6609. A is master of {A, B} with allAck; B acked m0 only, so confirmOffset is 100.
    A restarts, is confirmed master again, rebuilds its consume queue; consumers read. Then
    A dies for good and B is elected."""
    metadata = controller_state(A, 1, {A, B}, 2)
    a_log = [msg(0), msg(1)]
    confirm = 100  # recovered from the checkpoint
    end = broker.recovered_dispatch_end(confirm, a_log[-1].end)
    consumed = {e.msg_id for e in a_log if e.end <= end}
    failover(controller, metadata, [B])
    return inv.consumed_messages_present(consumed, [msg(0)])


def queue_offsets_after_restart(broker=DEFAULT_BROKER_RULES):
    """#7689. A restarts with m1 past its confirmOffset (not yet replicated), is master
    again, and takes a new message for the same queue."""
    a_log = [msg(0), msg(1)]
    offsets = broker.next_queue_offsets_after_recovery(a_log, 100)
    offset = offsets.get("q", 0)
    a_log.append(LogEntry("m-new", 200, 300, "q", offset))
    return inv.queue_offsets_unique(a_log)


def quick_master_restart(controller=DEFAULT_RULES, broker=DEFAULT_BROKER_RULES):
    """#6342. A, master of {A, B} at syncStateSetEpoch 3, restarts within the heartbeat
    timeout: the register reply names A master again, with {A, B} at epoch 3."""
    metadata = controller_state(A, 1, {A, B}, 3)
    history, _ = inv.SyncStateSetHistory().observe_controller(metadata)
    a = broker.on_restart(master_role(A, 1))
    reply = controller.handle(metadata, RegisterBrokerRequest(CLUSTER, NAME, addr(A), A), alive(A, B)).response
    decision = broker.on_register_reply(a, reply)
    members, epoch = decision.sync_state_set
    return history.check_broker(NAME, "A", members, epoch)


def shrink_check(controller=DEFAULT_RULES, broker=DEFAULT_BROKER_RULES):
    """#7219. A, master of {A, B}, runs its shrink check while B is caught up."""
    metadata = controller_state(A, 1, {A, B}, 2)
    decision = broker.shrink(frozenset({A, B}), A, {B: 19_000}, 20_000)
    if not decision.changed:
        return []
    result = controller.handle(metadata, AlterSyncStateSetRequest(NAME, A, 1, decision.new_set, 2), alive(A, B))
    assert result.code == ResponseCode.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED  # the controller refuses it
    return inv.proposal_contains_master("A", A, decision.new_set)


def confirm_offset_with_unconnected_member(broker=DEFAULT_BROKER_RULES):
    """#6662. A (max 1000) with {A, B, C}: C acked 1000, B (log end 500) lost its connection."""
    decision = broker.compute_master_confirm_offset(1000, frozenset({A, B, C}), A, {C: 1000}, 400)
    return inv.confirm_offset_bounded("A", decision.confirm_offset, 1000, {B: 500, C: 1000})


def confirm_offset_with_new_connection(broker=DEFAULT_BROKER_RULES):
    """#6728. A (max 1000) with {A, B}: B, caught up at 1000, has just reconnected (ack -1)."""
    decision = broker.compute_master_confirm_offset(1000, frozenset({A, B}), A, {B: -1}, 1000)
    return inv.confirm_offset_bounded("A", decision.confirm_offset, 1000, {B: 1000})


def confirm_offset_with_reconnecting_member(broker=DEFAULT_BROKER_RULES):
    """The note's rule. A (max 1000) with {A, B}: B (log end 900) has just reconnected (ack -1);
    confirmOffset was 900."""
    decision = broker.compute_master_confirm_offset(1000, frozenset({A, B}), A, {B: -1}, 900)
    return inv.confirm_offset_bounded("A", decision.confirm_offset, 1000, {B: 900})


def stale_notification(broker=DEFAULT_BROKER_RULES):
    """B, slave at masterEpoch 5, receives a delayed notification of masterEpoch 4."""
    history = inv.AppliedEpochHistory()
    b = BrokerRoleState(B, Role.SLAVE, 5, C, addr(C), fenced=False, registered=True)
    history, _ = history.observe("B", b)
    decision = broker.role_change(b, A, addr(A), 4, 3, frozenset({A}))
    _, found = history.observe("B", decision.state)
    return found

