"""The controller APIs as pure decision procedures (``ReplicasInfoManager``).

Each API is ``(metadata, request, liveness) -> ControllerResult(response, events)``:
it validates against the *applied* metadata and never changes it; the caller (the
active controller) appends the events to its log, applies them with
``apply_event`` and only then answers with ``response``. Calls are handled one at a
time, so check-then-apply is safe.

Each API is an ordered table of named rules (first match wins); the result names
the row that decided (``ControllerResult.check``). Where releases differ, the
profile (spec/controller/profiles.py) selects the rows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import attrs

from spec.controller import elect_policy as _policy
from spec.controller.checks import Rule, first_match
from spec.controller.events import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    UpdateBrokerAddressEvent,
)
from spec.controller.heartbeat import Liveness
from spec.controller.records import (
    DEFAULT_CONFIG,
    FIRST_BROKER_CONTROLLER_ID,
    RESPONSE_TYPE_OF,
    AlterSyncStateSetRequest,
    AlterSyncStateSetResponse,
    ApplyBrokerIdRequest,
    ApplyBrokerIdResponse,
    BrokerSetMetadata,
    CleanBrokerDataRequest,
    CleanBrokerDataResponse,
    ControllerConfig,
    ControllerMetadata,
    ElectMasterRequest,
    ElectMasterResponse,
    ElectTrigger,
    GetNextBrokerIdRequest,
    GetNextBrokerIdResponse,
    GetReplicaInfoRequest,
    GetReplicaInfoResponse,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
    ResponseCode,
    SyncStateSet,
)

if TYPE_CHECKING:  # pragma: no cover  (a type only: profiles are built from this module's rule tables)
    from spec.controller.profiles import ControllerProfile

RC = ResponseCode


@attrs.frozen(slots=True)
class ControllerResult:
    """``ControllerResult``: the reply, the events to commit first, and the deciding row."""

    response: Any
    events: tuple = ()
    check: str = ""
    # A finer branch inside the deciding row (e.g. which rule produced the elected master).
    detail: str = ""
    remark: str = ""

    @property
    def code(self) -> ResponseCode:
        return self.response.code


def _reply(response, events=(), remark: str = "", detail: str = "") -> ControllerResult:
    return ControllerResult(response=response, events=tuple(events), remark=remark, detail=detail)


def _decide(rules, ctx) -> ControllerResult:
    name, result = first_match(rules, ctx)
    return result if result.check else attrs.evolve(result, check=name)


# ------------------------------------------------------------------ getNextBrokerId


def get_next_broker_id(
    metadata: ControllerMetadata, request: GetNextBrokerIdRequest, liveness: Optional[Liveness] = None, **_: Any
) -> ControllerResult:
    """Read only: 1 for a set without registered replicas, else ``nextAssignBrokerId``."""
    found = metadata.get(request.broker_name)
    if found is None or found.replicas is None:
        return ControllerResult(GetNextBrokerIdResponse(RC.SUCCESS, FIRST_BROKER_CONTROLLER_ID), check="broker_set_unknown")
    return ControllerResult(
        GetNextBrokerIdResponse(RC.SUCCESS, found.replicas.next_assign_broker_id), check="next_assign_broker_id"
    )


# ------------------------------------------------------------------ applyBrokerId


@attrs.frozen(slots=True)
class _ApplyCtx:
    found: Optional[BrokerSetMetadata]
    request: ApplyBrokerIdRequest

    @property
    def replicas(self):
        return None if self.found is None else self.found.replicas

    def event(self) -> ApplyBrokerIdEvent:
        r = self.request
        return ApplyBrokerIdEvent(r.cluster_name, r.broker_name, r.broker_address, r.applied_broker_id, r.register_check_code)


def _apply_ok(c: _ApplyCtx) -> ControllerResult:
    return _reply(ApplyBrokerIdResponse(RC.SUCCESS), [c.event()])


def _apply_invalid(why: str) -> ControllerResult:
    return _reply(ApplyBrokerIdResponse(RC.CONTROLLER_BROKER_ID_INVALID), remark=why)


APPLY_BROKER_ID_RULES: tuple[Rule, ...] = (
    Rule(
        "broker_set_unknown_first_id",
        lambda c: _apply_ok(c) if c.replicas is None and c.request.applied_broker_id == FIRST_BROKER_CONTROLLER_ID else None,
    ),
    Rule(
        "broker_set_unknown_other_id",
        lambda c: _apply_invalid("broker set not registered: only id 1 may be applied") if c.replicas is None else None,
    ),
    Rule("broker_id_free", lambda c: None if c.replicas.is_broker_exist(c.request.applied_broker_id) else _apply_ok(c)),
    Rule(
        "broker_id_held_with_same_check_code",
        # An idempotent retry still emits the event; applying it changes nothing.
        lambda c: _apply_ok(c)
        if c.replicas.register_check_code(c.request.applied_broker_id) == c.request.register_check_code
        else None,
    ),
    Rule("broker_id_held_by_another", lambda c: _apply_invalid("id held with another register check code")),
)


def apply_broker_id(
    metadata: ControllerMetadata, request: ApplyBrokerIdRequest, liveness: Optional[Liveness] = None, **_: Any
) -> ControllerResult:
    return _decide(APPLY_BROKER_ID_RULES, _ApplyCtx(metadata.get(request.broker_name), request))


# ------------------------------------------------------------------ registerBroker


@attrs.frozen(slots=True)
class RegisterCtx:
    metadata: ControllerMetadata
    request: RegisterBrokerRequest
    liveness: Liveness
    config: ControllerConfig

    @property
    def known(self) -> Optional[BrokerSetMetadata]:
        return self.metadata.known(self.request.broker_name)


def _need_registration(why: str) -> ControllerResult:
    return _reply(RegisterBrokerResponse(RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED), remark=why)


def _registered(c: RegisterCtx) -> ControllerResult:
    known, request = c.known, c.request
    state = known.sync_state
    master_alive = state.is_master_exist and c.liveness.is_alive(
        request.cluster_name, request.broker_name, state.master_broker_id
    )
    master_fields = (
        dict(
            master_broker_id=state.master_broker_id,
            master_address=known.replicas.broker_address(state.master_broker_id),
            master_epoch=state.master_epoch,
            sync_state_set_epoch=state.sync_state_set_epoch,
        )
        if master_alive
        else {}
    )
    events = []
    if request.broker_address != known.replicas.broker_address(request.broker_id):
        events.append(
            UpdateBrokerAddressEvent(request.cluster_name, request.broker_name, request.broker_address, request.broker_id)
        )
    body = SyncStateSet(state.sync_state_set, state.sync_state_set_epoch)
    return _reply(RegisterBrokerResponse(RC.SUCCESS, sync_state_set=body, **master_fields), events)


REGISTER_BROKER_RULES_5_1: tuple[Rule, ...] = (
    Rule("broker_set_unknown", lambda c: _need_registration("broker set not registered") if c.known is None else None),
    Rule(
        "broker_id_unknown",
        lambda c: None if c.known.replicas.is_broker_exist(c.request.broker_id) else _need_registration("id not applied"),
    ),
    Rule("registered", _registered),
)


def _first_registrant_becomes_master(c: RegisterCtx) -> Optional[ControllerResult]:
    """rocketmq-5.0: registering into an unknown set creates it with the registrant as master."""
    if c.known is not None:
        return None
    r = c.request
    master = FIRST_BROKER_CONTROLLER_ID
    event = ElectMasterEvent(r.broker_name, True, master, cluster_name=r.cluster_name, broker_address=r.broker_address)
    response = RegisterBrokerResponse(
        RC.SUCCESS,
        broker_id=master,
        master_broker_id=master,
        master_address=r.broker_address,
        master_epoch=1,
        sync_state_set_epoch=1,
        sync_state_set=SyncStateSet(frozenset({master}), 1),
    )
    return _reply(response, [event])


def _register_5_0_id(c: RegisterCtx) -> tuple[int, list]:
    """5.0 identifies brokers by address: a new address gets the next id while registering."""
    replicas = c.known.replicas
    existing = replicas.broker_id_by_address(c.request.broker_address)
    if existing is not None:
        return existing, []
    new_id = replicas.next_assign_broker_id
    r = c.request
    return new_id, [ApplyBrokerIdEvent(r.cluster_name, r.broker_name, r.broker_address, new_id, None)]


def _register_5_0_master_exists(c: RegisterCtx) -> Optional[ControllerResult]:
    state = c.known.sync_state
    if not state.is_master_exist:
        return None
    broker_id, events = _register_5_0_id(c)
    response = RegisterBrokerResponse(
        RC.SUCCESS,
        broker_id=broker_id,
        master_broker_id=state.master_broker_id,
        master_address=c.known.replicas.broker_address(state.master_broker_id),
        master_epoch=state.master_epoch,
        sync_state_set_epoch=state.sync_state_set_epoch,
        sync_state_set=SyncStateSet(state.sync_state_set, state.sync_state_set_epoch),
    )
    return _reply(response, events)


def _register_5_0_elected_in_register(c: RegisterCtx) -> Optional[ControllerResult]:
    state = c.known.sync_state
    broker_id, events = _register_5_0_id(c)
    if not (broker_id in state.sync_state_set or c.config.enable_elect_unclean_master):
        return None
    r = c.request
    events.append(ElectMasterEvent(r.broker_name, True, broker_id))
    response = RegisterBrokerResponse(
        RC.SUCCESS,
        broker_id=broker_id,
        master_broker_id=broker_id,
        master_address=r.broker_address,
        master_epoch=state.master_epoch + 1,
        sync_state_set_epoch=state.sync_state_set_epoch + 1,
        sync_state_set=SyncStateSet(frozenset({broker_id}), state.sync_state_set_epoch + 1),
    )
    return _reply(response, events)


def _register_5_0_cannot_be_master(c: RegisterCtx) -> ControllerResult:
    # 5.0's CONTROLLER_REGISTER_BROKER_FAILED has the wire number 2012, which 5.1 calls
    # CONTROLLER_ELECT_MASTER_FAILED. The id assignment still goes through.
    broker_id, events = _register_5_0_id(c)
    state = c.known.sync_state
    response = RegisterBrokerResponse(
        RC.CONTROLLER_ELECT_MASTER_FAILED,
        broker_id=broker_id,
        master_epoch=state.master_epoch,
        sync_state_set_epoch=state.sync_state_set_epoch,
    )
    return _reply(response, events, remark="no master, and this broker cannot be elected")


REGISTER_BROKER_RULES_5_0: tuple[Rule, ...] = (
    Rule("first_registrant_becomes_master", _first_registrant_becomes_master),
    Rule("master_exists", _register_5_0_master_exists),
    Rule("elected_in_register", _register_5_0_elected_in_register),
    Rule("cannot_be_elected", _register_5_0_cannot_be_master),
)


def register_broker(
    metadata: ControllerMetadata,
    request: RegisterBrokerRequest,
    liveness: Liveness,
    *,
    config: ControllerConfig = DEFAULT_CONFIG,
    profile: "ControllerProfile",
    **_: Any,
) -> ControllerResult:
    return _decide(profile.register_broker_rules, RegisterCtx(metadata, request, liveness, config))


# ------------------------------------------------------------------ getReplicaInfo


def get_replica_info(
    metadata: ControllerMetadata, request: GetReplicaInfoRequest, liveness: Optional[Liveness] = None, **_: Any
) -> ControllerResult:
    """Read only, no liveness filter: the recorded master (possibly none) and the set."""
    known = metadata.known(request.broker_name)
    if known is None:
        return ControllerResult(GetReplicaInfoResponse(RC.CONTROLLER_BROKER_METADATA_NOT_EXIST), check="broker_set_unknown")
    state = known.sync_state
    response = GetReplicaInfoResponse(
        RC.SUCCESS,
        master_broker_id=state.master_broker_id,
        master_address=known.replicas.broker_address(state.master_broker_id),
        master_epoch=state.master_epoch,
        sync_state_set=SyncStateSet(state.sync_state_set, state.sync_state_set_epoch),
    )
    return ControllerResult(response, check="replica_info")


# ------------------------------------------------------------------ alterSyncStateSet


@attrs.frozen(slots=True)
class AlterCtx:
    known: Optional[BrokerSetMetadata]
    request: AlterSyncStateSetRequest
    liveness: Liveness


def _alter_failed(code: ResponseCode, why: str, check: str = "") -> ControllerResult:
    return ControllerResult(AlterSyncStateSetResponse(code), check=check, remark=why)


def _invalid_member(c: AlterCtx) -> Optional[ControllerResult]:
    """Members in HashSet order (ascending below 16): the first unregistered (2003) or dead
    (2006) one decides, as upstream iterates the request's set."""
    replicas = c.known.replicas
    for member in _policy.java_hash_set_order(c.request.new_sync_state_set):
        if not replicas.is_broker_exist(member):
            return _alter_failed(RC.CONTROLLER_INVALID_REPLICAS, f"replica {member} not registered", "member_not_registered")
        if not c.liveness.is_alive(c.known.cluster_name, c.request.broker_name, member):
            return _alter_failed(RC.CONTROLLER_BROKER_NOT_ALIVE, f"replica {member} not alive", "member_not_alive")
    return None


