"""Known-bad variants of the controller-mode spec ("mutants").

Each mutant is a name, the upstream issue it reproduces (None for a synthetic one
that exists to show an invariant can fail), a description, and the procedures it
replaces in :class:`spec.controller.rules.ControllerRules` or
:class:`spec.broker.rules.BrokerRules`. The conformance layer runs them as
``mutant:NAME`` adapters; tests/controller and tests/broker show that each one is
caught by the invariant it names.
"""
from __future__ import annotations

import functools
from typing import Mapping, Optional

import attrs

from spec.broker import confirm_offset as _confirm
from spec.broker import sync_state_set as _sss
from spec.broker import write as _write
from spec.broker.records import BrokerRoleState, Role
from spec.broker.role import RoleDecision, RoleOutcome, change_broker_role
from spec.broker.rules import DEFAULT_BROKER_RULES, BrokerRules
from spec.controller import api as _api
from spec.controller import events as _events
from spec.controller import elect_policy as _policy
from spec.controller.heartbeat import HeartbeatTable, on_broker_heartbeat
from spec.controller.profiles import DEFAULT_PROFILE
from spec.controller.records import (
    AlterSyncStateSetResponse,
    BrokerRegistration,
    GetNextBrokerIdRequest,
    GetNextBrokerIdResponse,
    GetReplicaInfoRequest,
    ResponseCode,
    SyncStateInfo,
)
from spec.controller.scheduling import scan_need_reelect_broker_sets
from spec.controller.rules import DEFAULT_RULES, ControllerRules
from spec.frozenmap import FrozenMap, frozen_map
from spec.mutants import MutantInfo
from spec.truncation import replication as _replication
from spec.truncation.variants import VARIANTS as _TRUNCATION_VARIANTS

CONTROLLER = "controller"
BROKER = "broker"


@attrs.frozen(slots=True)
class Mutant(MutantInfo):
    layer: str  # CONTROLLER or BROKER: which rules bundle it changes
    replaces: FrozenMap = attrs.field(converter=frozen_map)  # field -> procedure

    def apply(self, rules):
        return attrs.evolve(rules, **dict(self.replaces))


def _broker_ha_variant(name: str, procedure: str, variant: str, description: str, violates: str) -> "Mutant":
    """A broker whose HA ``procedure`` (a ``BrokerRules`` field, the name of its
    spec/truncation/replication.py function) is the truncation variant ``variant``'s."""
    return Mutant(name, None, description, violates, BROKER,
                  {procedure: functools.partial(getattr(_replication, procedure), variant=_TRUNCATION_VARIANTS[variant])})


# --------------------------------------------------------------------------- controller mutants


def _serves_on_an_entry_of_its_term(applied, own_empty_proposal, last_applied_term, term):
    """The reference before session 10's fix: the leader state once an entry of its own term is applied."""
    return last_applied_term == term



def _alter_npe_without_master(metadata, request, liveness, **kwargs):
    """#7293: the master check dereferenced the recorded master; with none it threw, and the
    controller answered the failed future with a system error."""
    known = metadata.known(request.broker_name)
    if known is not None and request.new_sync_state_set != known.sync_state.sync_state_set:
        if known.sync_state.master_broker_id is None:
            return _api.ControllerResult(
                AlterSyncStateSetResponse(ResponseCode.SYSTEM_ERROR), check="null_pointer_exception"
            )
    return _api.alter_sync_state_set(metadata, request, liveness, **kwargs)


def _alter_ignoring_sync_state_set_epoch(metadata, request, liveness, **kwargs):
    known = metadata.known(request.broker_name)
    if known is not None:
        request = attrs.evolve(request, sync_state_set_epoch=known.sync_state.sync_state_set_epoch)
    return _api.alter_sync_state_set(metadata, request, liveness, **kwargs)


def _elect_reply_old_epoch(metadata, request, liveness, *, profile=None, **kwargs):
    stale = attrs.evolve(profile or DEFAULT_PROFILE, elected_reply_sync_state_set_epoch_increment=0)
    return _api.elect_master(metadata, request, liveness, profile=stale, **kwargs)


