"""Master-side SyncStateSet: local | proposed, apply only on a newer epoch, shrink, expand, caught-up time."""
import pytest

from spec.broker.records import BrokerHAConfig, MasterSyncStateSet, SlaveConnection
from spec.broker.sync_state_set import (
    NEVER_CONNECTED,
    NOT_CAUGHT_UP,
    ApplyOutcome,
    ExpandOutcome,
    apply_sync_state_set,
    caught_up_time,
    in_use,
    maybe_expand,
    maybe_shrink,
    on_alter_sync_state_set_reply,
    on_connection_closed,
    on_slave_ack,
    propose,
    record_caught_up_time,
)
from spec.controller.records import AlterSyncStateSetResponse, ResponseCode as RC, SyncStateSet

MASTER = 1


def test_union_rule_covers_expand_and_shrink():
    local = MasterSyncStateSet({1, 2}, 3)
    assert in_use(local) == {1, 2}
    assert in_use(propose(local, {1, 2, 3})) == {1, 2, 3}  # expansion counts at once
    assert in_use(propose(local, {1})) == {1, 2}  # removal only once accepted


def test_pending_proposals_accumulate():
    state = propose(propose(MasterSyncStateSet({1}, 3), {1, 2}), {1, 3})
    assert state.proposed == {1, 2, 3} and in_use(state) == {1, 2, 3}


@pytest.mark.parametrize(
    "epoch,outcome,expected",
    [(4, ApplyOutcome.APPLIED, ({1, 3}, 4, None)), (3, ApplyOutcome.IGNORED_STALE_EPOCH, ({1, 2}, 3, {1, 2, 3})), (2, ApplyOutcome.IGNORED_STALE_EPOCH, ({1, 2}, 3, {1, 2, 3}))],
    ids=["newer", "same", "older"],
)
def test_apply_only_a_newer_sync_state_set_epoch(epoch, outcome, expected):
    state = propose(MasterSyncStateSet({1, 2}, 3), {1, 2, 3})
    got, after = apply_sync_state_set(state, frozenset({1, 3}), epoch)
    assert got is outcome and (after.local, after.local_epoch, after.proposed) == expected


def test_alter_reply_accepted_is_applied_and_rejection_keeps_the_proposal():
    state = propose(MasterSyncStateSet({1}, 3), {1, 2})
    accepted, after = on_alter_sync_state_set_reply(state, AlterSyncStateSetResponse(RC.SUCCESS, 4, SyncStateSet({1, 2}, 4)))
    assert accepted is ApplyOutcome.APPLIED and (after.local, after.local_epoch, after.proposed) == ({1, 2}, 4, None)
    # rejected (maybe an earlier alter was accepted and its reply lost): keep counting the proposal
    rejected, kept = on_alter_sync_state_set_reply(state, AlterSyncStateSetResponse(RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH))
    assert rejected is ApplyOutcome.REJECTED_PROPOSAL_KEPT and kept == state


SHRINK_CASES = [
    ("all-fresh", {1, 2, 3}, {2: 10_000, 3: 5_000}, 20_000, False, ()),
    ("stale-exactly-at-limit-kept", {1, 2}, {2: 5_000}, 20_000, False, ()),
    ("stale-past-limit", {1, 2}, {2: 4_999}, 20_000, True, ((2, NOT_CAUGHT_UP),)),
    ("never-connected", {1, 2, 3}, {2: 19_000}, 20_000, True, ((3, NEVER_CONNECTED),)),
    ("both-reasons", {1, 2, 3}, {2: 0}, 20_000, True, ((2, NOT_CAUGHT_UP), (3, NEVER_CONNECTED))),
    ("master-alone", {1}, {}, 20_000, False, ()),
    ("caught-up-non-member-ignored", {1}, {4: 0}, 20_000, False, ()),
]


