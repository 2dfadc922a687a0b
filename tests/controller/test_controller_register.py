"""getNextBrokerId, applyBrokerId, registerBroker (both profiles), getReplicaInfo, cleanBrokerData, NOT_LEADER."""
import attrs
import pytest

from controller_cases import CLUSTER, NAME, R50, R51, addr, alive, code, make_set, metadata, state_of
from spec.controller.api import APPLY_BROKER_ID_RULES, CLEAN_BROKER_DATA_RULES
from spec.controller.checks import rule_names
from spec.controller.events import (
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    UpdateBrokerAddressEvent,
)
from spec.controller.records import (
    EMPTY_METADATA,
    AlterSyncStateSetRequest,
    ApplyBrokerIdRequest,
    CleanBrokerDataRequest,
    ControllerConfig,
    ControllerMetadata,
    ElectMasterRequest,
    GetNextBrokerIdRequest,
    GetReplicaInfoRequest,
    RegisterBrokerRequest,
    ResponseCode as RC,
    SyncStateSet,
)
from spec.controller.rules import UnsupportedRequest
from spec.invariants import controller as inv


# ----------------------------------------------------------------- getNextBrokerId


def test_next_broker_id_of_unknown_set_is_one():
    result = R51.handle(EMPTY_METADATA, GetNextBrokerIdRequest(CLUSTER, NAME), alive())
    assert (result.code, result.response.next_broker_id, result.check, result.events) == (RC.SUCCESS, 1, "broker_set_unknown", ())


def test_next_broker_id_is_the_counter_not_max_plus_one():
    # ids 1 and 7 registered, counter at 3 (7 was applied out of order)
    m = ControllerMetadata({NAME: make_set(ids=(1, 7), next_id=3)})
    result = R51.handle(m, GetNextBrokerIdRequest(CLUSTER, NAME), alive())
    assert (result.response.next_broker_id, result.check) == (3, "next_assign_broker_id")


# ----------------------------------------------------------------- applyBrokerId

REGISTERED = dict(ids=(1, 2), master=1)
APPLY_CASES = [
    ("unknown-set-id-1", None, 1, code(1), RC.SUCCESS, "broker_set_unknown_first_id"),
    ("unknown-set-id-2", None, 2, code(2), RC.CONTROLLER_BROKER_ID_INVALID, "broker_set_unknown_other_id"),
    ("free-id", REGISTERED, 3, code(3), RC.SUCCESS, "broker_id_free"),
    ("free-id-beyond-counter", REGISTERED, 9, code(9), RC.SUCCESS, "broker_id_free"),
    ("retry-same-check-code", REGISTERED, 2, code(2), RC.SUCCESS, "broker_id_held_with_same_check_code"),
    ("held-by-another", REGISTERED, 2, code(5, 77), RC.CONTROLLER_BROKER_ID_INVALID, "broker_id_held_by_another"),
]


@pytest.mark.parametrize("case_id,meta,broker_id,check_code,code_,row", APPLY_CASES, ids=[c[0] for c in APPLY_CASES])
def test_apply_broker_id_table(case_id, meta, broker_id, check_code, code_, row):
    before = EMPTY_METADATA if meta is None else metadata(**meta)
    request = ApplyBrokerIdRequest(CLUSTER, NAME, broker_id, check_code)
    result, after = R51.execute(before, request, alive())
    assert (result.code, result.check) == (code_, row)
    if code_ != RC.SUCCESS:
        assert result.events == () and after == before
        return
    assert result.events == (ApplyBrokerIdEvent(CLUSTER, NAME, check_code.split(";")[0], broker_id, check_code),)
    replicas = after.get(NAME).replicas
    assert replicas.register_check_code(broker_id) == check_code
    if row == "broker_id_held_with_same_check_code":
        assert after == before  # the retry's event changes nothing, the counter included
    else:
        counter_before = 1 if meta is None else before.get(NAME).replicas.next_assign_broker_id
        assert replicas.next_assign_broker_id == counter_before + 1


def test_every_apply_row_is_exercised():
    assert {c[5] for c in APPLY_CASES} == set(rule_names(APPLY_BROKER_ID_RULES))


# ----------------------------------------------------------------- registerBroker 5.1


def test_register_unknown_set_and_unknown_id():
    unknown = R51.handle(EMPTY_METADATA, RegisterBrokerRequest(CLUSTER, NAME, addr(1), 1), alive())
    assert (unknown.code, unknown.check) == (RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "broker_set_unknown")
    id_unknown = R51.handle(metadata(ids=(1,)), RegisterBrokerRequest(CLUSTER, NAME, addr(4), 4), alive(1))
    assert (id_unknown.code, id_unknown.check) == (RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "broker_id_unknown")