def _alter_accepted(c: AlterCtx) -> ControllerResult:
    epoch = c.known.sync_state.sync_state_set_epoch + 1
    response = AlterSyncStateSetResponse(RC.SUCCESS, epoch, SyncStateSet(c.request.new_sync_state_set, epoch))
    return _reply(response, [AlterSyncStateSetEvent(c.request.broker_name, c.request.new_sync_state_set)])


def _state(c: AlterCtx):
    return c.known.sync_state


ALTER_SYNC_STATE_SET_RULES: tuple[Rule, ...] = (
    Rule(
        "broker_set_unknown",
        lambda c: _alter_failed(RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "broker set not registered")
        if c.known is None
        else None,
    ),
    Rule(
        "new_set_equals_current",
        lambda c: _alter_failed(RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "SyncStateSet unchanged")
        if c.request.new_sync_state_set == _state(c).sync_state_set
        else None,
    ),
    Rule(
        "requester_not_master",
        lambda c: _alter_failed(RC.CONTROLLER_INVALID_MASTER, f"master is {_state(c).master_broker_id}")
        if _state(c).master_broker_id is None or _state(c).master_broker_id != c.request.master_broker_id
        else None,
    ),
    Rule(
        "master_epoch_differs",
        lambda c: _alter_failed(RC.CONTROLLER_FENCED_MASTER_EPOCH, f"masterEpoch is {_state(c).master_epoch}")
        if c.request.master_epoch != _state(c).master_epoch
        else None,
    ),
    Rule(
        "sync_state_set_epoch_differs",
        lambda c: _alter_failed(
            RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, f"syncStateSetEpoch is {_state(c).sync_state_set_epoch}"
        )
        if c.request.sync_state_set_epoch != _state(c).sync_state_set_epoch
        else None,
    ),
    Rule("member_not_registered_or_not_alive", _invalid_member),
    Rule(
        "master_not_in_new_set",
        lambda c: _alter_failed(RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "the new set lacks the master")
        if _state(c).master_broker_id not in c.request.new_sync_state_set
        else None,
    ),
    Rule("accepted", _alter_accepted),
)


