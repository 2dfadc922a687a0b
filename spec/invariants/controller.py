"""Controller-mode invariants as pure predicates over observations.

Each predicate returns a list of :class:`Violation` (empty: holds). Predicates that
need the past take a small immutable history accumulator and return the advanced
one. They state what must hold of *any* implementation: none of them reads the
spec's internal decision names, so they can judge a foreign controller or broker.

Controller (per broker set)
  * ``epochs_never_decrease``            masterEpoch and syncStateSetEpoch
  * ``master_in_sync_state_set``         after every event (and in every SyncStateSet a master proposes)
  * ``reply_matches_state``              a reply's master and epochs equal the state after apply
  * ``reply_code_allowed``               each API answers only its own codes
  * ``alter_is_compare_and_set``         an accepted alter matched (master, masterEpoch, syncStateSetEpoch)
  * ``elected_master_was_eligible``      in the SyncStateSet, or unclean election on, or the first election
  * ``elected_master_most_up_to_date``   no alive candidate of the pass had a larger (epoch, maxOffset)
  * ``CheckCodeHistory``                 brokerId <-> registerCheckCode is stable
  * ``SyncStateSetHistory``              a syncStateSetEpoch names one SyncStateSet, broker and controller alike
  * ``no_stuck_dead_master``             after the periodic scans no set keeps a dead master while an electable broker lives
  * ``no_masterless_healthy_set``        a set whose nodes are all up on a clean network gets a master, unless the rules leave it none
  * ``slave_catches_up``                 on a healthy set, each other live broker follows the master and holds its log once it is quiet
  * ``produce_answered``                 on a healthy set, a write to the master gets an answer (PUT_OK or a failure status)
Brokers
  * ``MasterEpochHistory``               at most one unfenced master accepting writes per masterEpoch
  * ``AppliedEpochHistory``              a broker never applies an older masterEpoch
  * ``confirm_offset_bounded``           0 <= master confirmOffset <= maxOffset and <= every in-sync member's max offset
Messages
  * ``acknowledged_messages_present``    no acknowledged message is lost
  * ``consumed_messages_present``        consumers never see a message that is later truncated
  * ``queue_offsets_unique``             queue offsets are never reused
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

import attrs

from spec.broker.messages import BrokerNodeView
from spec.broker.records import BrokerRoleState, LogEntry, Role
from spec.controller.events import ElectMasterEvent, apply_event
from spec.controller.records import (
    DEFAULT_CONFIG,
    AlterSyncStateSetRequest,
    AlterSyncStateSetResponse,
    ControllerConfig,
    ControllerMetadata,
    ElectMasterRequest,
    ElectMasterResponse,
    GetReplicaInfoResponse,
    RegisterBrokerResponse,
    ResponseCode,
)
from spec.frozenmap import FrozenMap, frozen_map

RC = ResponseCode

# The name each predicate puts in its violations, in the order of the module docstring.
INVARIANTS: tuple[str, ...] = (
    "epochs_never_decrease",
    "master_in_sync_state_set",
    "reply_matches_state",
    "reply_code_allowed",
    "alter_is_compare_and_set",
    "elected_master_was_eligible",
    "elected_master_most_up_to_date",
    "broker_id_check_code_stable",
    "sync_state_set_epoch_unique",
    "no_stuck_dead_master",
    "no_masterless_healthy_set",
    "slave_catches_up",
    "produce_answered",
    "one_master_per_master_epoch",
    "never_apply_older_epoch",
    "confirm_offset_bounded",
    "no_acknowledged_message_lost",
    "consumed_message_never_truncated",
    "queue_offsets_never_reused",
)


@attrs.frozen(slots=True)
class Violation:
    invariant: str
    subject: str  # broker set, broker, or message the violation is about
    detail: str


# --------------------------------------------------------------------------- controller metadata


def epochs_never_decrease(before: ControllerMetadata, after: ControllerMetadata) -> list[Violation]:
    """masterEpoch and syncStateSetEpoch of a set present before and after never go down.

    A set removed by an admin CleanBrokerData starts over when it is created again:
    only sets known on both sides are compared.
    """
    out = []
    for name in sorted(before.sets):
        b, a = before.known(name), after.known(name)
        if b is None or a is None:
            continue
        for field in ("master_epoch", "sync_state_set_epoch"):
            old, new = getattr(b.sync_state, field), getattr(a.sync_state, field)
            if new < old:
                out.append(Violation("epochs_never_decrease", name, f"{field} {old} -> {new}"))
    return out


def master_in_sync_state_set(metadata: ControllerMetadata, exempt: Iterable[str] = ()) -> list[Violation]:
    """Every recorded master is in its set's SyncStateSet.

    ``exempt``: sets whose master id an admin CleanBrokerData removed (upstream leaves
    the master recorded outside the set until the next election).
    """
    skip = set(exempt)
    out = []
    for name in sorted(metadata.sets):
        known = metadata.known(name)
        if known is None or name in skip:
            continue
        state = known.sync_state
        if state.master_broker_id is not None and state.master_broker_id not in state.sync_state_set:
            out.append(
                Violation("master_in_sync_state_set", name, f"master {state.master_broker_id} not in {sorted(state.sync_state_set)}")
            )
    return out


def proposal_contains_master(broker: str, master_id: int, proposal: Optional[frozenset[int]]) -> list[Violation]:
    """A master never proposes (or holds locally) a SyncStateSet without itself."""
    if proposal is None or master_id in proposal:
        return []
    return [Violation("master_in_sync_state_set", broker, f"master {master_id} proposed {sorted(proposal)}")]


_EPOCH_REPLIES = (AlterSyncStateSetResponse, ElectMasterResponse, RegisterBrokerResponse, GetReplicaInfoResponse)


def reply_matches_state(broker_name: str, response, after: ControllerMetadata) -> list[Violation]:
    """The master and epochs a reply reports equal the state after its events were applied."""
    if response.code not in (RC.SUCCESS, RC.CONTROLLER_MASTER_STILL_EXIST):
        return []
    if not isinstance(response, _EPOCH_REPLIES) or (isinstance(response, RegisterBrokerResponse) and response.master_broker_id is None):
        return []
    known = after.known(broker_name)
    if known is None:
        return [Violation("reply_matches_state", broker_name, "success reply for a set that does not exist")]
    s = known.sync_state
    expected: dict[str, object] = {}
    if isinstance(response, AlterSyncStateSetResponse):
        expected = {"new_sync_state_set_epoch": s.sync_state_set_epoch}
        if response.sync_state_set is not None and response.sync_state_set.sync_state_set != s.sync_state_set:
            return [Violation("reply_matches_state", broker_name, "alter reply set differs from the applied set")]
    elif isinstance(response, ElectMasterResponse):
        expected = {
            "master_broker_id": s.master_broker_id,
            "master_epoch": s.master_epoch,
            "sync_state_set_epoch": s.sync_state_set_epoch,
            "sync_state_set": s.sync_state_set,
        }
    elif isinstance(response, RegisterBrokerResponse):
        expected = {
            "master_broker_id": s.master_broker_id,
            "master_epoch": s.master_epoch,
            "sync_state_set_epoch": s.sync_state_set_epoch,
        }
    elif isinstance(response, GetReplicaInfoResponse):
        expected = {"master_broker_id": s.master_broker_id, "master_epoch": s.master_epoch}
    return [
        Violation("reply_matches_state", broker_name, f"{field}: reply {getattr(response, field)!r}, state {value!r}")
        for field, value in expected.items()
        if getattr(response, field) != value
    ]


NOT_LEADER = frozenset({RC.CONTROLLER_NOT_LEADER})
ALLOWED_CODES: Mapping[str, frozenset[ResponseCode]] = {
    "get_next_broker_id": frozenset({RC.SUCCESS}),
    "apply_broker_id": frozenset({RC.SUCCESS, RC.CONTROLLER_BROKER_ID_INVALID}),
    # 2012 only under rocketmq-5.0 (its CONTROLLER_REGISTER_BROKER_FAILED).
    "register_broker": frozenset({RC.SUCCESS, RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, RC.CONTROLLER_ELECT_MASTER_FAILED}),
    "get_replica_info": frozenset({RC.SUCCESS, RC.CONTROLLER_BROKER_METADATA_NOT_EXIST}),
    "alter_sync_state_set": frozenset(
        {
            RC.SUCCESS,
            RC.CONTROLLER_FENCED_MASTER_EPOCH,
            RC.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH,
            RC.CONTROLLER_INVALID_MASTER,
            RC.CONTROLLER_INVALID_REPLICAS,
            RC.CONTROLLER_BROKER_NOT_ALIVE,
            RC.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED,
        }
    ),
    "elect_master": frozenset(
        {
            RC.SUCCESS,
            RC.CONTROLLER_MASTER_NOT_AVAILABLE,
            RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
            RC.CONTROLLER_MASTER_STILL_EXIST,
            RC.CONTROLLER_ELECT_MASTER_FAILED,
        }
    ),
    "clean_broker_data": frozenset({RC.SUCCESS, RC.CONTROLLER_INVALID_CLEAN_BROKER_METADATA}),
}


def reply_code_allowed(api: str, code: int) -> list[Violation]:
    if code in ALLOWED_CODES[api] or code in NOT_LEADER:
        return []
    return [Violation("reply_code_allowed", api, f"code {int(code)} is not an answer of {api}")]


def alter_is_compare_and_set(
    before: ControllerMetadata, request: AlterSyncStateSetRequest, response, after: ControllerMetadata
) -> list[Violation]:
    """An accepted alter matched the recorded (master, masterEpoch, syncStateSetEpoch) and
    installed exactly the requested set at the next epoch; a rejected one changed nothing."""
    name = request.broker_name
    b, a = before.known(name), after.known(name)
    if response.code != RC.SUCCESS:
        return [] if before == after else [Violation("alter_is_compare_and_set", name, "rejected alter changed the state")]
    if b is None or a is None:
        return [Violation("alter_is_compare_and_set", name, "accepted alter on an unknown set")]
    s = b.sync_state
    expected = (s.master_broker_id, s.master_epoch, s.sync_state_set_epoch)
    got = (request.master_broker_id, request.master_epoch, request.sync_state_set_epoch)
    out = []
    if s.master_broker_id is None or expected != got:
        out.append(Violation("alter_is_compare_and_set", name, f"accepted {got} against recorded {expected}"))
    if a.sync_state.sync_state_set != request.new_sync_state_set or a.sync_state.sync_state_set_epoch != s.sync_state_set_epoch + 1:
        out.append(Violation("alter_is_compare_and_set", name, "accepted alter did not install the set at epoch + 1"))
    return out


def elected_master_was_eligible(
    before: ControllerMetadata, events: Sequence, config: ControllerConfig = DEFAULT_CONFIG
) -> list[Violation]:
    """A master installed by an ElectMaster event was in the SyncStateSet, or unclean
    election is on, or it was the set's first election (masterEpoch 0 or a new set)."""
    out = []
    for event in events:
        if not isinstance(event, ElectMasterEvent) or not event.new_master_elected:
            continue
        known = before.known(event.broker_name)
        if known is None or known.sync_state.is_first_time_for_elect or config.enable_elect_unclean_master:
            continue
        if event.new_master_broker_id not in known.sync_state.sync_state_set:
            out.append(
                Violation(
                    "elected_master_was_eligible",
                    event.broker_name,
                    f"{event.new_master_broker_id} elected outside {sorted(known.sync_state.sync_state_set)}",
                )
            )
    return out


