"""The elect policy (``DefaultElectPolicy``).

Two passes: the SyncStateSet, then -- only when the first pass gave no winner and
``enableElectUncleanMaster`` is on -- every registered replica. A pass keeps the
alive candidates and then:

1. the old master, if it is among them and no *other* broker is designated;
2. a designated broker (admin trigger) if it is among them, else no winner from
   this pass;
3. otherwise the first candidate by (epoch desc, maxOffset desc, electionPriority asc,
   brokerId asc) from the latest heartbeats; a broker without heartbeat data sorts
   after every broker that has some.

Offsets are compared as Python ints (64-bit in Java); the int-narrowing comparator
of #10578 lives in reference/mutants_controller.py.
"""
from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

import attrs

from spec.controller.heartbeat import BrokerLiveInfo, Liveness

# A pass's candidates, each with its live info (or None), -> the same candidates, best first.
CandidateOrder = Callable[[Sequence[tuple[int, Optional[BrokerLiveInfo]]]], list[int]]


def election_sort_key(broker_id: int, info: Optional[BrokerLiveInfo]) -> tuple:
    if info is None:
        return (1, 0, 0, 0, broker_id)
    return (0, -info.epoch, -info.max_offset, info.election_priority, broker_id)


def order_candidates(candidates: Sequence[tuple[int, Optional[BrokerLiveInfo]]]) -> list[int]:
    return [broker_id for broker_id, info in sorted(candidates, key=lambda c: election_sort_key(*c))]


@attrs.frozen(slots=True)
class PolicyDecision:
    """The winner (or None) and the named rule of the pass that decided."""

    winner: Optional[int]
    # "sync_state_set" or "all_replicas": the pass that produced the winner, None if none did.
    elected_from: Optional[str]
    rule: str


OLD_MASTER = "old_master_still_alive"
DESIGNATED = "designated_broker"
DESIGNATED_NOT_ALIVE = "designated_broker_not_alive"
BEST_CANDIDATE = "best_candidate"
NO_ALIVE_CANDIDATE = "no_alive_candidate"


def _try_elect(
    cluster_name: str,
    broker_name: str,
    brokers: Iterable[int],
    old_master: Optional[int],
    prefer_broker_id: Optional[int],
    liveness: Liveness,
    order: CandidateOrder,
) -> tuple[Optional[int], str]:
    alive = sorted(b for b in brokers if liveness.is_alive(cluster_name, broker_name, b))
    if not alive:
        return None, NO_ALIVE_CANDIDATE
    if old_master in alive and (prefer_broker_id is None or prefer_broker_id == old_master):
        return old_master, OLD_MASTER
    if prefer_broker_id is not None:
        return (prefer_broker_id, DESIGNATED) if prefer_broker_id in alive else (None, DESIGNATED_NOT_ALIVE)
    ranked = order([(b, liveness.live_info(cluster_name, broker_name, b)) for b in alive])
    return ranked[0], BEST_CANDIDATE


def elect(
    cluster_name: str,
    broker_name: str,
    sync_state_brokers: Optional[Iterable[int]],
    all_replica_brokers: Optional[Iterable[int]],
    old_master: Optional[int],
    prefer_broker_id: Optional[int],
    liveness: Liveness,
    order: CandidateOrder = order_candidates,
) -> PolicyDecision:
    """``DefaultElectPolicy.elect``; ``all_replica_brokers`` is None unless unclean election is on."""
    rule = NO_ALIVE_CANDIDATE
    for pass_name, brokers in (("sync_state_set", sync_state_brokers), ("all_replicas", all_replica_brokers)):
        if brokers is None:
            continue
        winner, rule = _try_elect(cluster_name, broker_name, brokers, old_master, prefer_broker_id, liveness, order)
        if winner is not None:
            return PolicyDecision(winner, pass_name, rule)
    return PolicyDecision(None, None, rule)