@pytest.mark.parametrize(
    "meta,alive_ids,has_master_fields",
    [
        (dict(master=1, master_epoch=3, members={1, 2}, ss_epoch=5), (1, 2), True),
        (dict(master=1, master_epoch=3, members={1, 2}, ss_epoch=5), (2,), False),  # master dead
        (dict(master=None, master_epoch=3, members={1, 2}, ss_epoch=5), (1, 2), False),  # no master
    ],
    ids=["master-alive", "master-dead", "no-master"],
)
def test_register_reply_carries_master_only_if_alive(meta, alive_ids, has_master_fields):
    result, after = R51.execute(metadata(**meta), RegisterBrokerRequest(CLUSTER, NAME, addr(2), 2), alive(*alive_ids))
    r = result.response
    assert (result.code, result.check, result.events) == (RC.SUCCESS, "registered", ())
    assert r.sync_state_set == SyncStateSet({1, 2}, 5)  # the SyncStateSet always
    fields = (r.master_broker_id, r.master_address, r.master_epoch, r.sync_state_set_epoch)
    assert fields == ((1, addr(1), 3, 5) if has_master_fields else (None,) * 4)


def test_register_with_new_address_updates_it():
    result, after = R51.execute(metadata(), RegisterBrokerRequest(CLUSTER, NAME, "10.9.9.9:1", 2), alive(1, 2))
    assert result.events == (UpdateBrokerAddressEvent(CLUSTER, NAME, "10.9.9.9:1", 2),)
    replicas = after.get(NAME).replicas
    assert replicas.broker_address(2) == "10.9.9.9:1" and replicas.register_check_code(2) == code(2)


# ----------------------------------------------------------------- registerBroker 5.0


def test_5_0_first_registrant_becomes_master_in_register():
    result, after = R50.execute(EMPTY_METADATA, RegisterBrokerRequest(CLUSTER, NAME, addr(1)), alive())
    r = result.response
    assert (result.code, result.check) == (RC.SUCCESS, "first_registrant_becomes_master")
    assert (r.broker_id, r.master_broker_id, r.master_address, r.master_epoch, r.sync_state_set_epoch) == (1, 1, addr(1), 1, 1)
    assert result.events == (ElectMasterEvent(NAME, True, 1, cluster_name=CLUSTER, broker_address=addr(1)),)
    s = state_of(after)
    assert (s.master_broker_id, s.master_epoch, s.sync_state_set, s.sync_state_set_epoch) == (1, 1, {1}, 1)
    assert after.get(NAME).replicas.next_assign_broker_id == 2


def test_5_0_assigns_ids_by_address_while_registering():
    m = metadata(ids=(1,), master=1)
    second, m = R50.execute(m, RegisterBrokerRequest(CLUSTER, NAME, addr(2)), alive(1))
    again, m2 = R50.execute(m, RegisterBrokerRequest(CLUSTER, NAME, addr(2)), alive(1))
    third, _ = R50.execute(m2, RegisterBrokerRequest(CLUSTER, NAME, addr(3)), alive(1))
    assert (second.check, second.response.broker_id, second.response.master_broker_id) == ("master_exists", 2, 1)
    assert second.events == (ApplyBrokerIdEvent(CLUSTER, NAME, addr(2), 2, None),)
    assert (again.response.broker_id, again.events, m2) == (2, (), m)  # known address: same id, nothing to apply
    assert third.response.broker_id == 3


def test_5_0_master_exists_needs_no_liveness():
    result = R50.handle(metadata(ids=(1, 2)), RegisterBrokerRequest(CLUSTER, NAME, addr(2)), alive())
    assert (result.check, result.response.master_broker_id) == ("master_exists", 1)


@pytest.mark.parametrize(
    "registrant,unclean,code_,row,events",
    [
        (2, False, RC.SUCCESS, "elected_in_register", [ElectMasterEvent(NAME, True, 2)]),
        (3, False, RC.CONTROLLER_ELECT_MASTER_FAILED, "cannot_be_elected", []),
        (3, True, RC.SUCCESS, "elected_in_register", [ElectMasterEvent(NAME, True, 3)]),
        (4, False, RC.CONTROLLER_ELECT_MASTER_FAILED, "cannot_be_elected", [ApplyBrokerIdEvent(CLUSTER, NAME, addr(4), 4, None)]),
        (4, True, RC.SUCCESS, "elected_in_register", [ApplyBrokerIdEvent(CLUSTER, NAME, addr(4), 4, None), ElectMasterEvent(NAME, True, 4)]),
    ],
    ids=["in-set", "outside-set", "outside-set-unclean", "new-address", "new-address-unclean"],
)
def test_5_0_masterless_set(registrant, unclean, code_, row, events):
    rules = attrs.evolve(R50, config=ControllerConfig(enable_elect_unclean_master=unclean))
    before = metadata(ids=(1, 2, 3), master=None, master_epoch=2, members={1, 2}, ss_epoch=4)
    result, after = rules.execute(before, RegisterBrokerRequest(CLUSTER, NAME, addr(registrant)), alive())
    assert (result.code, result.check, list(result.events)) == (code_, row, events)
    assert result.response.broker_id == registrant
    if code_ == RC.SUCCESS:
        r = result.response
        assert (r.master_broker_id, r.master_epoch, r.sync_state_set_epoch) == (registrant, 3, 5)
        assert (state_of(after).master_broker_id, state_of(after).master_epoch) == (registrant, 3)