def _progress(info) -> tuple:
    return (-(2**63), -(2**63)) if info is None else (info.epoch, info.max_offset)


def elected_master_most_up_to_date(
    before: ControllerMetadata,
    request: ElectMasterRequest,
    response,
    liveness,
    config: ControllerConfig = DEFAULT_CONFIG,
) -> list[Violation]:
    """A policy election (no designation, not the first one, old master gone) picks a
    candidate with the largest (epoch, maxOffset) among the alive brokers of its pass."""
    if response.code != RC.SUCCESS or request.designate_elect:
        return []
    known = before.known(request.broker_name)
    if known is None:
        return []
    s = known.sync_state
    if s.is_first_time_for_elect and request.names_a_broker:
        return []
    cluster, name, winner = known.cluster_name, request.broker_name, response.master_broker_id
    pool = s.sync_state_set if winner in s.sync_state_set else known.replicas.all_brokers()
    alive = [b for b in sorted(pool) if liveness.is_alive(cluster, name, b)]
    best = _progress(liveness.live_info(cluster, name, winner))
    better = [b for b in alive if _progress(liveness.live_info(cluster, name, b)) > best]
    if better:
        return [Violation("elected_master_most_up_to_date", name, f"elected {winner}, but {better} had a larger (epoch, maxOffset)")]
    return []


