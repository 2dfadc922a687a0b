"""Role changes only on a newer epoch, fencing until the role is confirmed, the poll, the registration flow."""
import pytest

from spec.broker.records import BrokerRoleState, Role
from spec.broker.register import BrokerRegistrationState, RegisterState, next_request, on_reply
from spec.broker.register import on_restart as registration_restart
from spec.broker.role import (
    PollOutcome,
    RoleOutcome,
    change_broker_role,
    on_elect_reply,
    on_register_reply,
    on_replica_info,
    on_restart,
)
from spec.controller.records import (
    ApplyBrokerIdRequest,
    ApplyBrokerIdResponse,
    ElectMasterResponse,
    GetNextBrokerIdRequest,
    GetNextBrokerIdResponse,
    GetReplicaInfoResponse,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
    ResponseCode as RC,
    SyncStateSet,
)

SLAVE_2_AT_4 = BrokerRoleState(2, Role.SLAVE, 4, 1, "a1", fenced=False, registered=True)


@pytest.mark.parametrize(
    "master,epoch,outcome,role,same_master",
    [
        (None, 9, RoleOutcome.NO_MASTER, Role.SLAVE, False),
        (3, 4, RoleOutcome.IGNORED_STALE_EPOCH, Role.SLAVE, False),
        (3, 3, RoleOutcome.IGNORED_STALE_EPOCH, Role.SLAVE, False),
        (2, 5, RoleOutcome.CHANGE_TO_MASTER, Role.MASTER, False),
        (3, 5, RoleOutcome.CHANGE_TO_SLAVE, Role.SLAVE, False),
        (1, 5, RoleOutcome.CHANGE_TO_SLAVE, Role.SLAVE, True),
    ],
    ids=["no-master", "same-epoch", "older-epoch", "to-master", "to-slave", "same-master-new-epoch"],
)
def test_change_broker_role_table(master, epoch, outcome, role, same_master):
    decision = change_broker_role(SLAVE_2_AT_4, master, f"a{master}", epoch, 7, frozenset({2, 3}))
    assert (decision.outcome, decision.state.role, decision.same_master) == (outcome, role, same_master)
    if outcome in (RoleOutcome.CHANGE_TO_MASTER, RoleOutcome.CHANGE_TO_SLAVE):
        assert (decision.state.master_epoch, decision.state.master_broker_id) == (epoch, master)
    else:
        assert decision.state == SLAVE_2_AT_4
    # a new master adopts the controller's set at the controller's epoch
    assert decision.sync_state_set == (({2, 3}, 7) if outcome is RoleOutcome.CHANGE_TO_MASTER else None)


def test_restart_fences_and_forgets_the_role():
    restarted = on_restart(BrokerRoleState(1, Role.MASTER, 4, 1, "a1", fenced=False, registered=True))
    assert restarted == BrokerRoleState(1) and restarted.fenced and not restarted.writable


def test_register_reply_with_master_unfences():
    response = RegisterBrokerResponse(RC.SUCCESS, None, 1, "a1", 4, 6, SyncStateSet({1, 2}, 6))
    as_master = on_register_reply(BrokerRoleState(1), response)
    assert (as_master.outcome, as_master.state.writable, as_master.sync_state_set) == (RoleOutcome.CHANGE_TO_MASTER, True, ({1, 2}, 6))
    as_slave = on_register_reply(BrokerRoleState(2), response)
    assert (as_slave.outcome, as_slave.state.fenced, as_slave.state.role) == (RoleOutcome.CHANGE_TO_SLAVE, False, Role.SLAVE)


def test_register_reply_without_master_stays_fenced_and_asks_election():
    decision = on_register_reply(BrokerRoleState(2), RegisterBrokerResponse(RC.SUCCESS, sync_state_set=SyncStateSet({1}, 3)))
    assert decision.outcome is RoleOutcome.NO_MASTER and decision.state.registered and decision.state.fenced
    failed = on_register_reply(BrokerRoleState(2), RegisterBrokerResponse(RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED))
    assert failed.outcome is RoleOutcome.NO_MASTER and not failed.state.registered


def test_5_0_register_reply_gives_the_assigned_id():
    decision = on_register_reply(BrokerRoleState(None), RegisterBrokerResponse(RC.SUCCESS, 1, 1, "a1", 1, 1, SyncStateSet({1}, 1)))
    assert (decision.state.broker_id, decision.outcome, decision.state.writable) == (1, RoleOutcome.CHANGE_TO_MASTER, True)


@pytest.mark.parametrize(
    "response,outcome,writable",
    [
        (ElectMasterResponse(RC.SUCCESS, 2, "a2", 1, 1, {2}), RoleOutcome.CHANGE_TO_MASTER, True),
        (ElectMasterResponse(RC.CONTROLLER_MASTER_STILL_EXIST, 1, "a1", 4, 6, {1, 2}), RoleOutcome.CHANGE_TO_SLAVE, False),
        (ElectMasterResponse(RC.CONTROLLER_ELECT_MASTER_FAILED), RoleOutcome.NO_MASTER, False),
    ],
    ids=["elected", "master-still-exists", "failed"],
)
def test_elect_reply(response, outcome, writable):
    registered = BrokerRoleState(2, registered=True)
    decision = on_elect_reply(registered, response)
    assert (decision.outcome, decision.state.writable) == (outcome, writable)
    assert decision.state.fenced == (outcome is RoleOutcome.NO_MASTER)