@pytest.mark.parametrize("case_id,local,table,now,changed,removed", SHRINK_CASES, ids=[c[0] for c in SHRINK_CASES])
def test_shrink_table(case_id, local, table, now, changed, removed):
    decision = maybe_shrink(frozenset(local), MASTER, table, now)
    assert (decision.changed, decision.removed) == (changed, removed)
    assert decision.new_set == frozenset(local) - {m for m, _ in removed}
    assert MASTER in decision.new_set  # never the master itself


def test_shrink_limit_is_configurable():
    decision = maybe_shrink(frozenset({1, 2}), MASTER, {2: 0}, 1_001, BrokerHAConfig(ha_max_time_slave_not_catchup_ms=1_000))
    assert decision.removed == ((2, NOT_CAUGHT_UP),)


@pytest.mark.parametrize(
    "slave,changed,new_set", [(2, True, {1, 3}), (4, False, {1, 2, 3}), (MASTER, False, {1, 2, 3})], ids=["member", "non-member", "master"]
)
def test_closed_connection_proposes_removal_at_once(slave, changed, new_set):
    decision = on_connection_closed(frozenset({1, 2, 3}), MASTER, slave)
    assert (decision.changed, decision.new_set) == (changed, new_set)


@pytest.mark.parametrize(
    "conn,ack,master_max,expected",
    [
        (SlaveConnection(2, last_master_max_offset=100, last_transfer_time_ms=7), 100, 150, 7),  # caught up with the transfer
        (SlaveConnection(2, last_master_max_offset=100, last_transfer_time_ms=7), 150, 150, 99),  # equals current max: now
        (SlaveConnection(2, last_master_max_offset=100, last_transfer_time_ms=7), 99, 150, None),  # behind the transfer
        (SlaveConnection(2, last_master_max_offset=100, last_transfer_time_ms=7, is_async_learner=True), 150, 150, None),
    ],
    ids=["at-last-transfer", "at-current-max", "behind", "async-learner"],
)
def test_caught_up_time(conn, ack, master_max, expected):
    assert caught_up_time(conn, ack, master_max, now=99) == expected


def test_caught_up_time_never_goes_back():
    assert record_caught_up_time(record_caught_up_time({}, 2, 50), 2, 30) == {2: 50}


EXPAND_CASES = [
    ("member", {1, 2}, 2, 500, 100, 0, False, ExpandOutcome.ALREADY_MEMBER),
    ("learner", {1}, 2, 500, 100, 0, True, ExpandOutcome.ASYNC_LEARNER),
    ("behind-confirm", {1}, 2, 99, 100, 0, False, ExpandOutcome.BEHIND_CONFIRM_OFFSET),
    ("behind-epoch-start", {1}, 2, 150, 100, 200, False, ExpandOutcome.BEHIND_EPOCH_START),
    ("at-both-bounds", {1}, 2, 200, 200, 200, False, ExpandOutcome.EXPAND),
    ("ahead", {1, 3}, 2, 300, 100, 200, False, ExpandOutcome.EXPAND),
]


@pytest.mark.parametrize("case_id,local,slave,ack,confirm,start,learner,outcome", EXPAND_CASES, ids=[c[0] for c in EXPAND_CASES])
def test_expand_table(case_id, local, slave, ack, confirm, start, learner, outcome):
    decision = maybe_expand(frozenset(local), slave, ack, confirm, start, learner)
    assert decision.outcome is outcome
    assert decision.new_set == (frozenset(local) | {slave} if outcome is ExpandOutcome.EXPAND else None)


def test_ack_expands_only_after_passing_the_caught_up_condition():
    conn = SlaveConnection(2, last_master_max_offset=300, last_transfer_time_ms=5)
    behind = on_slave_ack(frozenset({1}), conn, 250, 300, 100, 0, now=9)
    assert (behind.caught_up_time, behind.expand) == (None, None)
    caught = on_slave_ack(frozenset({1}), conn, 300, 300, 100, 0, now=9)
    assert caught.caught_up_time == 9 and caught.expand.outcome is ExpandOutcome.EXPAND
