"""alterSyncStateSet: every row of the check table, its code and the check order."""
import pytest

from controller_cases import NAME, R50, R51, alive, metadata, state_of
from spec.controller.api import ALTER_SYNC_STATE_SET_RULES
from spec.controller.checks import rule_names
from spec.controller.events import AlterSyncStateSetEvent
from spec.controller.records import AlterSyncStateSetRequest, ResponseCode as RC, SyncStateSet

# master 1 at masterEpoch 2; SyncStateSet {1, 2} at syncStateSetEpoch 3; ids 1, 2, 3, 5 registered.
BASE = dict(ids=(1, 2, 3, 5), master=1, master_epoch=2, members={1, 2}, ss_epoch=3)


def alter(members, master=1, master_epoch=2, ss_epoch=3, name=NAME):
    return AlterSyncStateSetRequest(name, master, master_epoch, frozenset(members), ss_epoch)


CASES = [
    # id, metadata overrides, request, alive ids, code, deciding row
    ("unknown-set", {}, alter({1, 3}, name="other"), (1, 2, 3), RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "broker_set_unknown"),
    ("same-set", {}, alter({1, 2}), (1, 2, 3), RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "new_set_equals_current"),
    # the equal-set check comes before the master check
    ("same-set-before-master", {"master": None}, alter({1, 2}, master=9), (1, 2), RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "new_set_equals_current"),
    ("not-master", {}, alter({2, 3}, master=2), (1, 2, 3), RC.CONTROLLER_INVALID_MASTER, "requester_not_master"),
    ("no-master-recorded", {"master": None}, alter({1, 3}), (1, 2, 3), RC.CONTROLLER_INVALID_MASTER, "requester_not_master"),
    ("master-before-epochs", {}, alter({2, 3}, master=2, master_epoch=1, ss_epoch=1), (1, 2, 3), RC.CONTROLLER_INVALID_MASTER, "requester_not_master"),
    ("stale-master-epoch", {}, alter({1, 3}, master_epoch=1), (1, 2, 3), RC.CONTROLLER_FENCED_MASTER_EPOCH, "master_epoch_differs"),
    ("future-master-epoch", {}, alter({1, 3}, master_epoch=3), (1, 2, 3), RC.CONTROLLER_FENCED_MASTER_EPOCH, "master_epoch_differs"),
    ("master-epoch-before-ss-epoch", {}, alter({1, 3}, master_epoch=1, ss_epoch=1), (1, 2, 3), RC.CONTROLLER_FENCED_MASTER_EPOCH, "master_epoch_differs"),
    ("stale-ss-epoch", {}, alter({1, 3}, ss_epoch=2), (1, 2, 3), RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, "sync_state_set_epoch_differs"),
    ("future-ss-epoch", {}, alter({1, 3}, ss_epoch=4), (1, 2, 3), RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, "sync_state_set_epoch_differs"),
    ("ss-epoch-before-members", {}, alter({1, 9}, ss_epoch=4), (1, 2, 3), RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, "sync_state_set_epoch_differs"),
    ("unregistered-member", {}, alter({1, 2, 4}), (1, 2, 3), RC.CONTROLLER_INVALID_REPLICAS, "member_not_registered"),
    ("dead-member", {}, alter({1, 3}), (1, 2), RC.CONTROLLER_BROKER_NOT_ALIVE, "member_not_alive"),
    # members are checked in ascending id: the first bad one decides
    ("dead-3-before-unregistered-4", {}, alter({1, 3, 4}), (1, 2), RC.CONTROLLER_BROKER_NOT_ALIVE, "member_not_alive"),
    ("unregistered-4-before-dead-5", {}, alter({1, 4, 5}), (1, 2, 3), RC.CONTROLLER_INVALID_REPLICAS, "member_not_registered"),
    # upstream iterates the request's HashSet<Long>: 16 (bucket 0) comes before 4, so the dead
    # registered 16 decides (2006), not the unregistered 4 (real 5.1.4 and develop answer so)
    ("dead-16-before-unregistered-4", {"ids": (1, 2, 3, 5, 16)}, alter({1, 4, 16}), (1, 2, 3),
     RC.CONTROLLER_BROKER_NOT_ALIVE, "member_not_alive"),
    # the master is a member like any other: a dead master fails the liveness check
    ("dead-master-member", {}, alter({1, 3}), (2, 3), RC.CONTROLLER_BROKER_NOT_ALIVE, "member_not_alive"),
    ("members-before-master-in-set", {}, alter({2, 4}), (1, 2, 3), RC.CONTROLLER_INVALID_REPLICAS, "member_not_registered"),
    ("master-left-out", {}, alter({2, 3}), (1, 2, 3), RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "master_not_in_new_set"),
    ("expand", {}, alter({1, 2, 3}), (1, 2, 3), RC.SUCCESS, "accepted"),
    ("shrink", {}, alter({1}), (1,), RC.SUCCESS, "accepted"),
]


@pytest.mark.parametrize("rules", [R51, R50], ids=["5.1", "5.0"])
@pytest.mark.parametrize("case_id,overrides,request_,alive_ids,code,check", CASES, ids=[c[0] for c in CASES])
def test_alter_sync_state_set_table(rules, case_id, overrides, request_, alive_ids, code, check):
    before = metadata(**{**BASE, **overrides})
    result, after = rules.execute(before, request_, alive(*alive_ids))
    assert (result.code, result.check) == (code, check)
    if code == RC.SUCCESS:
        assert result.events == (AlterSyncStateSetEvent(NAME, request_.new_sync_state_set),)
        assert result.response.new_sync_state_set_epoch == 4
        assert result.response.sync_state_set == SyncStateSet(request_.new_sync_state_set, 4)
        s = state_of(after)
        assert (s.sync_state_set, s.sync_state_set_epoch, s.master_epoch, s.master_broker_id) == (
            request_.new_sync_state_set, 4, 2, 1,
        )
    else:
        # a failure carries no epoch and no event
        assert result.events == () and after == before
        assert result.response.new_sync_state_set_epoch == 0 and result.response.sync_state_set is None


def test_every_row_of_the_table_is_exercised():
    decided = {c[5] for c in CASES} | {"member_not_registered_or_not_alive"}
    assert set(rule_names(ALTER_SYNC_STATE_SET_RULES)) <= decided


def test_two_alters_from_the_same_epoch_second_gets_fenced():
    before = metadata(**BASE)
    first, after = R51.execute(before, alter({1, 2, 3}), alive(1, 2, 3))
    second, final = R51.execute(after, alter({1}), alive(1, 2, 3))
    assert first.code == RC.SUCCESS
    assert second.code == RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH and final == after