MASTER_1_AT_4 = BrokerRoleState(1, Role.MASTER, 4, 1, "a1", fenced=False, registered=True)


@pytest.mark.parametrize(
    "state,response,outcome",
    [
        (SLAVE_2_AT_4, GetReplicaInfoResponse(RC.CONTROLLER_BROKER_METADATA_NOT_EXIST), PollOutcome.RE_REGISTER),
        (SLAVE_2_AT_4, GetReplicaInfoResponse(RC.CONTROLLER_NOT_LEADER), PollOutcome.NOTHING),
        (SLAVE_2_AT_4, GetReplicaInfoResponse(RC.SUCCESS, 3, "a3", 5, SyncStateSet({3}, 8)), PollOutcome.CHANGE_ROLE),
        (SLAVE_2_AT_4, GetReplicaInfoResponse(RC.SUCCESS, None, None, 5, SyncStateSet({1, 2}, 7)), PollOutcome.ELECT_SELF),
        (SLAVE_2_AT_4, GetReplicaInfoResponse(RC.SUCCESS, 1, "a1", 4, SyncStateSet({1, 2}, 7)), PollOutcome.NOTHING),
        (MASTER_1_AT_4, GetReplicaInfoResponse(RC.SUCCESS, 1, "a1", 4, SyncStateSet({1, 2}, 7)), PollOutcome.APPLY_SYNC_STATE_SET),
        (MASTER_1_AT_4, GetReplicaInfoResponse(RC.SUCCESS, 1, "a1", 3, SyncStateSet({1}, 2)), PollOutcome.NOTHING),
    ],
    ids=["re-register", "error", "newer-master", "newer-no-master", "same-epoch-slave", "same-epoch-master", "older-epoch"],
)
def test_replica_info_poll(state, response, outcome):
    decision = on_replica_info(state, response)
    assert decision.outcome is outcome
    if outcome is PollOutcome.CHANGE_ROLE:
        assert decision.role.outcome is RoleOutcome.CHANGE_TO_SLAVE and decision.role.state.master_epoch == 5
    if outcome is PollOutcome.APPLY_SYNC_STATE_SET:
        assert decision.sync_state_set == ({1, 2}, 7)


# ----------------------------------------------------------------- registration flow


def fresh():
    return BrokerRegistrationState("c1", "broker-a", "10.0.0.2:1")


def test_registration_happy_path():
    s = fresh()
    assert next_request(s) == GetNextBrokerIdRequest("c1", "broker-a")
    s = on_reply(s, GetNextBrokerIdResponse(RC.SUCCESS, 2), now=77)
    assert (s.state, s.temp_broker_id, s.temp_register_check_code) == (RegisterState.CREATE_TEMP_METADATA_FILE_DONE, 2, "10.0.0.2:1;77")
    assert next_request(s) == ApplyBrokerIdRequest("c1", "broker-a", 2, "10.0.0.2:1;77")
    s = on_reply(s, ApplyBrokerIdResponse(RC.SUCCESS), now=78)
    assert (s.state, s.broker_id, s.temp_broker_id) == (RegisterState.CREATE_METADATA_FILE_DONE, 2, None)
    assert next_request(s) == RegisterBrokerRequest("c1", "broker-a", "10.0.0.2:1", 2)
    s = on_reply(s, RegisterBrokerResponse(RC.SUCCESS), now=79)
    assert s.state is RegisterState.REGISTERED and next_request(s) is None


def test_apply_failure_deletes_the_temp_file_and_starts_over():
    s = on_reply(fresh(), GetNextBrokerIdResponse(RC.SUCCESS, 2), now=1)
    s = on_reply(s, ApplyBrokerIdResponse(RC.CONTROLLER_BROKER_ID_INVALID), now=2)
    assert (s.state, s.temp_broker_id, s.temp_register_check_code) == (RegisterState.INITIAL, None, None)


def test_failed_replies_retry_the_same_step():
    s = on_reply(fresh(), GetNextBrokerIdResponse(RC.CONTROLLER_NOT_LEADER), now=1)
    assert s == fresh()
    done = BrokerRegistrationState("c1", "broker-a", "x", RegisterState.CREATE_METADATA_FILE_DONE, broker_id=2)
    assert on_reply(done, RegisterBrokerResponse(RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED), now=1) == done
    with pytest.raises(ValueError, match="does not answer"):
        on_reply(fresh(), RegisterBrokerResponse(RC.SUCCESS), now=1)


def test_restart_resumes_from_the_durable_files():
    with_meta = BrokerRegistrationState("c1", "a", "x", RegisterState.REGISTERED, broker_id=2)
    assert registration_restart(with_meta).state is RegisterState.CREATE_METADATA_FILE_DONE
    with_temp = BrokerRegistrationState("c1", "a", "x", RegisterState.INITIAL, temp_broker_id=3, temp_register_check_code="x;1")
    assert registration_restart(with_temp).state is RegisterState.CREATE_TEMP_METADATA_FILE_DONE
    assert registration_restart(fresh()).state is RegisterState.INITIAL
