"""The elect policy (``DefaultElectPolicy``).

Two passes: the SyncStateSet, then -- only when the first pass gave no winner and
``enableElectUncleanMaster`` is on -- every registered replica. A pass keeps the
alive candidates and then:

1. the old master, if it is among them and no *other* broker is designated;
2. a designated broker (admin trigger) if it is among them, else no winner from
   this pass;
3. otherwise the first candidate by (epoch desc, maxOffset desc, electionPriority asc)
   from the latest heartbeats; among equals, the first in ``java_hash_set_order``
   (upstream adds the candidates to a TreeSet in the iteration order of a ``HashSet``,
   and a TreeSet keeps the first of equal elements); a broker without heartbeat data
   sorts after every broker that has some.

Offsets are compared as Python ints (64-bit in Java). Upstream's comparator narrowed the
offset difference to a 32-bit int until apache/rocketmq#10578 (fixed by PR #10579, in
2026; every 5.x release and develop before it have it): that ordering is the
``elect-offset-comparator-overflow`` variant in reference/mutants_controller.py.
Priorities are compared by subtraction upstream too, which is exact for the
non-negative priorities brokers are configured with.
"""
from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

import attrs

from spec.controller.heartbeat import BrokerLiveInfo, Liveness

# A pass's candidates, each with its live info (or None), -> the same candidates, best first.
CandidateOrder = Callable[[Sequence[tuple[int, Optional[BrokerLiveInfo]]]], list[int]]


def java_hash_set_order(ids: Iterable[int]) -> list[int]:
    """The iteration order of a ``java.util.HashSet<Long>`` holding ``ids``.

    Buckets in index order: a Long hashes to ``(int)(v ^ v >>> 32)``, spread as
    ``h ^ h >>> 16`` and masked by the table size (16, doubled whenever the set grows past
    three quarters of it). Ids below 16 therefore come out ascending; 16 and above
    interleave (17 shares 1's bucket, 16 comes before 1). Within a bucket Java keeps the
    order of insertion, which depends on how the set was built; the spec takes ascending
    ids (what a set built in ascending order gives).
    """
    ids = sorted(set(ids))
    size = 16
    while len(ids) > size * 3 // 4:
        size *= 2

    def bucket(v: int) -> int:
        h = (v ^ (v >> 32)) & 0xFFFFFFFF  # (int)(value ^ (value >>> 32)), as an unsigned 32-bit pattern
        return (h ^ (h >> 16)) & (size - 1)

    return sorted(ids, key=lambda v: (bucket(v), v))


def election_sort_key(info: Optional[BrokerLiveInfo]) -> tuple:
    """(epoch desc, maxOffset desc, electionPriority asc); no data sorts last."""
    if info is None:
        return (1, 0, 0, 0)
    return (0, -info.epoch, -info.max_offset, info.election_priority)


def order_candidates(candidates: Sequence[tuple[int, Optional[BrokerLiveInfo]]]) -> list[int]:
    """Best first; equals keep their HashSet iteration order (the TreeSet keeps the first added)."""
    position = {b: i for i, b in enumerate(java_hash_set_order(b for b, _ in candidates))}
    ranked = sorted(candidates, key=lambda c: (election_sort_key(c[1]), position[c[0]]))
    return [broker_id for broker_id, _ in ranked]


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