def alter_sync_state_set(
    metadata: ControllerMetadata, request: AlterSyncStateSetRequest, liveness: Liveness, **_: Any
) -> ControllerResult:
    """A compare-and-set on (master, masterEpoch, syncStateSetEpoch)."""
    return _decide(ALTER_SYNC_STATE_SET_RULES, AlterCtx(metadata.known(request.broker_name), request, liveness))


# ------------------------------------------------------------------ electMaster


@attrs.frozen(slots=True)
class ElectCtx:
    known: BrokerSetMetadata
    request: ElectMasterRequest
    liveness: Liveness
    config: ControllerConfig
    order: _policy.CandidateOrder

    @property
    def state(self):
        return self.known.sync_state


@attrs.frozen(slots=True)
class Winner:
    """Who wins (None: nobody) and the named rule that said so."""

    broker_id: Optional[int]
    rule: str


def _first_election(c: ElectCtx) -> Optional[Winner]:
    # While masterEpoch == 0 a request naming a broker wins with no further checks;
    # a controller trigger (brokerId -1) goes on to the policy.
    if c.state.is_first_time_for_elect and c.request.names_a_broker:
        return Winner(c.request.broker_id, "first_election")
    return None


def _by_policy(c: ElectCtx) -> Winner:
    unclean = c.known.replicas.all_brokers() if c.config.enable_elect_unclean_master else None
    prefer = c.request.broker_id if c.request.designate_elect else None
    decision = _policy.elect(
        c.known.cluster_name,
        c.request.broker_name,
        c.state.sync_state_set,
        unclean,
        c.state.master_broker_id,
        prefer,
        c.liveness,
        c.order,
    )
    return Winner(decision.winner, f"elect_policy:{decision.elected_from or 'none'}:{decision.rule}")