def test_5_0_has_no_broker_id_apis():
    for request in (GetNextBrokerIdRequest(CLUSTER, NAME), ApplyBrokerIdRequest(CLUSTER, NAME, 1, code(1))):
        with pytest.raises(UnsupportedRequest):
            R50.handle(EMPTY_METADATA, request, alive())


# ----------------------------------------------------------------- getReplicaInfo


def test_get_replica_info():
    unknown = R51.handle(EMPTY_METADATA, GetReplicaInfoRequest(NAME), alive())
    assert (unknown.code, unknown.check, unknown.response.master_broker_id) == (RC.CONTROLLER_BROKER_METADATA_NOT_EXIST, "broker_set_unknown", None)
    # no liveness filter: a dead master is reported
    known = R51.handle(metadata(master=2, master_epoch=3, members={1, 2}, ss_epoch=4), GetReplicaInfoRequest(NAME), alive())
    r = known.response
    assert (known.code, r.master_broker_id, r.master_address, r.master_epoch, r.sync_state_set) == (
        RC.SUCCESS, 2, addr(2), 3, SyncStateSet({1, 2}, 4),
    )
    none = R51.handle(metadata(master=None, members={1}), GetReplicaInfoRequest(NAME), alive())
    assert (none.response.master_broker_id, none.response.master_address) == (None, None)


# ----------------------------------------------------------------- cleanBrokerData

CLEAN_CASES = [
    ("master-recorded", metadata(), CleanBrokerDataRequest(CLUSTER, NAME), (), RC.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "master_still_recorded"),
    ("listed-alive", metadata(), CleanBrokerDataRequest(CLUSTER, NAME, {2, 3}), (3,), RC.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "listed_broker_alive"),
    ("listed-alive-unknown-set", EMPTY_METADATA, CleanBrokerDataRequest(CLUSTER, NAME, {3}), (3,), RC.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "listed_broker_alive"),
    ("masterless-whole-set", metadata(master=None, members={1}), CleanBrokerDataRequest(CLUSTER, NAME), (1,), RC.SUCCESS, "cleaned"),
    ("dead-ids", metadata(members={1, 2}), CleanBrokerDataRequest(CLUSTER, NAME, {2, 3}), (1,), RC.SUCCESS, "cleaned"),
    ("living-forced", metadata(), CleanBrokerDataRequest(CLUSTER, NAME, None, True), (1, 2, 3), RC.SUCCESS, "cleaned"),
    ("living-forced-ids-ignored", metadata(), CleanBrokerDataRequest(CLUSTER, NAME, {2}, True), (1, 2, 3), RC.SUCCESS,
     "cleaned"),
    ("unknown-set", EMPTY_METADATA, CleanBrokerDataRequest(CLUSTER, NAME), (), RC.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "broker_set_unknown"),
]


@pytest.mark.parametrize("case_id,before,request_,alive_ids,code_,row", CLEAN_CASES, ids=[c[0] for c in CLEAN_CASES])
def test_clean_broker_data_table(case_id, before, request_, alive_ids, code_, row):
    result, after = R51.execute(before, request_, alive(*alive_ids))
    assert (result.code, result.check) == (code_, row)
    if code_ != RC.SUCCESS:
        assert result.events == () and after == before
    elif request_.broker_ids_to_clean and not request_.clean_living_broker:
        assert result.events == (CleanBrokerDataEvent(NAME, request_.broker_ids_to_clean),)
        assert after.get(NAME).replicas.all_brokers() == {1} and state_of(after).sync_state_set == {1}
    else:
        assert result.events == (CleanBrokerDataEvent(NAME, None),) and after.get(NAME) is None


def test_clean_living_broker_ignores_the_id_list_as_upstream_does():
    """ReplicasInfoManager.cleanBrokerData (5.1.x and develop) parses brokerControllerIdsToClean
    only when cleanLivingBroker is off; a forced clean sends CleanBrokerDataEvent(ids=null),
    which removes the whole broker set -- even the ids that were not listed."""
    before = metadata(ids=(1, 2, 3), master=1, members={1, 2})
    result, after = R51.execute(before, CleanBrokerDataRequest(CLUSTER, NAME, {3}, True), alive(1, 2, 3))
    assert result.code is RC.SUCCESS and result.events == (CleanBrokerDataEvent(NAME, None),)
    assert after.get(NAME) is None