def no_stuck_dead_master(
    metadata: ControllerMetadata, truly_alive: Iterable[tuple[str, int]], config: ControllerConfig = DEFAULT_CONFIG
) -> list[Violation]:
    """After the leader's periodic scans: no set still records a master that is not alive
    while an electable broker (alive SyncStateSet member, or any alive replica with unclean
    election on) is alive. ``truly_alive``: (brokerName, brokerId) that heartbeat in time."""
    alive = set(truly_alive)
    out = []
    for name in sorted(metadata.sets):
        known = metadata.known(name)
        if known is None or known.sync_state.master_broker_id is None:
            continue
        s = known.sync_state
        if (name, s.master_broker_id) in alive:
            continue
        pool = known.replicas.all_brokers() if config.enable_elect_unclean_master else s.sync_state_set
        electable = sorted(b for b in pool if (name, b) in alive and known.replicas.is_broker_exist(b))
        if electable:
            out.append(Violation("no_stuck_dead_master", name, f"master {s.master_broker_id} dead while {electable} alive"))
    return out


def no_masterless_healthy_set(
    name: str, metadata: Optional[ControllerMetadata], held_ids: Iterable[Optional[int]],
    config: ControllerConfig = DEFAULT_CONFIG, held_master_epochs: Optional[Mapping[int, int]] = None,
) -> list[Violation]:
    """Liveness, asked by the harness when set ``name`` has had every node up on a clean
    network for a bound and still has no master that the active controller records
    (``metadata``: the active controller's, None when no controller is active;
    ``held_ids``: the broker id each live broker holds, None for one that has none yet).
    Without this, brokers or controllers that never do anything break no other property.
    A violation unless the rules leave the set without a master:

    * the set is known and no broker the elect policy may choose (its SyncStateSet; every
      replica with unclean election on, or before a first SyncStateSet) is alive and
      registered: its only in-sync member's machine was replaced, and the new one has a
      new id;
    * the set is unknown and every live broker holds an id: after an admin clean removed
      the set, a broker with an id on disk only registers, which an unknown set refuses
      (upstream's ``registerBrokerToController``; docs/controller-stack.md, finding 4);
    * after an admin clean restarted the set (the harness then gives ``held_master_epochs``:
      id -> the masterEpoch of the live broker holding it), the recorded master's id is held
      by a live broker whose own masterEpoch is above the recorded one: the restarted set's
      epochs start over, the broker kept its disk and the old, higher epoch, and it takes the
      controller's role changes for stale ones while the controller sees its master alive
      (upstream's changeToMaster/changeToSlave ignore an epoch not above their own).
      Without such a clean a broker above the recorded epoch is a controller's slip (an
      election that does not bump masterEpoch), and is judged."""
    held = list(held_ids)
    if metadata is None:
        return [Violation("no_masterless_healthy_set", name, "no controller is active")]
    known = metadata.known(name)
    if known is None:
        if held and None not in held:
            return []
        return [Violation("no_masterless_healthy_set", name,
                          f"the active controller knows no such set while live brokers hold ids {held}")]
    s = known.sync_state
    if s.master_broker_id is not None and (held_master_epochs or {}).get(s.master_broker_id, -1) > s.master_epoch:
        return []
    pool = (known.replicas.all_brokers() if config.enable_elect_unclean_master or not s.sync_state_set
            else s.sync_state_set)
    electable = sorted(b for b in pool if b in held and known.replicas.is_broker_exist(b))
    if not electable:
        return []
    return [Violation("no_masterless_healthy_set", name,
                      f"no master (recorded: {s.master_broker_id}, masterEpoch {s.master_epoch}) while "
                      f"{electable} are alive and electable")]