FIRST_ELECTION = Rule("first_election", _first_election)
ELECT_POLICY = Rule("elect_policy", _by_policy)


def _no_master_fields(code: ResponseCode, why: str) -> ControllerResult:
    return _reply(ElectMasterResponse(code), remark=why)


@attrs.frozen(slots=True)
class OutcomeCtx:
    """An electMaster once its winner is known."""

    elect: ElectCtx
    winner: Winner
    # syncStateSetEpoch increment reported in a SUCCESS reply (profile data).
    increment: int


def _old_master_still_exists(o: OutcomeCtx) -> Optional[ControllerResult]:
    c, winner = o.elect, o.winner
    if winner.broker_id is None or winner.broker_id != c.state.master_broker_id:
        return None
    s = c.state
    response = ElectMasterResponse(
        RC.CONTROLLER_MASTER_STILL_EXIST,
        master_broker_id=s.master_broker_id,
        master_address=c.known.replicas.broker_address(s.master_broker_id),
        master_epoch=s.master_epoch,
        sync_state_set_epoch=s.sync_state_set_epoch,
        sync_state_set=s.sync_state_set,
    )
    return _reply(response, remark="the old master is still alive")


def _new_master_elected(o: OutcomeCtx) -> Optional[ControllerResult]:
    c, new_master = o.elect, o.winner.broker_id
    if new_master is None:
        return None
    s = c.state
    response = ElectMasterResponse(
        RC.SUCCESS,
        master_broker_id=new_master,
        master_address=c.known.replicas.broker_address(new_master),
        master_epoch=s.master_epoch + 1,
        sync_state_set_epoch=s.sync_state_set_epoch + o.increment,
        sync_state_set=frozenset({new_master}),
        broker_member_group=c.known.replicas.broker_id_table(),
    )
    return _reply(response, [ElectMasterEvent(c.request.broker_name, True, new_master)])


