"""confirmOffset, consume-queue bound, queue offsets, write admission and acknowledgement."""
import pytest

from spec.broker.confirm_offset import (
    ConfirmOutcome,
    compute_master_confirm_offset,
    dispatch_end,
    recovered_dispatch_end,
    slave_confirm_offset,
)
from spec.broker.consume import assign_queue_offset, next_queue_offsets_after_recovery, visible_entries
from spec.broker.records import BrokerHAConfig, BrokerRoleState, LogEntry, PutMessageStatus, Role
from spec.broker.write import ALL_ACK_IN_SYNC_STATE_SET, ReplicationOutcome, check_write_admission, replication_status

MASTER = 1

CONFIRM_CASES = [
    ("alone", 1000, {1}, {}, 7, ConfirmOutcome.COMPUTED, 1000),
    ("min-of-members", 1000, {1, 2, 3}, {2: 800, 3: 900}, 7, ConfirmOutcome.COMPUTED, 800),
    ("unconnected-member-keeps", 1000, {1, 2, 3}, {2: 800}, 7, ConfirmOutcome.MEMBER_NOT_CONNECTED, 7),
    ("unreported-ack-keeps", 1000, {1, 2}, {2: -1}, 7, ConfirmOutcome.MEMBER_NOT_CONNECTED, 7),
    ("zero-ack-counts", 1000, {1, 2}, {2: 0}, 7, ConfirmOutcome.COMPUTED, 0),
    ("non-member-ignored", 1000, {1, 2}, {2: 900, 4: 10}, 7, ConfirmOutcome.COMPUTED, 900),
    ("ack-past-max-capped", 1000, {1, 2}, {2: 1200}, 7, ConfirmOutcome.COMPUTED, 1000),
]


@pytest.mark.parametrize("case_id,max_offset,members,acks,current,outcome,value", CONFIRM_CASES, ids=[c[0] for c in CONFIRM_CASES])
def test_master_confirm_offset_table(case_id, max_offset, members, acks, current, outcome, value):
    decision = compute_master_confirm_offset(max_offset, frozenset(members), MASTER, acks, current)
    assert (decision.outcome, decision.confirm_offset) == (outcome, value)


def test_slave_confirm_offset_and_dispatch_bounds():
    assert slave_confirm_offset(900, 800) == 800 and slave_confirm_offset(700, 800) == 700
    assert dispatch_end(900, 1000) == 900 and dispatch_end(1200, 1000) == 1000
    assert recovered_dispatch_end(900, 1000) == 900


LOG = (
    LogEntry("m0", 0, 100, "q", 0),
    LogEntry("m1", 100, 200, "q", 1),
    LogEntry("n0", 200, 300, "r", 0),
    LogEntry("m2", 300, 400, "q", 2),
)


def test_visible_entries_end_at_or_below_the_bound():
    assert [e.msg_id for e in visible_entries(LOG, 300)] == ["m0", "m1", "n0"]
    assert visible_entries(LOG, 99) == ()


def test_queue_offsets_after_recovery_follow_every_message_in_the_log():
    # m2 lies past confirmOffset 200: still numbered
    offsets = next_queue_offsets_after_recovery(LOG, confirm_offset=200)
    assert offsets == {"q": 3, "r": 1}
    offset, offsets = assign_queue_offset(offsets, "q")
    assert (offset, offsets["q"]) == (3, 4)
    assert assign_queue_offset({}, "new") == (0, {"new": 1})


MASTER_ROLE = BrokerRoleState(1, Role.MASTER, 3, 1, "a", fenced=False)
ADMISSION_CASES = [
    ("fenced", BrokerRoleState(1, Role.MASTER, 3, 1, "a", fenced=True), {1, 2}, BrokerHAConfig(), "broker_not_writable", PutMessageStatus.SERVICE_NOT_AVAILABLE, 0),
    ("slave", BrokerRoleState(2, Role.SLAVE, 3, 1, "a", fenced=False), {1, 2}, BrokerHAConfig(), "broker_not_writable", PutMessageStatus.SERVICE_NOT_AVAILABLE, 0),
    ("master-without-sync-state-set", MASTER_ROLE, None, BrokerHAConfig(), "broker_not_writable", PutMessageStatus.SERVICE_NOT_AVAILABLE, 0),
    ("fenced-before-min-isr", BrokerRoleState(1, Role.NONE), {1}, BrokerHAConfig(min_in_sync_replicas=2), "broker_not_writable", PutMessageStatus.SERVICE_NOT_AVAILABLE, 0),
    ("too-few-in-sync", MASTER_ROLE, {1}, BrokerHAConfig(min_in_sync_replicas=2), "in_sync_replicas_not_enough", PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH, 0),
    ("enough-in-sync", MASTER_ROLE, {1, 2}, BrokerHAConfig(min_in_sync_replicas=2, in_sync_replicas=2), "admitted", None, 2),
    ("all-ack", MASTER_ROLE, {1, 2}, BrokerHAConfig(all_ack_in_sync_state_set=True, in_sync_replicas=2), "admitted", None, ALL_ACK_IN_SYNC_STATE_SET),
    ("default", MASTER_ROLE, {1}, BrokerHAConfig(), "admitted", None, 1),
]