def slave_catches_up(slave: BrokerNodeView, master: BrokerNodeView, quiet_ms: int,
                     learns_role_ms: int = 0) -> list[Violation]:
    """Liveness, asked by the harness of each live broker but the current master once every
    node has been up on a clean network, the master's log unchanged, and the broker's own
    role and log end unchanged, for a bound (``quiet_ms`` so far): the broker is a slave of
    that master in its masterEpoch and holds its log, message by message. Without it brokers
    that never replicate (a slave that never hand-shakes: the SyncStateSet stays {master},
    whose writes need no other ack) break no other property. A slave that holds the log but still follows an older masterEpoch (or
    master id) is given ``learns_role_ms``: it learns its role by polling one controller at
    a time (getReplicaInfo, every ``syncBrokerMetadataPeriod``), and those that are not
    active answer CONTROLLER_NOT_LEADER, so finding the active one takes up to a poll per
    controller."""
    holds_log = slave.max_offset == master.max_offset \
        and [(e.msg_id, e.start) for e in slave.log] == [(e.msg_id, e.start) for e in master.log]
    follows = (slave.role_state.role is Role.SLAVE and slave.role_state.master_epoch == master.role_state.master_epoch
               and slave.role_state.master_broker_id == master.broker_id)
    if holds_log and (follows or (slave.role_state.role is Role.SLAVE and quiet_ms < learns_role_ms)):
        return []
    state = slave.role_state
    return [Violation("slave_catches_up", slave.node_id,
                      f"{slave.node_id} ({state.role.name} of {state.master_broker_id} in masterEpoch "
                      f"{state.master_epoch}) holds {slave.max_offset}, master {master.node_id} (id {master.broker_id}, "
                      f"masterEpoch {master.role_state.master_epoch}) {master.max_offset}: neither moved for {quiet_ms} ms "
                      f"with every node up on a clean network")]