def _no_master_available(o: OutcomeCtx) -> Optional[ControllerResult]:
    if o.elect.request.trigger is not ElectTrigger.CONTROLLER:
        return None
    # The controller still records that the old master is gone (masterEpoch + 1).
    return _reply(
        ElectMasterResponse(RC.CONTROLLER_MASTER_NOT_AVAILABLE),
        [ElectMasterEvent(o.elect.request.broker_name, False)],
        remark="old master down and no new master elected",
    )


ELECT_MASTER_OUTCOME_RULES: tuple[Rule, ...] = (
    Rule("old_master_still_exists", _old_master_still_exists),
    Rule("new_master_elected", _new_master_elected),
    Rule("no_master_available", _no_master_available),
    Rule("elect_master_failed", lambda o: _no_master_fields(RC.CONTROLLER_ELECT_MASTER_FAILED, "failed to elect a new master")),
)
ELECT_MASTER_OUTCOMES: tuple[str, ...] = tuple(r.name for r in ELECT_MASTER_OUTCOME_RULES)


def elect_master(
    metadata: ControllerMetadata,
    request: ElectMasterRequest,
    liveness: Liveness,
    *,
    config: ControllerConfig = DEFAULT_CONFIG,
    profile: "ControllerProfile",
    order: _policy.CandidateOrder = _policy.order_candidates,
    **_: Any,
) -> ControllerResult:
    """Triggers: broker (its own id), controller (-1), admin (designated id)."""
    known = metadata.known(request.broker_name)
    if known is None:
        result = _no_master_fields(RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "broker set not registered")
        return attrs.evolve(result, check="broker_set_unknown")
    ctx = ElectCtx(known, request, liveness, config, order)
    _, winner = first_match(profile.elect_winner_rules, ctx)
    outcome = OutcomeCtx(ctx, winner, profile.elected_reply_sync_state_set_epoch_increment)
    return attrs.evolve(_decide(ELECT_MASTER_OUTCOME_RULES, outcome), detail=winner.rule)


