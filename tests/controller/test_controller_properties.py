"""Hypothesis properties of the controller over random API sequences, both profiles.

Every step goes through ``ControllerRules.execute`` (validate, then ``apply_event``)
and is judged by the invariants of spec/invariants/controller.py.
"""
import attrs
from hypothesis import given
from hypothesis import strategies as st

from controller_cases import CLUSTER, NAME, R50, R51, addr, code, make_set
from spec.controller.events import CleanBrokerDataEvent, ElectMasterEvent
from spec.controller.heartbeat import StaticLiveness
from spec.controller.records import (
    EMPTY_METADATA,
    AlterSyncStateSetRequest,
    AlterSyncStateSetResponse,
    ApplyBrokerIdRequest,
    CleanBrokerDataRequest,
    ControllerConfig,
    ControllerMetadata,
    ElectMasterRequest,
    ElectMasterResponse,
    GetNextBrokerIdRequest,
    GetReplicaInfoRequest,
    RegisterBrokerRequest,
    ResponseCode as RC,
)
from spec.controller.rules import API_OF_REQUEST
from spec.invariants import controller as inv

IDS = st.integers(min_value=1, max_value=4)
ID_SETS = st.frozensets(IDS, max_size=4)


@st.composite
def liveness(draw):
    alive_ids = draw(ID_SETS)
    infos = draw(st.dictionaries(IDS, st.tuples(st.integers(0, 3), st.integers(0, 2**33), st.integers(0, 3)), max_size=4))
    return StaticLiveness.of(NAME, alive_ids, infos)


@st.composite
def request_for(draw, metadata: ControllerMetadata, profile_name: str):
    known = metadata.known(NAME)
    s = known.sync_state if known is not None else None
    kinds = ["register", "elect", "alter", "alter_from_master", "info", "clean"]
    if profile_name == "rocketmq-5.1":
        kinds += ["next_id", "apply", "apply_next"]
    kind = draw(st.sampled_from(kinds))
    broker_id = draw(IDS)
    if kind == "next_id":
        return GetNextBrokerIdRequest(CLUSTER, NAME)
    if kind in ("apply", "apply_next"):
        if kind == "apply_next" and known is not None:
            broker_id = known.replicas.next_assign_broker_id
        return ApplyBrokerIdRequest(CLUSTER, NAME, broker_id, code(broker_id, draw(st.integers(1, 2))))
    if kind == "register":
        address = addr(broker_id) if draw(st.booleans()) else f"moved-{broker_id}"
        return RegisterBrokerRequest(CLUSTER, NAME, address, broker_id if profile_name == "rocketmq-5.1" else None)
    if kind == "elect":
        trigger = draw(st.sampled_from(["broker", "controller", "admin"]))
        if trigger == "controller":
            return ElectMasterRequest.of_controller_trigger(NAME)
        maker = ElectMasterRequest.of_broker_trigger if trigger == "broker" else ElectMasterRequest.of_admin_trigger
        return maker(CLUSTER, NAME, broker_id)
    if kind == "info":
        return GetReplicaInfoRequest(NAME)
    if kind == "clean":
        return CleanBrokerDataRequest(CLUSTER, NAME, draw(st.one_of(st.none(), ID_SETS)), draw(st.booleans()))
    if kind == "alter_from_master" and s is not None:
        # mostly well-formed alters from the recorded master, with small epoch slips
        return AlterSyncStateSetRequest(
            NAME,
            s.master_broker_id,
            s.master_epoch + draw(st.sampled_from([0, 0, 0, -1, 1])),
            draw(ID_SETS) | ({s.master_broker_id} if s.master_broker_id and draw(st.booleans()) else set()),
            s.sync_state_set_epoch + draw(st.sampled_from([0, 0, 0, -1, 1])),
        )
    return AlterSyncStateSetRequest(NAME, draw(st.one_of(st.none(), IDS)), draw(st.integers(0, 4)), draw(ID_SETS), draw(st.integers(0, 5)))


UNCLEAN = ControllerConfig(enable_elect_unclean_master=True)
PROFILE_RULES = st.sampled_from(
    [R51, R50, attrs.evolve(R51, config=UNCLEAN), attrs.evolve(R50, config=UNCLEAN)]
)


def step_violations(rules, before, request, result, after, live):
    """All per-step invariants, for one executed call."""
    api = API_OF_REQUEST[type(request)]
    out = inv.reply_code_allowed(api, result.code)
    out += inv.epochs_never_decrease(before, after)
    out += inv.reply_matches_state(request.broker_name, result.response, after)
    out += inv.elected_master_was_eligible(before, result.events, rules.config)
    if isinstance(request, AlterSyncStateSetRequest):
        out += inv.alter_is_compare_and_set(before, request, result.response, after)
    if isinstance(request, ElectMasterRequest):
        out += inv.elected_master_most_up_to_date(before, request, result.response, live, rules.config)
    return out


def _expected_5_0_difference(violation, response) -> bool:
    """rocketmq-5.0 reports the old syncStateSetEpoch in an elect reply (#5045): by design."""
    return (
        violation.invariant == "reply_matches_state"
        and isinstance(response, ElectMasterResponse)
        and response.code == RC.SUCCESS
        and violation.detail.startswith("sync_state_set_epoch")
    )