def produce_answered(msg_id: str, broker: str, waited_ms: int, bound_ms: int) -> list[Violation]:
    """Liveness, asked by the harness of each write it sent to the current master of a
    healthy set (every node up on a clean network) that stayed healthy, with that broker
    still up in the same role and masterEpoch: the producer has its answer within
    ``bound_ms`` (PUT_OK, or a failure such as FLUSH_SLAVE_TIMEOUT at the write's timeout).
    A write that a role change or a crash overtakes may go unanswered (docs/adapter-protocol.md,
    "A waiting write outlives no role change"), so the harness stops asking then. Without
    this a broker that never answers breaks no other property."""
    if waited_ms < bound_ms:
        return []
    return [Violation("produce_answered", broker, f"{msg_id} to master {broker}: no answer after {waited_ms} ms "
                                                  f"with every node up on a clean network")]


def _forget_recreated_sets(recorded: Mapping, metadata: ControllerMetadata, epoch_field: str,
                           behind: bool = False) -> dict:
    """Drop the records of sets that are gone, or were removed by an admin clean and
    created again (their epoch went back): such a set starts over. Not on the word of a
    controller ``behind`` the entries another has applied (restarted and replaying its log,
    or lagging): a set it does not know yet, or knows at an older epoch, is its past, not
    a clean (seed 50246: every controller restarted, and the first to show its metadata
    had applied nothing yet)."""
    kept = dict(recorded)
    if behind:
        return kept
    for name in sorted({k[0] for k in kept}):
        known = metadata.known(name)
        newest = max(e for (n, e) in kept if n == name)
        if known is None or getattr(known.sync_state, epoch_field) < newest:
            kept = {k: v for k, v in kept.items() if k[0] != name}
    return kept


