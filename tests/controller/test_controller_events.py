"""apply_event for every event type, the half-known sets a clean can leave, and the JSON codec."""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller_cases import CLUSTER, NAME, addr, code, make_set, metadata, state_of
from spec.controller.codec import event_from_dict, event_to_dict, record_from_dict, record_to_dict
from spec.controller.events import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    UpdateBrokerAddressEvent,
    apply_event,
)
from spec.controller.records import (
    EMPTY_METADATA,
    AlterSyncStateSetResponse,
    BrokerSetMetadata,
    ControllerMetadata,
    ElectMasterRequest,
    ElectMasterResponse,
    GetReplicaInfoRequest,
    RegisterBrokerResponse,
    ResponseCode,
    SyncStateSet,
)


def test_apply_broker_id_creates_the_set():
    after = apply_event(EMPTY_METADATA, ApplyBrokerIdEvent(CLUSTER, NAME, addr(1), 1, code(1)))
    found = after.known(NAME)
    assert found.cluster_name == CLUSTER
    assert found.replicas.next_assign_broker_id == 2 and found.replicas.broker_address(1) == addr(1)
    s = found.sync_state
    assert (s.master_broker_id, s.master_epoch, s.sync_state_set, s.sync_state_set_epoch) == (None, 0, frozenset(), 0)


def test_apply_broker_id_adds_and_counts_but_never_overwrites():
    m = metadata(ids=(1, 2))
    added = apply_event(m, ApplyBrokerIdEvent(CLUSTER, NAME, addr(9), 9, code(9)))
    assert added.get(NAME).replicas.next_assign_broker_id == 4  # a counter: 3 + 1, not 9 + 1
    again = apply_event(m, ApplyBrokerIdEvent(CLUSTER, NAME, "other", 2, "other;5"))
    assert again == m


def test_update_broker_address_keeps_check_code_and_ignores_unknown_ids():
    m = metadata(ids=(1, 2))
    after = apply_event(m, UpdateBrokerAddressEvent(CLUSTER, NAME, "new:1", 2))
    assert after.get(NAME).replicas.brokers[2].address == "new:1"
    assert after.get(NAME).replicas.brokers[2].register_check_code == code(2)
    assert apply_event(m, UpdateBrokerAddressEvent(CLUSTER, NAME, "new:1", 7)) == m
    assert apply_event(m, UpdateBrokerAddressEvent(CLUSTER, "nope", "new:1", 1)) == m


def test_elect_master_events():
    m = metadata(master=1, master_epoch=3, members={1, 2}, ss_epoch=5)
    elected = state_of(apply_event(m, ElectMasterEvent(NAME, True, 2)))
    assert (elected.master_broker_id, elected.master_epoch, elected.sync_state_set, elected.sync_state_set_epoch) == (2, 4, {2}, 6)
    cleared = state_of(apply_event(m, ElectMasterEvent(NAME, False)))
    assert (cleared.master_broker_id, cleared.master_epoch, cleared.sync_state_set, cleared.sync_state_set_epoch) == (None, 4, {1, 2}, 5)
    # 5.1: an ElectMaster for an unknown set changes nothing
    assert apply_event(EMPTY_METADATA, ElectMasterEvent(NAME, True, 1)) == EMPTY_METADATA


def test_elect_master_event_of_the_5_0_register_path_creates_the_set():
    after = apply_event(EMPTY_METADATA, ElectMasterEvent(NAME, True, 1, cluster_name=CLUSTER, broker_address=addr(1)))
    s = state_of(after)
    assert (s.master_broker_id, s.master_epoch, s.sync_state_set, s.sync_state_set_epoch) == (1, 1, {1}, 1)
    assert after.get(NAME).replicas.next_assign_broker_id == 2


def test_alter_sync_state_set_event():
    m = metadata(master=1, master_epoch=3, members={1}, ss_epoch=5)
    s = state_of(apply_event(m, AlterSyncStateSetEvent(NAME, {1, 3})))
    assert (s.master_broker_id, s.master_epoch, s.sync_state_set, s.sync_state_set_epoch) == (1, 3, {1, 3}, 6)
    assert apply_event(m, AlterSyncStateSetEvent("nope", {1})) == m


def test_clean_whole_set_and_listed_ids():
    m = metadata(ids=(1, 2, 3), master=1, members={1, 2})
    assert apply_event(m, CleanBrokerDataEvent(NAME)).get(NAME) is None
    assert apply_event(m, CleanBrokerDataEvent(NAME, frozenset())).get(NAME) is None
    after = apply_event(m, CleanBrokerDataEvent(NAME, {2, 3}))
    assert after.get(NAME).replicas.all_brokers() == {1} and state_of(after).sync_state_set == {1}
    assert apply_event(EMPTY_METADATA, CleanBrokerDataEvent(NAME, {1})) == EMPTY_METADATA