@given(PROFILE_RULES, st.data())
def test_every_step_keeps_every_controller_invariant(rules, data):
    metadata = EMPTY_METADATA
    codes, sets, masters = inv.CheckCodeHistory(), inv.SyncStateSetHistory(), inv.MasterEpochHistory()
    exempt: set[str] = set()
    for _ in range(data.draw(st.integers(1, 25))):
        request = data.draw(request_for(metadata, rules.profile.name))
        live = data.draw(liveness())
        result, after = rules.execute(metadata, request, live)
        violations = step_violations(rules, metadata, request, result, after, live)
        for event in result.events:
            if isinstance(event, CleanBrokerDataEvent) and event.broker_ids_to_clean:
                known = metadata.known(event.broker_name)
                if known is not None and known.sync_state.master_broker_id in event.broker_ids_to_clean:
                    exempt.add(event.broker_name)
            if isinstance(event, ElectMasterEvent):
                exempt.discard(event.broker_name)
        violations += inv.master_in_sync_state_set(after, exempt)
        codes, found = codes.observe(after)
        violations += found
        sets, found = sets.observe_controller(after)
        violations += found
        masters, found = masters.observe_controller(after)
        violations += found
        if rules.profile.name == "rocketmq-5.0":
            violations = [v for v in violations if not _expected_5_0_difference(v, result.response)]
        assert violations == [], (request, result)
        metadata = after


@given(st.data())
def test_5_0_elect_reply_differs_exactly_in_the_sync_state_set_epoch(data):
    members = data.draw(st.frozensets(IDS, min_size=1))
    before = ControllerMetadata({NAME: make_set(ids=(1, 2, 3, 4), master=None, master_epoch=2, members=members, ss_epoch=3)})
    request = ElectMasterRequest.of_controller_trigger(NAME)
    live = StaticLiveness.of(NAME, members)
    for rules, stale in ((R51, False), (R50, True)):
        result, after = rules.execute(before, request, live)
        found = inv.reply_matches_state(NAME, result.response, after)
        assert [v.detail.split(":")[0] for v in found] == (["sync_state_set_epoch"] if stale else [])


@st.composite
def set_state(draw):
    master = draw(st.one_of(st.none(), IDS))
    members = draw(ID_SETS) | ({master} if master else set())
    return ControllerMetadata(
        {NAME: make_set(ids=(1, 2, 3, 4), master=master, master_epoch=draw(st.integers(0, 3)), members=members, ss_epoch=draw(st.integers(0, 3)))}
    )


@given(set_state(), st.lists(st.tuples(st.one_of(st.none(), IDS), st.integers(0, 3), ID_SETS, st.integers(0, 3)), max_size=4), liveness())
def test_alter_is_exactly_a_compare_and_set(before, alters, live):
    """Accepted iff it matches (master, masterEpoch, syncStateSetEpoch) and the new set is
    valid; and of several alters made from the same state at most one is accepted."""
    s = before.known(NAME).sync_state
    state, accepted = before, 0
    for master, master_epoch, members, ss_epoch in alters:
        request = AlterSyncStateSetRequest(NAME, master, master_epoch, members, ss_epoch)
        result, after = R51.execute(before, request, live)
        matches = s.master_broker_id is not None and (master, master_epoch, ss_epoch) == (s.master_broker_id, s.master_epoch, s.sync_state_set_epoch)
        valid = (
            members != s.sync_state_set
            and s.master_broker_id in members
            and all(m in (1, 2, 3, 4) and live.is_alive(CLUSTER, NAME, m) for m in members)
        )
        assert (result.code == RC.SUCCESS) == (matches and valid)
        assert inv.alter_is_compare_and_set(before, request, result.response, after) == []
        # the same alters applied in sequence: after one success, the rest are fenced
        seq_result, state = R51.execute(state, request, live)
        accepted += seq_result.code == RC.SUCCESS
    assert accepted <= 1


@given(set_state(), liveness(), st.sampled_from(["broker", "controller", "admin"]), IDS)
def test_elect_reply_epochs_equal_the_state_after_apply(before, live, trigger, broker_id):
    if trigger == "controller":
        request = ElectMasterRequest.of_controller_trigger(NAME)
    else:
        maker = ElectMasterRequest.of_broker_trigger if trigger == "broker" else ElectMasterRequest.of_admin_trigger
        request = maker(CLUSTER, NAME, broker_id)
    result, after = R51.execute(before, request, live)
    r, s = result.response, after.known(NAME).sync_state
    if result.code in (RC.SUCCESS, RC.CONTROLLER_MASTER_STILL_EXIST):
        assert (r.master_broker_id, r.master_epoch, r.sync_state_set_epoch, r.sync_state_set) == (
            s.master_broker_id, s.master_epoch, s.sync_state_set_epoch, s.sync_state_set,
        )
    else:
        assert r.master_broker_id is None and r.master_epoch is None


@given(set_state(), liveness(), st.lists(st.tuples(IDS, ID_SETS), max_size=3))
def test_alter_reply_epoch_equals_the_state_after_apply(before, live, proposals):
    state = before
    for _, members in proposals:
        s = state.known(NAME).sync_state
        request = AlterSyncStateSetRequest(NAME, s.master_broker_id, s.master_epoch, members, s.sync_state_set_epoch)
        result, state = R51.execute(state, request, live)
        if result.code == RC.SUCCESS:
            assert isinstance(result.response, AlterSyncStateSetResponse)
            assert result.response.new_sync_state_set_epoch == state.known(NAME).sync_state.sync_state_set_epoch