@attrs.frozen(slots=True)
class CheckCodeHistory:
    """(brokerName, brokerId) -> registerCheckCode, while the id stays registered.

    An admin clean unregisters ids, and a broker may then apply for a cleaned id again (it
    asked getNextBrokerId before the clean): the id is registered anew with another check
    code, and a controller that lags still shows the old registration after the new one.
    So an id a clean unregistered (``note_clean``: ``reassignable``) may carry another check
    code from then on; an id never cleaned must keep its first.

    ``observe`` reads cleans from the metadata too: an id it recorded that a controller
    ``behind`` no other (not replaying its log, not lagging) no longer registers was
    unregistered, as only an admin clean does, also one whose proposer lost its leadership
    before reporting it (seed 5928 showed such a clean of a whole set)."""

    codes: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)
    reassignable: frozenset = frozenset()  # (brokerName, brokerId) an admin clean unregistered once

    def observe(self, metadata: ControllerMetadata,
                behind: bool = False) -> tuple["CheckCodeHistory", list[Violation]]:
        reassignable = self.reassignable
        if not behind:
            reassignable |= {key for key in self.codes if not _registered(metadata, *key)}
        seen: dict = {}
        out = []
        for name in sorted(metadata.sets):
            replicas = metadata.sets[name].replicas
            if replicas is None:
                continue
            for broker_id, registration in replicas.brokers.items():
                key = (name, broker_id)
                code = registration.register_check_code
                old = self.codes.get(key)
                if old is not None and code != old and key not in reassignable:
                    # (in either order: a controller that lags shows the older one after the newer)
                    first, second = sorted((old, code), key=repr)
                    out.append(Violation("broker_id_check_code_stable", f"{name}/{broker_id}",
                                         f"registered with {first!r} and with {second!r}"))
                seen[key] = code if code is not None else old
        return CheckCodeHistory(FrozenMap({k: v for k, v in seen.items() if v is not None}), reassignable), out

    def note_clean(self, broker_name: str, broker_ids: Iterable[int]) -> "CheckCodeHistory":
        """An admin clean unregistered ``broker_ids`` of the set: each may be registered again."""
        return CheckCodeHistory(self.codes, self.reassignable | {(broker_name, i) for i in broker_ids})


def _registered(metadata: ControllerMetadata, broker_name: str, broker_id: int) -> bool:
    replicas = getattr(metadata.get(broker_name), "replicas", None)
    return replicas is not None and broker_id in replicas.brokers


def _cleaned_out(before: frozenset, after: frozenset, broker_set) -> bool:
    """``after`` is ``before`` minus brokers that an admin clean unregistered."""
    if not after < before:
        return False
    replicas = getattr(broker_set, "replicas", None)
    registered = set(replicas.brokers) if replicas is not None else set()
    return not (before - after) & registered