def test_clean_of_the_master_id_leaves_it_recorded_outside_the_set():
    after = apply_event(metadata(ids=(1, 2), master=1, members={1, 2}), CleanBrokerDataEvent(NAME, {1}))
    s = state_of(after)
    assert (s.master_broker_id, s.sync_state_set) == (1, {2})


def test_clean_can_leave_only_the_replica_half():
    # SyncStateSet {1} emptied while replica 2 stays registered: the set is unknown to the APIs
    # but getNextBrokerId/applyBrokerId still see the replica half and its counter.
    from controller_cases import R51, alive
    from spec.controller.records import ApplyBrokerIdRequest, GetNextBrokerIdRequest

    after = apply_event(metadata(ids=(1, 2), master=1, members={1}, next_id=3), CleanBrokerDataEvent(NAME, {1}))
    half = after.get(NAME)
    assert half.sync_state is None and half.replicas.all_brokers() == {2} and after.known(NAME) is None
    assert R51.handle(after, GetReplicaInfoRequest(NAME), alive()).code == ResponseCode.CONTROLLER_BROKER_METADATA_NOT_EXIST
    assert R51.handle(after, GetNextBrokerIdRequest(CLUSTER, NAME), alive()).response.next_broker_id == 3
    applied, fresh = R51.execute(after, ApplyBrokerIdRequest(CLUSTER, NAME, 3, code(3)), alive())
    assert applied.check == "broker_id_free"
    # applying to a half-known set starts it afresh (upstream replaces both tables)
    assert fresh.known(NAME).replicas.all_brokers() == {3}


def test_apply_event_rejects_non_events():
    with pytest.raises(TypeError):
        apply_event(EMPTY_METADATA, GetReplicaInfoRequest(NAME))


# ----------------------------------------------------------------- codec

ids = st.integers(min_value=1, max_value=9)
id_sets = st.frozensets(ids, max_size=4)
names = st.sampled_from(["broker-a", "broker-b"])
events = st.one_of(
    st.builds(ApplyBrokerIdEvent, st.just(CLUSTER), names, st.sampled_from([addr(1), None]), ids, st.sampled_from([code(1), None])),
    st.builds(UpdateBrokerAddressEvent, st.just(CLUSTER), names, st.just(addr(2)), ids),
    st.builds(ElectMasterEvent, names, st.booleans(), st.one_of(st.none(), ids)),
    st.builds(ElectMasterEvent, names, st.just(True), ids, st.just(CLUSTER), st.just(addr(3))),
    st.builds(AlterSyncStateSetEvent, names, id_sets),
    st.builds(CleanBrokerDataEvent, names, st.one_of(st.none(), id_sets)),
)


@given(events)
def test_events_round_trip_through_json(event):
    data = event_to_dict(event)
    assert event_from_dict(json.loads(json.dumps(data))) == event
    assert None not in data.values() and data["type"] == type(event).__name__


@pytest.mark.parametrize(
    "record",
    [
        ElectMasterRequest.of_admin_trigger(CLUSTER, NAME, 2),
        ElectMasterResponse(ResponseCode.SUCCESS, 2, addr(2), 3, 4, {2}, {1: addr(1), 2: None}),
        AlterSyncStateSetResponse(ResponseCode.SUCCESS, 4, SyncStateSet({1, 2}, 4)),
        RegisterBrokerResponse(ResponseCode.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED),
    ],
    ids=lambda r: type(r).__name__,
)
def test_requests_and_responses_round_trip(record):
    assert record_from_dict(json.loads(json.dumps(record_to_dict(record)))) == record


def test_codec_errors_name_the_problem():
    with pytest.raises(ValueError, match="unknown record type"):
        event_from_dict({"type": "GetReplicaInfoRequest", "broker_name": NAME})
    with pytest.raises(ValueError, match="unknown field"):
        event_from_dict({"type": "AlterSyncStateSetEvent", "broker_name": NAME, "new_sync_state_set": [1], "x": 1})
    with pytest.raises(TypeError):
        event_to_dict(GetReplicaInfoRequest(NAME))


def test_metadata_is_hashable_and_immutable():
    m = ControllerMetadata({NAME: make_set()})
    assert hash(m) == hash(ControllerMetadata({NAME: make_set()}))
    assert isinstance(m.get(NAME), BrokerSetMetadata)
    with pytest.raises(TypeError):
        m.sets[NAME] = None  # type: ignore[index]
