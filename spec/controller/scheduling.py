"""What the active controller does by itself: the periodic scans and controller-side elections.

* Every 5 s (``scanNotActiveBrokerInterval``) a node drops expired heartbeat entries;
  for each expired broker that is the recorded master of its set, the leader runs a
  controller-triggered electMaster, up to ``electMasterMaxRetryCount`` (3) tries,
  stopping at the first SUCCESS. Each try commits its events before the next, so a
  failed try (2004) clears the master and bumps masterEpoch each time.
* Every 5 s (``scanInactiveMasterInterval``) the leader re-elects, the same way, for
  every set that still records a master which is dead while some registered replica
  lives (#6382 added this scan).

All functions are pure; ``rules`` (spec/controller/rules.py) supplies the procedures.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from spec.controller.heartbeat import HeartbeatLiveness, HeartbeatTable, Liveness, scan_not_active_broker
from spec.controller.records import BrokerIdentity, ControllerMetadata, ElectMasterRequest, ResponseCode

if TYPE_CHECKING:  # pragma: no cover
    from spec.controller.rules import ControllerRules


def enters_leader_state(applied: int, own_empty_proposal: int, last_applied_term: int, term: int) -> bool:
    """Whether a DLedger leader of ``term`` may start serving (enter the leader state) once it
    has applied ``applied`` entries, the last of ``last_applied_term``: only once its own empty
    proposal (at index ``own_empty_proposal``; -1: not proposed yet) is applied, so every entry
    before it is (``DLedgerController.RoleChangeHandler``: appendToDLedgerAndWait of an empty
    body, then the leader state). Not "an entry of its own term applied": DLedger lets a
    restarted leader win its persisted term again (its first campaign does not increment the
    term), and entries it wrote in that term before the crash may still wait to be committed
    (``restarted-leader-serves-after-its-own-empty-proposal.rmqha``)."""
    return 0 <= own_empty_proposal < applied


def on_broker_inactive(metadata: ControllerMetadata, identity: BrokerIdentity) -> bool:
    """``ControllerManager.onBrokerInactive``: elect only when the inactive broker is the recorded master."""
    known = metadata.known(identity.broker_name)
    return known is not None and known.sync_state.master_broker_id == identity.broker_id


def scan_need_reelect_broker_sets(metadata: ControllerMetadata, liveness: Liveness) -> tuple[str, ...]:
    """Sets that record a dead master while at least one registered replica is alive."""
    names = []
    for broker_name in sorted(metadata.sets):
        found = metadata.sets[broker_name]
        state, replicas = found.sync_state, found.replicas
        if state is None or state.master_broker_id is None or replicas is None:
            continue
        if liveness.is_alive(found.cluster_name, broker_name, state.master_broker_id):
            continue
        if any(liveness.is_alive(found.cluster_name, broker_name, b) for b in sorted(replicas.brokers)):
            names.append(broker_name)
    return tuple(names)


@attrs.frozen(slots=True)
class ElectionAttempts:
    broker_name: str
    attempts: tuple  # ControllerResult per try, in order
    metadata: ControllerMetadata  # after every try's events were applied

    @property
    def succeeded(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].code == ResponseCode.SUCCESS


def trigger_elect_master(
    metadata: ControllerMetadata, broker_name: str, liveness: Liveness, rules: "ControllerRules"
) -> ElectionAttempts:
    """``ControllerManager.triggerElectMaster``: controller-triggered tries until SUCCESS."""
    attempts = []
    request = ElectMasterRequest.of_controller_trigger(broker_name)
    for _ in range(rules.config.elect_master_max_retry_count):
        result = rules.handle(metadata, request, liveness)
        metadata = rules.apply(metadata, result.events)
        attempts.append(result)
        if result.code == ResponseCode.SUCCESS:
            break
    return ElectionAttempts(broker_name, tuple(attempts), metadata)


@attrs.frozen(slots=True)
class ScanResult:
    metadata: ControllerMetadata
    table: HeartbeatTable
    expired: tuple[BrokerIdentity, ...] = ()
    elections: tuple[ElectionAttempts, ...] = ()


def scan_not_active_broker_and_elect(
    metadata: ControllerMetadata, table: HeartbeatTable, now: int, rules: "ControllerRules", *, is_leader: bool = True
) -> ScanResult:
    """The heartbeat manager's scan (any node) plus the leader's elections for expired masters."""
    table, expired = scan_not_active_broker(table, now)
    liveness = HeartbeatLiveness(table, now)
    elections = []
    for identity in expired:
        if is_leader and on_broker_inactive(metadata, identity):
            outcome = trigger_elect_master(metadata, identity.broker_name, liveness, rules)
            metadata = outcome.metadata
            elections.append(outcome)
    return ScanResult(metadata, table, expired, tuple(elections))


def scan_inactive_master_and_reelect(
    metadata: ControllerMetadata, table: HeartbeatTable, now: int, rules: "ControllerRules", *, is_leader: bool = True
) -> ScanResult:
    """``DLedgerController.scanInactiveMasterAndTriggerReelect`` (leader only)."""
    if not is_leader:
        return ScanResult(metadata, table)
    liveness = HeartbeatLiveness(table, now)
    elections = []
    for broker_name in rules.scan_need_reelect_broker_sets(metadata, liveness):
        outcome = trigger_elect_master(metadata, broker_name, liveness, rules)
        metadata = outcome.metadata
        elections.append(outcome)
    return ScanResult(metadata, table, (), tuple(elections))