@attrs.frozen(slots=True)
class SyncStateSetHistory:
    """(brokerName, syncStateSetEpoch) -> the SyncStateSet the controller had at that epoch."""

    sets: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)
    # (brokerName, syncStateSetEpoch) -> ids an admin clean removed from that epoch's set
    cleaned: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    def observe_controller(self, metadata: ControllerMetadata,
                           behind: bool = False) -> tuple["SyncStateSetHistory", list[Violation]]:
        recorded = _forget_recreated_sets(self.sets, metadata, "sync_state_set_epoch", behind)
        # kept even when a lagging controller makes the sets be forgotten: a whole-set clean
        # (note_clean without ids) is what ends them
        cleaned = dict(self.cleaned)
        out = []
        for name in sorted(metadata.sets):
            known = metadata.known(name)
            if known is None:
                continue
            key = (name, known.sync_state.sync_state_set_epoch)
            members = known.sync_state.sync_state_set
            if key in recorded and recorded[key] != members:
                if _cleaned_out(recorded[key], members, metadata.sets[name]):
                    # an admin clean removed ids without a new epoch (upstream does)
                    cleaned[key] = cleaned.get(key, frozenset()) | (recorded[key] - members)
                    recorded[key] = members
                    continue
                if recorded[key] <= members <= recorded[key] | cleaned.get(key, frozenset()):
                    continue  # a controller that has not applied that clean yet (it lags, or replays)
                out.append(Violation("sync_state_set_epoch_unique", name, f"epoch {key[1]}: {sorted(recorded[key])} and {sorted(members)}"))
            recorded.setdefault(key, members)
        return SyncStateSetHistory(FrozenMap(recorded), FrozenMap(cleaned)), out

    def note_clean(self, broker_name: str, epoch: int, ids: Iterable[int]) -> "SyncStateSetHistory":
        """An admin clean of ``ids`` decided at ``epoch``, or of the whole set if none (an
        observer that sees the decision tells the history, whose snapshots may never show
        the set as it was just before the clean)."""
        ids = frozenset(ids)
        if not ids:
            return SyncStateSetHistory(self.sets, FrozenMap({k: v for k, v in self.cleaned.items()
                                                             if k[0] != broker_name}))
        key = (broker_name, epoch)
        return SyncStateSetHistory(self.sets, self.cleaned.set(key, self.cleaned.get(key, frozenset()) | ids))

    def check_broker(self, broker_name: str, broker: str, members: frozenset[int], epoch: int) -> list[Violation]:
        """A broker's local SyncStateSet at ``epoch`` equals the controller's at that epoch
        (a master still holding ids an admin clean removed in that epoch agrees: the clean
        changes no epoch and tells no broker)."""
        recorded = self.sets.get((broker_name, epoch))
        if recorded is None or recorded == frozenset(members):
            return []
        gone = self.cleaned.get((broker_name, epoch), frozenset())
        if recorded <= frozenset(members) <= recorded | gone:
            return []
        return [
            Violation(
                "sync_state_set_epoch_unique", broker, f"local {sorted(members)} at epoch {epoch}, controller {sorted(recorded)}"
            )
        ]


# --------------------------------------------------------------------------- brokers


@attrs.frozen(slots=True)
class MasterEpochHistory:
    """(brokerName, masterEpoch) -> the one broker that is master in it.

    Fed by the controller's metadata (the master it records for each masterEpoch) and
    by the brokers (an unfenced master accepts writes in its masterEpoch): two
    different brokers for one key violate the invariant.
    """

    masters: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    def _claim(self, broker_name: str, epoch: int, broker_id: int, who: str) -> tuple["MasterEpochHistory", list[Violation]]:
        key = (broker_name, epoch)
        holder = self.masters.get(key)
        if holder is None:
            return MasterEpochHistory(self.masters.set(key, broker_id)), []
        if holder == broker_id:
            return self, []
        return self, [
            Violation("one_master_per_master_epoch", broker_name, f"{who}: brokers {holder} and {broker_id} both master in masterEpoch {epoch}")
        ]

    def observe(self, broker_name: str, state: BrokerRoleState) -> tuple["MasterEpochHistory", list[Violation]]:
        """A broker's role state: counts only while it is an unfenced master."""
        if not state.writable:
            return self, []
        return self._claim(broker_name, state.master_epoch, state.broker_id, "unfenced master")

    def observe_controller(self, metadata: ControllerMetadata,
                           behind: bool = False) -> tuple["MasterEpochHistory", list[Violation]]:
        history, out = MasterEpochHistory(_forget_recreated_sets(self.masters, metadata, "master_epoch", behind)), []
        for name in sorted(metadata.sets):
            known = metadata.known(name)
            if known is None or known.sync_state.master_broker_id is None:
                continue
            history, found = history._claim(name, known.sync_state.master_epoch, known.sync_state.master_broker_id, "controller")
            out += found
        return history, out


@attrs.frozen(slots=True)
class AppliedEpochHistory:
    """Per broker incarnation, the largest masterEpoch it applied."""

    epochs: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    def observe(self, broker: str, state: BrokerRoleState, restarted: bool = False) -> tuple["AppliedEpochHistory", list[Violation]]:
        # A restart forgets the in-memory epoch; the durable guard is the epoch file.
        last = None if restarted else self.epochs.get(broker)
        updated = AppliedEpochHistory(self.epochs.set(broker, state.master_epoch if last is None else max(last, state.master_epoch)))
        if last is not None and state.master_epoch < last:
            return updated, [Violation("never_apply_older_epoch", broker, f"applied masterEpoch {state.master_epoch} after {last}")]
        return updated, []