def _elect_without_first_election(metadata, request, liveness, *, profile=None, **kwargs):
    """A port that leaves a new set's first election to the elect policy: with an empty
    SyncStateSet and unclean election off it finds no candidate, and the set never gets a
    master (rocketmq-5.1; under rocketmq-5.0 the first registrant is master anyway)."""
    profile = profile or DEFAULT_PROFILE
    rules = tuple(r for r in profile.elect_winner_rules if r is not _api.FIRST_ELECTION)
    return _api.elect_master(metadata, request, liveness, profile=attrs.evolve(profile, elect_winner_rules=rules),
                             **kwargs)


def _elect_always_unclean(metadata, request, liveness, *, config, **kwargs):
    return _api.elect_master(metadata, request, liveness, config=attrs.evolve(config, enable_elect_unclean_master=True), **kwargs)


def _java_int(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def _narrowing_compare(a, b) -> int:
    """``DefaultElectPolicy``'s comparator before #10578: the offset difference cast to int."""
    (_, ia), (_, ib) = a, b
    if ia is None or ib is None:
        return (ia is None) - (ib is None)
    if ia.epoch != ib.epoch:
        return ib.epoch - ia.epoch
    if ia.max_offset != ib.max_offset:
        return _java_int(ib.max_offset - ia.max_offset)
    return ia.election_priority - ib.election_priority


class _TreeSetNode:
    __slots__ = ("item", "left", "right", "parent", "red")

    def __init__(self, item, parent):
        self.item, self.left, self.right, self.parent, self.red = item, None, None, parent, True


def _java_tree_set_first(items, compare):
    """``TreeSet.first()`` after adding ``items`` in order (``java.util.TreeMap``'s red-black tree).

    With a comparator that is not a total order (the narrowed one) the answer depends on
    the tree's shape, so the insertion and its rebalancing are reproduced exactly. An item
    comparing equal to one already in the tree is not added.
    """
    root = None

    def rotate(x, left: bool):
        y = x.right if left else x.left
        inner = y.left if left else y.right
        if left:
            x.right = inner
        else:
            x.left = inner
        if inner is not None:
            inner.parent = x
        y.parent = x.parent
        if x.parent is None:
            nonlocal root
            root = y
        elif x.parent.left is x:
            x.parent.left = y
        else:
            x.parent.right = y
        if left:
            y.left = x
        else:
            y.right = x
        x.parent = y

    def red(n) -> bool:
        return n is not None and n.red

    for item in items:
        if root is None:
            root = _TreeSetNode(item, None)
            root.red = False
            continue
        t = root
        while True:
            c = compare(item, t.item)
            if c == 0:
                break
            nxt = t.left if c < 0 else t.right
            if nxt is None:
                x = _TreeSetNode(item, t)
                if c < 0:
                    t.left = x
                else:
                    t.right = x
                break
            t = nxt
        if c == 0:
            continue
        while x is not root and x.parent.red:  # TreeMap.fixAfterInsertion
            parent, grand = x.parent, x.parent.parent
            parent_is_left = parent is grand.left
            uncle = grand.right if parent_is_left else grand.left
            if red(uncle):
                parent.red, uncle.red, grand.red = False, False, True
                x = grand
                continue
            if x is (parent.right if parent_is_left else parent.left):
                x = parent
                rotate(x, left=parent_is_left)
                parent, grand = x.parent, x.parent.parent
            parent.red, grand.red = False, True
            rotate(grand, left=not parent_is_left)
        root.red = False
    node = root
    while node is not None and node.left is not None:
        node = node.left
    return None if node is None else node.item


def _order_narrowing(candidates):
    """The narrowed comparator's winner first, as upstream's TreeSet finds it (candidates
    added in HashSet order); the order of the rest does not matter to the policy."""
    by_id = dict(candidates)
    order = _policy.java_hash_set_order(by_id)  # the spec's definition, looked up at each call
    first = _java_tree_set_first([(b, by_id[b]) for b in order], _narrowing_compare)
    return [first[0]] + [b for b in order if b != first[0]]


def _heartbeat_only_known(table: HeartbeatTable, heartbeat, now: int) -> HeartbeatTable:
    """#5712: only brokers that registered with *this* controller node had an entry to refresh."""
    if table.get(heartbeat.identity) is None:
        return table
    return on_broker_heartbeat(table, heartbeat, now)


def _apply_elect_keeping_master_epoch(metadata, event):
    after = _events.apply_event(metadata, event)
    if isinstance(event, _events.ElectMasterEvent) and event.new_master_elected:
        before, known = metadata.known(event.broker_name), after.known(event.broker_name)
        if before is not None and known is not None:
            state = attrs.evolve(known.sync_state, master_epoch=before.sync_state.master_epoch)
            after = after.with_set(event.broker_name, attrs.evolve(known, sync_state=state))
    return after


def _apply_elect_resetting_epoch(metadata, event):
    after = _events.apply_event(metadata, event)
    if isinstance(event, _events.ElectMasterEvent) and event.new_master_elected:
        known = after.known(event.broker_name)
        if known is not None:
            s = known.sync_state
            state = SyncStateInfo(s.master_broker_id, s.master_epoch, s.sync_state_set, s.master_epoch)
            after = after.with_set(event.broker_name, attrs.evolve(known, sync_state=state))
    return after


def _apply_broker_id_any_code(metadata, request, liveness=None, **kwargs):
    found = metadata.get(request.broker_name)
    if found is not None and found.replicas is not None and found.replicas.is_broker_exist(request.applied_broker_id):
        return _api.ControllerResult(
            _api.ApplyBrokerIdResponse(ResponseCode.SUCCESS),
            (
                _events.ApplyBrokerIdEvent(
                    request.cluster_name,
                    request.broker_name,
                    request.broker_address,
                    request.applied_broker_id,
                    request.register_check_code,
                ),
            ),
            check="broker_id_taken_over",
        )
    return _api.apply_broker_id(metadata, request, liveness, **kwargs)


def _apply_overwriting_broker_id(metadata, event):
    if isinstance(event, _events.ApplyBrokerIdEvent):
        known = metadata.known(event.broker_name)
        if known is not None and known.replicas.is_broker_exist(event.new_broker_id):
            registration = BrokerRegistration(event.broker_address, event.register_check_code)
            replicas = attrs.evolve(known.replicas, brokers=known.replicas.brokers.set(event.new_broker_id, registration))
            return metadata.with_set(event.broker_name, attrs.evolve(known, replicas=replicas))
    return _events.apply_event(metadata, event)


def _follower_serves_reads(request, metadata=None, **kwargs):
    """A controller that is not the leader answers the read-only calls (getReplicaInfo,
    getNextBrokerId) from its own applied metadata, which may lag the leader's."""
    if metadata is not None and isinstance(request, GetReplicaInfoRequest):
        return _api.get_replica_info(metadata, request)
    if metadata is not None and isinstance(request, GetNextBrokerIdRequest):
        return _api.get_next_broker_id(metadata, request)
    return _api.controller_not_leader(request)


def _register_names_dead_master(metadata, request, liveness, **kwargs):
    """registerBroker names the recorded master whether or not it is alive."""
    result = _api.register_broker(metadata, request, liveness, **kwargs)
    known = metadata.known(request.broker_name)
    if result.code != ResponseCode.SUCCESS or known is None or result.response.master_broker_id is not None:
        return result
    state = known.sync_state
    if not state.is_master_exist:
        return result
    response = attrs.evolve(result.response, master_broker_id=state.master_broker_id,
                            master_address=known.replicas.broker_address(state.master_broker_id),
                            master_epoch=state.master_epoch, sync_state_set_epoch=state.sync_state_set_epoch)
    return attrs.evolve(result, response=response)


def _replica_info_hides_dead_master(metadata, request, liveness=None, **kwargs):
    """getReplicaInfo filters the recorded master by liveness: a dead one is reported as none."""
    result = _api.get_replica_info(metadata, request, liveness)
    known = metadata.known(request.broker_name)
    master = result.response.master_broker_id
    if known is None or master is None or liveness is None or liveness.is_alive(known.cluster_name, request.broker_name, master):
        return result
    return attrs.evolve(result, response=attrs.evolve(result.response, master_broker_id=None, master_address=None))


def _next_broker_id_from_zero(metadata, request, liveness=None, **kwargs):
    """getNextBrokerId counts ids from 0: a set without replicas gets 0, not 1."""
    result = _api.get_next_broker_id(metadata, request, liveness)
    if result.check == "broker_set_unknown":
        return attrs.evolve(result, response=GetNextBrokerIdResponse(ResponseCode.SUCCESS, 0))
    return result


def _forced_clean_keeps_unlisted(metadata, request, liveness, **kwargs):
    """A forced clean (cleanLivingBroker) with an id list removes only the listed ids (upstream
    parses the list only without cleanLivingBroker, so it removes the whole set)."""
    result = _api.clean_broker_data(metadata, request, liveness, **kwargs)
    if result.code == ResponseCode.SUCCESS and request.clean_living_broker and request.broker_ids_to_clean:
        return attrs.evolve(result, events=(_events.CleanBrokerDataEvent(request.broker_name, request.broker_ids_to_clean),))
    return result


def _reelect_masterless_sets(metadata, liveness):
    """The re-elect scan also elects for sets that record no master (masterEpoch > 0) while a
    replica lives, instead of leaving them to the brokers' own electMaster."""
    due = set(scan_need_reelect_broker_sets(metadata, liveness))
    for name, found in metadata.sets.items():
        state, replicas = found.sync_state, found.replicas
        if state is None or replicas is None or state.master_broker_id is not None or state.master_epoch == 0:
            continue
        if any(liveness.is_alive(found.cluster_name, name, b) for b in sorted(replicas.brokers)):
            due.add(name)
    return tuple(sorted(due))


# --------------------------------------------------------------------------- broker mutants


def _batch_within_confirm_offset(master_file, log, from_offset, confirm_offset, max_bytes):
    """A master ships a slave only what its confirmOffset covers (the bound of what consumers
    may read, taken for what may be sent): a slave behind it in the SyncStateSet holds the
    confirmOffset down, so nothing more is ever shipped, and nothing unsafe happens."""
    if confirm_offset <= from_offset:
        return None
    return _replication.next_batch(master_file, log, from_offset, confirm_offset,
                                   min(max_bytes, confirm_offset - from_offset))


def _never_releases_a_write(need_ack_nums, next_offset, sync_state_set, master_id, acks, now, deadline):
    """A write is never released: neither PUT_OK when its acks are in nor FLUSH_SLAVE_TIMEOUT at
    its deadline (synthetic: the producer waits forever; nothing unsafe is ever said)."""
    return _write.ReplicationOutcome.WAITING


def _in_use_local_only(state):
    """#5663: only the controller-accepted set counted; a pending expansion did not."""
    return state.local


def _confirm_ignoring_unconnected(max_offset, sync_state_set, master_id, acks, current_confirm_offset):
    """#6662: a member without a connection simply did not take part in the min."""
    confirm = max_offset
    for slave_id, ack in acks.items():
        if slave_id in sync_state_set and ack > 0:
            confirm = min(confirm, ack)
    return _confirm.ConfirmDecision(_confirm.ConfirmOutcome.COMPUTED, confirm)


def _confirm_counting_unreported_ack(max_offset, sync_state_set, master_id, acks, current_confirm_offset):
    """#6728: a connection that had not acked yet (-1) took part in the min."""
    decision = _confirm.compute_master_confirm_offset(max_offset, sync_state_set, master_id, acks, current_confirm_offset)
    if decision.outcome is _confirm.ConfirmOutcome.MEMBER_NOT_CONNECTED and any(m in acks for m in decision.unconnected):
        decision = _confirm.ConfirmDecision(_confirm.ConfirmOutcome.COMPUTED, max_offset)
    elif decision.outcome is not _confirm.ConfirmOutcome.COMPUTED:
        return decision
    members = [ack for slave_id, ack in acks.items() if slave_id in sync_state_set]
    return attrs.evolve(decision, confirm_offset=min([max_offset, *members]))


def _confirm_skipping_unacked(max_offset, sync_state_set, master_id, acks, current_confirm_offset):
    """The note's rule and upstream HEAD's ``computeConfirmOffset``: acks <= 0 are skipped."""
    unconnected = tuple(sorted(m for m in sync_state_set if m != master_id and m not in acks))
    if unconnected:
        return _confirm.ConfirmDecision(_confirm.ConfirmOutcome.MEMBER_NOT_CONNECTED, current_confirm_offset, unconnected)
    positive = [ack for slave_id, ack in acks.items() if slave_id in sync_state_set and ack > 0]
    return _confirm.ConfirmDecision(_confirm.ConfirmOutcome.COMPUTED, min([max_offset, *positive]))


def _adopt_self(self_id, sync_state_set, epoch):
    """#6342: the new master took {self} at the controller's syncStateSetEpoch."""
    return frozenset({self_id}), epoch


def _shrink_including_master(local, master_id, caught_up_time, now, config=_sss.DEFAULT_HA_CONFIG):
    """#7219: the never-connected rule also hit the master, which has no caught-up time."""
    decision = _sss.maybe_shrink(local, master_id, caught_up_time, now, config)
    if master_id in local and master_id not in caught_up_time:
        removed = tuple(sorted((*decision.removed, (master_id, _sss.NEVER_CONNECTED))))
        return _sss.ShrinkDecision(True, decision.new_set - {master_id}, removed)
    return decision


def _restart_in_configured_role(persisted: BrokerRoleState) -> BrokerRoleState:
    """#6508: before the fix a restarted broker served at once in its configured role, a
    master, at the last masterEpoch it knew, before the controller had confirmed any role."""
    if persisted.broker_id is None:
        return BrokerRoleState(broker_id=None)  # never registered: nothing to serve as
    return attrs.evolve(persisted, role=Role.MASTER, fenced=False, master_broker_id=persisted.broker_id,
                        master_address=None)


def _recovered_dispatch_to_log_end(confirm_offset: int, max_offset: int) -> int:
    """#6609: after a restart the consume queue was rebuilt up to the end of the log."""
    return max_offset


def _queue_offsets_from_consume_queue(log, confirm_offset: int) -> dict[str, int]:
    """#7689: queue offsets recovered from the consume queue, which stops at confirmOffset."""
    offsets: dict[str, int] = {}
    for entry in log:
        if entry.end <= confirm_offset:
            offsets[entry.queue] = max(offsets.get(entry.queue, 0), entry.queue_offset + 1)
    return offsets


def _ack_ignoring_learner(local, connection, ack_offset, master_max_offset, confirm_offset, epoch_start_offset, now):
    """An async learner's acks are judged as any slave's: once caught up it joins the SyncStateSet."""
    return _sss.on_slave_ack(local, attrs.evolve(connection, is_async_learner=False), ack_offset, master_max_offset,
                             confirm_offset, epoch_start_offset, now)


def _alter_rejection_drops_proposal(state, response):
    """A rejected alter drops the pending proposal, although the controller may have accepted
    an earlier alter whose reply was lost."""
    outcome, after = _sss.on_alter_sync_state_set_reply(state, response)
    if outcome is _sss.ApplyOutcome.REJECTED_PROPOSAL_KEPT:
        return outcome, attrs.evolve(state, proposed=None)
    return outcome, after


def _admission_ignoring_all_ack(role, sync_state_set, config=_write.DEFAULT_HA_CONFIG):
    """allAckInSyncStateSet ignored: a write needs inSyncReplicas acks (the master alone by default)."""
    decision = _write.check_write_admission(role, sync_state_set, config)
    return attrs.evolve(decision, need_ack_nums=config.in_sync_replicas) if decision.admitted else decision


def _change_role_any_epoch(state, master_broker_id, master_address, master_epoch, *args, **kwargs) -> RoleDecision:
    """Applies a role notification whatever its masterEpoch."""
    if master_broker_id is None or master_epoch is None:
        return RoleDecision(RoleOutcome.NO_MASTER, state)
    forced = attrs.evolve(state, master_epoch=min(state.master_epoch, master_epoch - 1))
    return change_broker_role(forced, master_broker_id, master_address, master_epoch, *args, **kwargs)


# --------------------------------------------------------------------------- the registry

_ALL = (
    Mutant(
        "expand-counted-after-ack", "#5663",
        "a pending expansion is not counted: writes acknowledged by the old set only",
        "no_acknowledged_message_lost",
        BROKER, {"in_use": _in_use_local_only},
    ),
    Mutant(
        "confirm-offset-ignores-unconnected-member", "#6662",
        "confirmOffset computed over connected members only, ignoring an in-sync member without a connection",
        "confirm_offset_bounded",
        BROKER, {"compute_master_confirm_offset": _confirm_ignoring_unconnected},
    ),
    Mutant(
        "confirm-offset-counts-unreported-ack", "#6728",
        "a connection's ack of -1 (not yet reported) enters the confirmOffset min",
        "confirm_offset_bounded",
        BROKER, {"compute_master_confirm_offset": _confirm_counting_unreported_ack},
    ),
    Mutant(
        "confirm-offset-skips-unacked-member", None,
        "confirmOffset skips acks <= 0 (the note's rule, upstream HEAD): a member that has just "
        "connected, or whose log is empty, no longer bounds it",
        "confirm_offset_bounded",
        BROKER, {"compute_master_confirm_offset": _confirm_skipping_unacked},
    ),
    Mutant(
        "new-master-adopts-self", "#6342",
        "a broker becoming master adopts {self} at the controller's syncStateSetEpoch",
        "sync_state_set_epoch_unique",
        BROKER, {"adopt_sync_state_set_on_promotion": _adopt_self},
    ),
    Mutant(
        "shrink-removes-master", "#7219",
        "the shrink check drops the master itself (it has no caught-up time)",
        "master_in_sync_state_set",
        BROKER, {"maybe_shrink": _shrink_including_master},
    ),
    Mutant(
        "alter-without-master-crashes", "#7293",
        "alterSyncStateSet on a set without a master throws (NPE): a system-error reply",
        "reply_code_allowed",
        CONTROLLER, {"alter_sync_state_set": _alter_npe_without_master},
    ),
    Mutant(
        "elect-reply-old-sync-state-set-epoch", "#5045",
        "the electMaster reply reports the old syncStateSetEpoch",
        "reply_matches_state",
        CONTROLLER, {"elect_master": _elect_reply_old_epoch},
    ),
    Mutant(
        "no-periodic-reelect", "#6382",
        "no periodic re-elect scan: a dead master whose expiry election was missed stays recorded",
        "no_stuck_dead_master",
        CONTROLLER, {"scan_need_reelect_broker_sets": lambda metadata, liveness: ()},
    ),
    Mutant(
        "first-election-by-policy", None,
        "a new set's first electMaster goes to the elect policy, which finds no candidate in an empty "
        "SyncStateSet: the set never gets a master (nothing unsafe happens, so only liveness can tell)",
        "no_masterless_healthy_set",
        CONTROLLER, {"elect_master": _elect_without_first_election},
    ),
    Mutant(
        "heartbeat-of-unknown-broker-ignored", "#5712",
        "heartbeats refresh only brokers that registered with this controller node (lost after a leader change)",
        "no_stuck_dead_master",
        CONTROLLER, {"on_broker_heartbeat": _heartbeat_only_known},
    ),
    Mutant(
        "elect-offset-comparator-overflow", "#10578",
        "candidates ordered with the maxOffset difference narrowed to a 32-bit int (DefaultElectPolicy in "
        "every 5.x release and develop until PR #10579)",
        "elected_master_most_up_to_date",
        CONTROLLER, {"candidate_order": _order_narrowing},
    ),
    Mutant(
        "writes-before-role-confirmed", "#6508",
        "a restarted broker is not fenced: it serves as a master of its last known masterEpoch "
        "(its configured role) before the controller confirms a role",
        "one_master_per_master_epoch",
        BROKER, {"on_restart": _restart_in_configured_role},
    ),
    Mutant(
        "consume-queue-past-confirm-offset", "#6609",
        "after a restart the consume queue is rebuilt past confirmOffset",
        "consumed_message_never_truncated",
        BROKER, {"recovered_dispatch_end": _recovered_dispatch_to_log_end},
    ),
    Mutant(
        "queue-offsets-reused-after-restart", "#7689",
        "after a restart queue offsets continue from confirmOffset, reusing those of later messages",
        "queue_offsets_never_reused",
        BROKER, {"next_queue_offsets_after_recovery": _queue_offsets_from_consume_queue},
    ),
    Mutant(
        "alter-ignores-sync-state-set-epoch", None,
        "alterSyncStateSet skips the syncStateSetEpoch check (not a compare-and-set)",
        "alter_is_compare_and_set",
        CONTROLLER, {"alter_sync_state_set": _alter_ignoring_sync_state_set_epoch},
    ),
    Mutant(
        "unclean-pass-always", None,
        "the elect policy falls back to all replicas even with enableElectUncleanMaster off",
        "elected_master_was_eligible",
        CONTROLLER, {"elect_master": _elect_always_unclean},
    ),
    Mutant(
        "apply-broker-id-ignores-check-code", None,
        "applyBrokerId hands out a held id whatever the check code, and applying it overwrites the holder",
        "broker_id_check_code_stable",
        CONTROLLER, {"apply_broker_id": _apply_broker_id_any_code, "apply_event": _apply_overwriting_broker_id},
    ),
    Mutant(
        "elect-keeps-master-epoch", None,
        "an election installs the new master without bumping masterEpoch",
        "one_master_per_master_epoch",
        CONTROLLER, {"apply_event": _apply_elect_keeping_master_epoch},
    ),
    Mutant(
        "elect-resets-sync-state-set-epoch", None,
        "an election sets syncStateSetEpoch to the new masterEpoch",
        "epochs_never_decrease",
        CONTROLLER, {"apply_event": _apply_elect_resetting_epoch},
    ),
    Mutant(
        "follower-serves-reads", None,
        "a controller that is not the leader answers getReplicaInfo and getNextBrokerId from its own "
        "(possibly lagging) metadata instead of CONTROLLER_NOT_LEADER",
        "step-conformance:controller_not_leader",
        CONTROLLER, {"controller_not_leader": _follower_serves_reads},
    ),
    Mutant(
        "register-names-dead-master", None,
        "registerBroker names the recorded master even when its heartbeats have expired",
        "step-conformance:register_broker",
        CONTROLLER, {"register_broker": _register_names_dead_master},
    ),
    Mutant(
        "replica-info-hides-dead-master", None,
        "getReplicaInfo reports no master while the recorded master is dead (upstream reports the record)",
        "step-conformance:get_replica_info",
        CONTROLLER, {"get_replica_info": _replica_info_hides_dead_master},
    ),
    Mutant(
        "broker-ids-from-zero", None,
        "getNextBrokerId answers 0 for a set without replicas (ids counted from 0, not 1)",
        "step-conformance:get_next_broker_id",
        CONTROLLER, {"get_next_broker_id": _next_broker_id_from_zero},
    ),
    Mutant(
        "forced-clean-keeps-unlisted", None,
        "a forced clean (cleanLivingBroker) with an id list removes only the listed ids, not the whole set",
        "step-conformance:clean_broker_data",
        CONTROLLER, {"clean_broker_data": _forced_clean_keeps_unlisted},
    ),
    Mutant(
        "reelect-masterless-sets", None,
        "the periodic re-elect scan also elects for sets that record no master",
        "step-conformance:trigger_elect_master",
        CONTROLLER, {"scan_need_reelect_broker_sets": _reelect_masterless_sets},
    ),
    Mutant(
        "learner-joins-sync-state-set", None,
        "an async learner (asyncLearner) that catches up joins the SyncStateSet like any slave",
        "step-conformance:maybe_expand",
        BROKER, {"on_slave_ack": _ack_ignoring_learner},
    ),
    Mutant(
        "alter-rejection-drops-proposal", None,
        "a rejected alterSyncStateSet drops the master's pending proposal",
        "step-conformance:apply_sync_state_set",
        BROKER, {"on_alter_sync_state_set_reply": _alter_rejection_drops_proposal},
    ),
    Mutant(
        "all-ack-ignored", None,
        "allAckInSyncStateSet is ignored: a write is acknowledged once inSyncReplicas replicas (by default the "
        "master alone) hold it",
        "step-conformance:put_message",
        BROKER, {"check_write_admission": _admission_ignoring_all_ack},
    ),
    Mutant(
        "write-never-answered", None,
        "a write waiting for its acks is never released, neither PUT_OK nor FLUSH_SLAVE_TIMEOUT: the producer "
        "waits forever (nothing unsafe is said)",
        "produce_answered",
        BROKER, {"replication_status": _never_releases_a_write},
    ),
    Mutant(
        "batch-within-confirm-offset", None,
        "a master ships a slave only what its confirmOffset covers: a slave behind it in the SyncStateSet "
        "holds the confirmOffset down and is never sent more (the set stops replicating; nothing unsafe happens)",
        "slave_catches_up",
        BROKER, {"next_batch": _batch_within_confirm_offset},
    ),
    _broker_ha_variant(
        "broker-ships-unflushed", "flushed_for_transfer", "ships-unflushed",
        "a master sends slaves bytes it has not flushed, as upstream's AutoSwitchHAConnection does with ASYNC_FLUSH "
        "(the truncation variant ships-unflushed): a crash can take from it a message they hold, and it writes "
        "another at that offset under an epoch entry they share",
        "step-conformance:flushed_for_transfer",
    ),
    _broker_ha_variant(
        "broker-label-switched-before-header", "next_batch", "label-switched-before-header",
        "a master labels the last batch of an epoch with the next epoch (the truncation variant "
        "label-switched-before-header): a slave records the next epoch where the batch starts, inside the older "
        "epoch's data",
        "step-conformance:next_batch",
    ),
    _broker_ha_variant(
        "broker-max-of-end-offsets", "slave_handshake", "max-of-end-offsets",
        "a slave's consistent point takes the max instead of the min of its end offset and its master's in the "
        "last epoch they share (the truncation variant max-of-end-offsets): it keeps data its master never had",
        "step-conformance:handshake",
    ),
    _broker_ha_variant(
        "broker-header-epoch-not-recorded", "on_transfer_header", "header-epoch-not-recorded",
        "a slave appends a batch whose header carries a new epoch without recording (epoch, epochStartOffset) "
        "(the truncation variant header-epoch-not-recorded): its epoch file no longer says which epoch its data is",
        "step-conformance:on_transfer_header",
    ),
    Mutant(
        "serves-before-own-empty-proposal", None,
        "a new leader serves once any entry of its term is applied, not its own empty proposal: a restarted "
        "leader that wins its persisted term again decides on metadata missing the uncommitted entries it "
        "wrote in that term before the crash",
        "step-conformance:apply_event",
        CONTROLLER, {"enters_leader_state": _serves_on_an_entry_of_its_term},
    ),
    Mutant(
        "apply-role-without-epoch-check", None,
        "a broker applies any role notification, older masterEpochs included",
        "never_apply_older_epoch",
        BROKER, {"change_broker_role": _change_role_any_epoch},
    ),
)

MUTANTS: Mapping[str, Mutant] = {m.name: m for m in _ALL}


def get_mutant(name: str) -> Mutant:
    try:
        return MUTANTS[name]
    except KeyError:
        raise ValueError(f"unknown controller mutant {name!r}; known: {', '.join(sorted(MUTANTS))}") from None


def controller_rules(name: Optional[str], base: ControllerRules = DEFAULT_RULES) -> ControllerRules:
    """The controller rules with mutant ``name`` applied (unchanged for a broker mutant or None)."""
    if name is None:
        return base
    mutant = get_mutant(name)
    return mutant.apply(base) if mutant.layer == CONTROLLER else base


def broker_rules(name: Optional[str], base: BrokerRules = DEFAULT_BROKER_RULES) -> BrokerRules:
    if name is None:
        return base
    mutant = get_mutant(name)
    return mutant.apply(base) if mutant.layer == BROKER else base