# ------------------------------------------------------------------ cleanBrokerData


@attrs.frozen(slots=True)
class CleanCtx:
    metadata: ControllerMetadata
    request: CleanBrokerDataRequest
    liveness: Liveness


def _clean_invalid(why: str) -> ControllerResult:
    return _reply(CleanBrokerDataResponse(RC.CONTROLLER_INVALID_CLEAN_BROKER_METADATA), remark=why)


def _master_still_recorded(c: CleanCtx) -> Optional[ControllerResult]:
    r = c.request
    found = c.metadata.get(r.broker_name)
    if r.clean_living_broker or r.broker_ids_to_clean or found is None or found.sync_state is None:
        return None
    if found.sync_state.master_broker_id is None:
        return None
    return _clean_invalid("a master is recorded: the set is still alive")


def _listed_broker_alive(c: CleanCtx) -> Optional[ControllerResult]:
    r = c.request
    if r.clean_living_broker or not r.broker_ids_to_clean:
        return None
    for broker_id in sorted(r.broker_ids_to_clean):
        if c.liveness.is_alive(r.cluster_name, r.broker_name, broker_id):
            return _clean_invalid(f"broker {broker_id} is still alive")
    return None


def _ids_to_clean(request: CleanBrokerDataRequest) -> Optional[frozenset[int]]:
    """The ids the event carries: upstream parses the list only when ``cleanLivingBroker``
    is off, so a forced clean with an explicit list removes the whole set."""
    return None if request.clean_living_broker else (request.broker_ids_to_clean or None)


CLEAN_BROKER_DATA_RULES: tuple[Rule, ...] = (
    Rule("master_still_recorded", _master_still_recorded),
    Rule("listed_broker_alive", _listed_broker_alive),
    Rule(
        "cleaned",
        lambda c: _reply(CleanBrokerDataResponse(RC.SUCCESS), [CleanBrokerDataEvent(c.request.broker_name,
                                                                                     _ids_to_clean(c.request))])
        if c.metadata.known(c.request.broker_name) is not None
        else None,
    ),
    Rule("broker_set_unknown", lambda c: _clean_invalid("broker set not registered")),
)


def clean_broker_data(
    metadata: ControllerMetadata, request: CleanBrokerDataRequest, liveness: Liveness, **_: Any
) -> ControllerResult:
    """Admin operation (not in the note; follows ReplicasInfoManager.cleanBrokerData)."""
    return _decide(CLEAN_BROKER_DATA_RULES, CleanCtx(metadata, request, liveness))


# ------------------------------------------------------------------ not the leader


def api_rows(profile: "ControllerProfile") -> dict[str, tuple[str, ...]]:
    """Every row (``ControllerResult.check``) each API of ``profile`` decides by: the
    outcomes a campaign's coverage counts, whichever controller decided."""
    def names(rules: tuple[Rule, ...]) -> tuple[str, ...]:
        return tuple(r.name for r in rules)

    rows = {
        "get_next_broker_id": ("broker_set_unknown", "next_assign_broker_id"),
        "apply_broker_id": names(APPLY_BROKER_ID_RULES),
        "register_broker": names(profile.register_broker_rules),
        "get_replica_info": ("broker_set_unknown", "replica_info"),
        "alter_sync_state_set": names(ALTER_SYNC_STATE_SET_RULES),
        "elect_master": ("broker_set_unknown",) + ELECT_MASTER_OUTCOMES,
        "clean_broker_data": names(CLEAN_BROKER_DATA_RULES),
    }
    return {api: r for api, r in rows.items() if profile.supports(api)}


def controller_not_leader(request: Any, metadata: Optional[ControllerMetadata] = None, **_: Any) -> ControllerResult:
    """What a controller that is not the DLedger leader answers to any API call (its own
    metadata may lag the leader's: it decides nothing on it)."""
    return ControllerResult(RESPONSE_TYPE_OF[type(request)](RC.CONTROLLER_NOT_LEADER), check="controller_not_leader")