def confirm_offset_bounded(
    broker: str, confirm_offset: int, max_offset: int, member_max_offsets: Mapping[int, int]
) -> list[Violation]:
    """A master's confirmOffset lies in [0, maxOffset] and is <= the max offset of every
    in-sync member (``member_max_offsets``: the members' actual log ends)."""
    out = []
    if not 0 <= confirm_offset <= max_offset:
        out.append(Violation("confirm_offset_bounded", broker, f"confirmOffset {confirm_offset} outside [0, {max_offset}]"))
    above = sorted(m for m, end in member_max_offsets.items() if confirm_offset > end)
    if above:
        out.append(Violation("confirm_offset_bounded", broker, f"confirmOffset {confirm_offset} past the logs of {above}"))
    return out


# --------------------------------------------------------------------------- messages


# An admin cleanBrokerMetadata that leaves a broker set without its SyncStateInfo (it
# listed every id of the SyncStateSet, e.g. a dead master's set of one, or it removed the
# whole set) makes the set start afresh: the next broker to register is the first of a new
# set, elected master with its own log, and the others truncate to it (upstream's
# handleCleanBrokerDataEvent removes an emptied SyncStateInfo; isContainsBroker then
# fails). What was written before such a clean can be lost so, and while brokers keep old
# ids the new set hands out again, two may act as one member: the finding CLEAN_RESTARTS_SET
# (docs/controller-stack.md), not a violation.
CLEAN_RESTARTS_SET = "clean_restarts_broker_set"


def set_restarted(before: ControllerMetadata, after: ControllerMetadata, broker_name: str) -> bool:
    """Whether ``broker_name``, known in ``before``, is unknown in ``after`` (a half, or
    nothing, left: it starts afresh at its next registration) or known again with its epochs
    started over (it was, and was registered again, in between)."""
    old, new = before.known(broker_name), after.known(broker_name)
    if old is None:
        return False
    return new is None or (new.sync_state.master_epoch, new.sync_state.sync_state_set_epoch) < (
        old.sync_state.master_epoch, old.sync_state.sync_state_set_epoch)


def clean_restarts_set(before: ControllerMetadata, events: Iterable[object], broker_name: str) -> bool:
    """Whether applying a clean's ``events`` to ``before`` restarts ``broker_name``
    (``set_restarted``)."""
    after = before
    for event in events:
        after = apply_event(after, event)
    return set_restarted(before, after, broker_name)


def _missing(invariant: str, required: Iterable[str], log: Iterable[LogEntry]) -> list[Violation]:
    present = {e.msg_id for e in log}
    return [Violation(invariant, msg_id, "not in the master's log") for msg_id in sorted(set(required) - present)]


def acknowledged_messages_present(acknowledged: Iterable[str], master_log: Iterable[LogEntry]) -> list[Violation]:
    """No acknowledged message is lost: each is in the current master's log."""
    return _missing("no_acknowledged_message_lost", acknowledged, master_log)


def consumed_messages_present(consumed: Iterable[str], master_log: Iterable[LogEntry]) -> list[Violation]:
    """Consumers never see a message that is later truncated: each delivered one is still there."""
    return _missing("consumed_message_never_truncated", consumed, master_log)


def queue_offset_reuses(log: Iterable[LogEntry]) -> list[tuple[str, int, str, str]]:
    """Each (queue, queue offset, first message, later message) of ``log`` where a later
    message takes a queue offset an earlier one holds."""
    owner: dict[tuple[str, int], str] = {}
    out = []
    for entry in log:
        key = (entry.queue, entry.queue_offset)
        if key in owner and owner[key] != entry.msg_id:
            out.append((entry.queue, entry.queue_offset, owner[key], entry.msg_id))
        owner.setdefault(key, entry.msg_id)
    return out


def queue_offsets_unique(log: Iterable[LogEntry]) -> list[Violation]:
    """No two messages of one log share a (queue, queue offset)."""
    return [Violation("queue_offsets_never_reused", f"{queue}@{offset}", f"{first} and {later}")
            for queue, offset, first, later in queue_offset_reuses(log)]