@pytest.mark.parametrize("case_id,role,members,config,check,status,need", ADMISSION_CASES, ids=[c[0] for c in ADMISSION_CASES])
def test_write_admission_table(case_id, role, members, config, check, status, need):
    decision = check_write_admission(role, None if members is None else frozenset(members), config)
    assert (decision.check, decision.status, decision.need_ack_nums, decision.admitted) == (check, status, need, status is None)


ALL = ALL_ACK_IN_SYNC_STATE_SET
REPLICATION_CASES = [
    ("all-ack-every-member", ALL, {1, 2, 3}, {2: 100, 3: 120}, 0, ReplicationOutcome.PUT_OK),
    ("all-ack-one-short", ALL, {1, 2, 3}, {2: 100, 3: 99}, 0, ReplicationOutcome.WAITING),
    ("all-ack-member-unconnected", ALL, {1, 2, 3}, {2: 100}, 0, ReplicationOutcome.WAITING),
    ("all-ack-non-member-irrelevant", ALL, {1, 2}, {2: 100, 4: 0}, 0, ReplicationOutcome.PUT_OK),
    ("all-ack-master-alone", ALL, {1}, {}, 0, ReplicationOutcome.PUT_OK),
    ("all-ack-timeout", ALL, {1, 2}, {2: 50}, 3_000, ReplicationOutcome.FLUSH_SLAVE_TIMEOUT),
    ("one-replica-no-wait", 1, {1, 2}, {}, 0, ReplicationOutcome.PUT_OK),
    ("two-replicas-any-connection", 2, {1}, {4: 100}, 0, ReplicationOutcome.PUT_OK),
    ("three-replicas-short", 3, {1, 2, 3}, {2: 100, 3: 10}, 2_999, ReplicationOutcome.WAITING),
    ("three-replicas-timeout", 3, {1, 2, 3}, {2: 100, 3: 10}, 3_000, ReplicationOutcome.FLUSH_SLAVE_TIMEOUT),
]


@pytest.mark.parametrize("case_id,need,members,acks,now,outcome", REPLICATION_CASES, ids=[c[0] for c in REPLICATION_CASES])
def test_replication_status_table(case_id, need, members, acks, now, outcome):
    assert replication_status(need, 100, frozenset(members), MASTER, acks, now, deadline=3_000) is outcome


def test_finding_note_rule_lets_confirm_offset_pass_a_reconnecting_member():
    """The note's rule (upstream HEAD too) skips acks <= 0, so while an in-sync member has
    a fresh connection (no ack yet) confirmOffset moves past that member's log and the
    note's own invariant fails. The spec keeps the value instead; the note's rule is the
    mutant confirm-offset-skips-unacked-member (docs/controller.md, "confirmOffset")."""
    from reference.mutants_controller import broker_rules
    from spec.invariants.controller import confirm_offset_bounded

    members, acks, logs = frozenset({1, 2, 3}), {2: -1, 3: 1000}, {2: 900, 3: 1000}
    decision = compute_master_confirm_offset(1000, members, MASTER, acks, 900)
    assert (decision.outcome, decision.confirm_offset) == (ConfirmOutcome.MEMBER_NOT_CONNECTED, 900)
    assert confirm_offset_bounded("A", decision.confirm_offset, 1000, logs) == []
    note_rule = broker_rules("confirm-offset-skips-unacked-member").compute_master_confirm_offset
    decision = note_rule(1000, members, MASTER, acks, 900)
    assert decision.confirm_offset == 1000
    assert [v.invariant for v in confirm_offset_bounded("A", decision.confirm_offset, 1000, logs)] == ["confirm_offset_bounded"]