"""Hypothesis properties of the broker-side rules."""
from hypothesis import given
from hypothesis import strategies as st

from spec.broker.confirm_offset import ConfirmOutcome, compute_master_confirm_offset
from spec.broker.records import BrokerRoleState, MasterSyncStateSet, Role
from spec.broker.register import BrokerRegistrationState, RegisterState, next_request, on_reply
from spec.broker.role import RoleOutcome, change_broker_role
from spec.broker.sync_state_set import apply_sync_state_set, in_use, maybe_expand, maybe_shrink, propose
from spec.broker.write import ALL_ACK_IN_SYNC_STATE_SET, ReplicationOutcome, replication_status
from spec.controller.records import (
    ApplyBrokerIdRequest,
    ApplyBrokerIdResponse,
    GetNextBrokerIdRequest,
    GetNextBrokerIdResponse,
    RegisterBrokerResponse,
    ResponseCode as RC,
)

MASTER = 1
IDS = st.integers(1, 5)
MEMBERS = st.frozensets(IDS, max_size=5).map(lambda s: s | {MASTER})
OFFSETS = st.integers(-1, 2_000)


@given(MEMBERS, st.dictionaries(IDS, st.integers(0, 40_000)), st.integers(0, 40_000))
def test_shrink_never_drops_the_master_and_only_drops_stale_members(local, table, now):
    decision = maybe_shrink(local, MASTER, table, now)
    assert MASTER in decision.new_set and decision.new_set <= local
    for member in local - {MASTER}:
        stale = member not in table or now - table[member] > 15_000
        assert (member not in decision.new_set) == stale
    assert decision.changed == (decision.new_set != local)


@given(MEMBERS, IDS, OFFSETS, OFFSETS, OFFSETS, st.booleans())
def test_expand_only_adds_the_acking_slave(local, slave, ack, confirm, start, learner):
    decision = maybe_expand(local, slave, ack, confirm, start, learner)
    if decision.new_set is not None:
        assert decision.new_set == local | {slave} and slave not in local
        assert not learner and ack >= confirm and ack >= start


@given(MEMBERS, st.integers(0, 5), st.lists(st.one_of(st.tuples(st.just("propose"), MEMBERS), st.tuples(st.just("apply"), MEMBERS, st.integers(0, 8)))))
def test_in_use_covers_local_and_every_pending_proposal(local, epoch, steps):
    state, pending = MasterSyncStateSet(local, epoch), set()
    for step in steps:
        if step[0] == "propose":
            state = propose(state, step[1])
            pending |= step[1]
        else:
            before = state
            _, state = apply_sync_state_set(state, step[1], step[2])
            if step[2] > before.local_epoch:
                pending = set()
                assert (state.local, state.local_epoch, state.proposed) == (step[1], step[2], None)
            else:
                assert state == before
        assert in_use(state) == state.local | pending


@given(OFFSETS.filter(lambda x: x >= 0), MEMBERS, st.dictionaries(IDS, OFFSETS), OFFSETS)
def test_master_confirm_offset(max_offset, members, acks, current):
    decision = compute_master_confirm_offset(max_offset, members, MASTER, acks, current)
    if any(acks.get(m, -1) < 0 for m in members - {MASTER}):
        assert (decision.outcome, decision.confirm_offset) == (ConfirmOutcome.MEMBER_NOT_CONNECTED, current)
    else:
        member_acks = [a for s, a in acks.items() if s in members]
        assert decision.confirm_offset == min([max_offset, *member_acks])
        # never past a member's acknowledged log
        assert all(decision.confirm_offset <= a for a in member_acks)


@given(MEMBERS, st.dictionaries(IDS, OFFSETS), OFFSETS, st.integers(0, 5))
def test_all_ack_put_ok_means_every_member_has_the_message(members, acks, offset, need):
    outcome = replication_status(ALL_ACK_IN_SYNC_STATE_SET, offset, members, MASTER, acks, 0, 1)
    if outcome is ReplicationOutcome.PUT_OK:
        assert all(acks.get(m, -1) >= offset for m in members - {MASTER})
    counted = replication_status(need, offset, members, MASTER, acks, 0, 1)
    if counted is ReplicationOutcome.PUT_OK and need > 1:
        assert 1 + sum(a >= offset for a in acks.values()) >= need


@given(st.integers(0, 9), st.lists(st.tuples(st.one_of(st.none(), IDS), st.integers(0, 9))))
def test_a_broker_applies_only_newer_master_epochs(start, notifications):
    state = BrokerRoleState(2, Role.SLAVE, start, 1, "a1", fenced=False, registered=True)
    for master, epoch in notifications:
        decision = change_broker_role(state, master, f"a{master}", epoch, 1, frozenset({master or 1}))
        applied = decision.outcome in (RoleOutcome.CHANGE_TO_MASTER, RoleOutcome.CHANGE_TO_SLAVE)
        assert applied == (master is not None and epoch > state.master_epoch)
        assert decision.state.master_epoch >= state.master_epoch
        state = decision.state


@given(st.lists(st.tuples(st.booleans(), IDS), max_size=12))
def test_registration_keeps_only_an_id_the_controller_accepted(replies):
    s = BrokerRegistrationState("c1", "b", "x")
    for now, (success, next_id) in enumerate(replies):
        request = next_request(s)
        if request is None:
            break
        code = RC.SUCCESS if success else RC.CONTROLLER_BROKER_ID_INVALID
        if isinstance(request, GetNextBrokerIdRequest):
            reply = GetNextBrokerIdResponse(code, next_id)
        elif isinstance(request, ApplyBrokerIdRequest):
            reply = ApplyBrokerIdResponse(code)
        else:
            reply = RegisterBrokerResponse(code)
        after = on_reply(s, reply, now)
        if isinstance(request, ApplyBrokerIdRequest) and success:
            assert after.broker_id == request.applied_broker_id
        if s.state is RegisterState.CREATE_METADATA_FILE_DONE:
            assert after.broker_id == s.broker_id  # once in the metadata file, the id never changes
        s = after