def test_a_master_still_holding_cleaned_ids_agrees_with_the_controller_at_that_epoch():
    """A clean of dead ids changes the controller's set without a new syncStateSetEpoch and
    tells no broker: the master's local set at that epoch still holds them. That is the same
    set at the same epoch, minus what the admin removed; any other difference is not."""
    before = metadata(ids=(1, 2, 3), master=1, members={1, 2, 3})
    epoch = state_of(before).sync_state_set_epoch
    history, found = inv.SyncStateSetHistory().observe_controller(before)
    _, after = R51.execute(before, CleanBrokerDataRequest(CLUSTER, NAME, {3}), alive(1, 2))
    history, found_after = history.observe_controller(after)
    assert found == found_after == [] and state_of(after).sync_state_set == {1, 2}
    assert history.check_broker(NAME, "b1", frozenset({1, 2, 3}), epoch) == []
    assert history.check_broker(NAME, "b1", frozenset({1, 2}), epoch) == []
    assert [v.invariant for v in history.check_broker(NAME, "b1", frozenset({1, 2, 4}), epoch)] == [
        "sync_state_set_epoch_unique"]
    assert [v.invariant for v in history.check_broker(NAME, "b1", frozenset({1, 3}), epoch)] == [
        "sync_state_set_epoch_unique"]


def test_a_clean_noted_from_its_decision_excuses_the_master_the_snapshots_never_showed():
    """The history may see the set only after the clean (both in one observation): the clean
    decision tells it; a whole-set clean forgets what it was told."""
    before = metadata(ids=(1, 2, 3), master=1, members={1, 2, 3})
    epoch = state_of(before).sync_state_set_epoch
    _, after = R51.execute(before, CleanBrokerDataRequest(CLUSTER, NAME, {3}), alive(1, 2))
    history, _ = inv.SyncStateSetHistory().observe_controller(after)
    assert history.check_broker(NAME, "b1", frozenset({1, 2, 3}), epoch) != []
    told = history.note_clean(NAME, epoch, {3})
    assert told.check_broker(NAME, "b1", frozenset({1, 2, 3}), epoch) == []
    assert told.note_clean(NAME, epoch, ()).check_broker(NAME, "b1", frozenset({1, 2, 3}), epoch) != []


@pytest.mark.parametrize("behind, forgets", [(False, True), (True, False)], ids=["current", "behind"])
def test_a_controller_behind_the_others_does_not_make_the_histories_forget(behind, forgets):
    """Seed 50246: every controller restarted after a clean, and the first to show its
    metadata had applied nothing; taking its empty metadata for the set gone, the history
    forgot epoch 6 and later judged the master's set against a re-learnt one. A controller
    that is current and shows the set gone (a clean) still makes them start over."""
    before = metadata(ids=(1, 2, 3), master=1, members={1, 2, 3})
    epoch = state_of(before).sync_state_set_epoch
    sets, _ = inv.SyncStateSetHistory().observe_controller(before)
    masters, _ = inv.MasterEpochHistory().observe_controller(before)
    sets, found = sets.observe_controller(EMPTY_METADATA, behind=behind)
    masters, found_masters = masters.observe_controller(EMPTY_METADATA, behind=behind)
    assert found == found_masters == []
    assert (sets.sets == {}) is forgets and (masters.masters == {}) is forgets
    assert (sets.check_broker(NAME, "b1", frozenset({1, 4}), epoch) == []) is forgets


def test_every_clean_row_is_exercised():
    assert {c[5] for c in CLEAN_CASES} == set(rule_names(CLEAN_BROKER_DATA_RULES))


# ----------------------------------------------------------------- not the leader


@pytest.mark.parametrize(
    "request_",
    [
        GetNextBrokerIdRequest(CLUSTER, NAME),
        ApplyBrokerIdRequest(CLUSTER, NAME, 1, code(1)),
        RegisterBrokerRequest(CLUSTER, NAME, addr(1), 1),
        GetReplicaInfoRequest(NAME),
        AlterSyncStateSetRequest(NAME, 1, 1, {1, 2}, 1),
        ElectMasterRequest.of_controller_trigger(NAME),
        CleanBrokerDataRequest(CLUSTER, NAME),
    ],
    ids=lambda r: type(r).__name__,
)
def test_a_follower_answers_not_leader(request_):
    result = R51.handle(metadata(), request_, alive(1, 2, 3), is_leader=False)
    assert (result.code, result.events, result.check) == (RC.CONTROLLER_NOT_LEADER, (), "controller_not_leader")


def test_handle_rejects_a_non_request():
    with pytest.raises(TypeError):
        R51.handle(EMPTY_METADATA, "electMaster", alive())
