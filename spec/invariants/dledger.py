"""Safety and liveness invariants of DLedger, checked after every step.

A monitor (conformance/) calls ``check_node`` after every activation of a node (then
``record``), ``check_vote_grant`` on every vote a node grants, and ``stable_leader``
to judge liveness once faults have healed.

The invariants every Raft-family protocol shares (election safety, term
monotonicity, one vote per term, committed prefix, leader completeness) and liveness
are written once, in ``spec/invariants/raft.py``; a DLedger node is judged by them
seen as a Raft node (``spec.raft.records.raft_view``). Only DLedger's own are here:

| name                     | what must hold                                                        |
|--------------------------|-----------------------------------------------------------------------|
| vote-log-up-to-date      | ACCEPT only when the candidate's (ledgerEndTerm, ledgerEndIndex) >= the voter's |
| ledger-end-term          | ledgerEndTerm is the term of the last entry                           |
| applied-committed-end    | applied <= committed <= ledgerEnd                                     |
| leader-lease             | a leader that has heard from no quorum for longer than its lease (maxHeartBeatLeak x heartBeatTimeIntervalMs, plus one round) no longer leads |

Shared with every Raft-family protocol, besides the five safety invariants and the two
over a leader's progress per follower (follower-progress, leader-commit-rule: a leader's
writeIndex and peer water mark seen as Raft's nextIndex and matchIndex): log
matching, log terms (never decreasing along a log, never beyond the node's term) and
restart durability (a node restarts with the term, vote and log it crashed with).

``leader-completeness`` (and, through it, ``committed-prefix``) holds for G2 logs; G1
may violate it, and G1 breaks ``leader-commit-rule`` by design (``known_profile_difference``).
In every profile a committed entry that followers dropped, although their leader held it, on a
TRUNCATE of its term (a duplicated or late one: upstream's follower acts on every one) can be
lost: the finding ``TRUNCATE_LOSS`` (``note_truncate``, ``lost_to_truncate``), not a violation.
"""
from __future__ import annotations

import functools

from typing import Iterable, Mapping, Sequence

import attrs

from spec.dledger.profiles import Profile, Timing
from spec.dledger.records import DLedgerView, PushEntryRequest, PushType, Role, VoteRequest, VoteResponse, VoteResult
from spec.quorum import quorum_size
from spec.invariants import Violation, raft
from spec.raft.records import RaftView, raft_view

_OWN: dict[str, str] = {
    "vote-log-up-to-date": "ACCEPT only for a candidate whose log is at least as up to date",
    "ledger-end-term": "ledgerEndTerm is the term of the last entry",
    "applied-committed-end": "applied <= committed <= ledgerEnd",
    "leader-lease": "a leader that has not heard from a quorum for longer than its lease stops leading",
}
# in the order they are reported; the shared ones as spec/invariants/raft.py states them
INVARIANTS: dict[str, str] = {name: _OWN.get(name) or raft.INVARIANTS[name] for name in (
    "election-safety", "term-monotonic", "one-vote-per-term", "vote-log-up-to-date", "ledger-end-term",
    "log-matching", "log-terms", "committed-prefix", "leader-completeness", "follower-progress",
    "leader-commit-rule", "applied-committed-end", "restart-durable", "leader-lease", "liveness")}


def leader_ignores_higher_term_with_quorum(profile: Profile) -> bool:
    """H-A: the heartbeat round looks at the quorum before a higher term (#247)."""
    order = profile.heartbeat_order
    return order.index("quorum_ack") < order.index("higher_term")


def known_profile_difference(name: str, profile: Profile) -> bool:
    """Invariants a profile is known not to guarantee (reported, never hidden).

    G1 logs commit the quorum watermark without a current-term check (so they break
    leader-commit-rule whenever an older term's entry commits by counting), and a later
    leader can miss a committed entry (Raft's figure 8): leader completeness and,
    through it, committed-prefix agreement can fail in dledger-0.1 and dledger-0.2.

    release-0.1's election can livelock (liveness): a vote request of a higher term is
    answered TERM_NOT_READY before the log is compared (V-A), so a candidate whose log
    is behind still makes every up-to-date node a candidate that must increase its term
    and wait for its next vote time, and that wait adds the node's last round's duration
    (lastVoteCost). Up-to-date nodes are pushed back by every request of the stale
    candidates, which go again within about a second: they rarely campaign, and never
    when their last round took longer than that. dledger 0.2.0 changed both (6ff11a9
    "optimize the election process").

    Before 0.3.2 a leader ignores a higher term while a quorum answers its heartbeats
    (H-A: the quorum row comes first; dledger #247, fixed by 4ee007d): a node that
    campaigned alone to a higher term and whose log is behind is refused every vote
    (its log is smaller) and refuses every heartbeat (its term is larger), a candidate
    for ever beside a stable pair (liveness) in dledger-0.1 and dledger-0.2.
    """
    if name == "liveness":
        return profile.vote_interval_adds_last_cost or leader_ignores_higher_term_with_quorum(profile)
    return profile.log_generation == "G1" and name in ("leader-completeness", "committed-prefix",
                                                       "leader-commit-rule")


# Raft invariants a DLedger node does not promise, when it is judged as a Raft node (the
# raft scenario runs rmqha's DLedger node that way): reported as known differences, never
# hidden. commit-monotonic: DLedger's fast backup jumps to the first index of the
# follower's conflicting term, so a compare can match below entries that agree (committed
# ones included); the TRUNCATE then drops and re-sends them, and the follower's commit
# index follows its log down (rmqha's spec clamps it, the fix of DLedger #316; 0.4.0 left
# it above the log end instead, which applied-committed-end rejects). Raft's follower
# cuts only where its log conflicts, so its commit index never goes back.
# follower-progress: a DLedger follower acts on every TRUNCATE of its leader's term, a
# duplicated one delivered after it acknowledged later entries included (upstream's
# EntryHandler.handleDoTruncate), so it drops entries its leader counted, and the leader's
# progress for it goes back (the dledger scenario judges it so: _check_follower_progress).
NOT_PROMISED_AS_RAFT = ("commit-monotonic", "follower-progress")


@attrs.define(slots=True)
class DLedgerHistory(raft.RaftHistory):
    """What DLedger's invariants remember: what the shared ones do, and the entries their
    leader held that followers dropped by acting on a TRUNCATE of its term (``note_truncate``)."""

    truncated: set[tuple[int, int, str]] = attrs.Factory(set)  # (index, term, body)
    # (follower, term) -> the lowest index at which a TRUNCATE of that term made the
    # follower drop an entry its leader held (follower-progress: ``dropped_counted``)
    dropped_from: dict[tuple[str, int], int] = attrs.Factory(dict)


# ------------------------------------------------------------------ committed entries lost to a TRUNCATE

# A DLedger follower acts on every TRUNCATE of its leader's term (EntryHandler.handleDoTruncate,
# 0.4.0 and since), also one duplicated, or delayed past the appends that followed it: it then
# drops entries its leader holds and it had acknowledged, committed ones included. When fewer
# than a quorum still hold a committed entry, a node without it can be elected, and the entry
# is lost: the protocol as upstream wrote it does this (docs/dledger.md, "Committed entries lost
# to a late TRUNCATE"), so a faithful implementation does too. Reported as this finding, never
# as a violation; a committed entry lost that no follower dropped so stays a violation.
TRUNCATE_LOSS = "committed_lost_to_truncate"
_LOST_BY = {"leader-completeness": raft.missing_committed, "committed-prefix": raft.conflicting_committed}


def note_truncate(h: DLedgerHistory, before: DLedgerView, after: DLedgerView, request: PushEntryRequest,
                  leader: DLedgerView | None) -> None:
    """``after`` is ``before``'s node having acted on ``request``: if it is a TRUNCATE of the
    node's term, remember the entries it dropped that its leader (``leader``, as last seen)
    holds. Those were right (acknowledged, maybe committed), and DLedger's TRUNCATE drops
    everything past its index, them too, also when it comes late (duplicated, or overtaken
    by the appends its leader sent after it). Entries the leader does not hold are a
    divergent tail, dropped as Raft drops it: not remembered, so a committed entry lost
    that way (Raft's figure 8 under G1) stays a violation. Step conformance judges that
    the node acted on the TRUNCATE as the spec says."""
    if request.type is not PushType.TRUNCATE or request.term != after.curr_term or leader is None:
        return
    kept = {(e.index, e.term, e.body) for e in after.log}
    held = {(e.index, e.term, e.body) for e in leader.log}
    dropped = [x for e in before.log if (x := (e.index, e.term, e.body)) not in kept and x in held]
    h.truncated.update(dropped)
    if dropped:
        low, key = min(x[0] for x in dropped), (after.node_id, request.term)
        h.dropped_from[key] = min(h.dropped_from.get(key, low), low)


def dropped_counted(h: DLedgerHistory, peer: str, term: int, index: int) -> bool:
    """Whether ``peer`` may no longer hold what its leader of ``term`` counted for it up to
    ``index``: its last observed log ends below ``index``, or, acting on a TRUNCATE of that
    term, it dropped an entry its leader held at or below ``index`` (``note_truncate``).
    The second holds also once the follower took the entries again from appends its
    leader sent before it learnt of the drop (duplicated or late ones): the leader's
    next compare still matches at or below the TRUNCATE's index, so its progress for the
    follower goes back, as DLedger's does (search seed 5980 from 5,000, docs/dledger.md,
    "follower-progress"). Recorded for the whole term, not from when the leader counted
    ``index``: a drop earlier in the term excuses a later step back too."""
    return raft.dropped_below(h, peer, index) or h.dropped_from.get((peer, term), index + 1) <= index


def lost_to_truncate(h: DLedgerHistory, v: DLedgerView, violation: Violation) -> int | None:
    """The committed index a leader-completeness or committed-prefix ``violation`` of ``v``
    is about, when a follower dropped that committed entry on a late TRUNCATE
    (``note_truncate``): a ``TRUNCATE_LOSS``, not a violation. None otherwise."""
    lost_by = _LOST_BY.get(violation.property)
    if lost_by is None or not h.truncated:
        return None
    index = lost_by(h, raft_view(v))
    if index is None:
        return None
    entry = h.committed[index]
    return index if (index, entry.term, entry.body) in h.truncated else None


# ------------------------------------------------------------------ DLedger's own predicates


def check_ledger_end_term(v: DLedgerView) -> Violation | None:
    expected = v.log[-1].term if v.log else -1
    if v.ledger_end_term != expected or v.ledger_end_index != len(v.log) - 1:
        return Violation(
            "ledger-end-term",
            f"{v.node_id} reports ledgerEnd ({v.ledger_end_term}, {v.ledger_end_index}) "
            f"but its last entry is ({expected}, {len(v.log) - 1})",
            v.node_id,
        )
    return None


def check_applied_committed_end(v: DLedgerView) -> Violation | None:
    if not v.applied_index <= v.committed_index <= v.ledger_end_index:
        if v.committed_index < 0 and v.applied_index < 0 and v.ledger_end_index < 0:
            return None
        return Violation(
            "applied-committed-end",
            f"{v.node_id} applied {v.applied_index}, committed {v.committed_index}, ledgerEnd {v.ledger_end_index}",
            v.node_id,
        )
    return None


def check_vote_grant(voter: DLedgerView, request: VoteRequest, reply: VoteResponse) -> Violation | None:
    """An ACCEPT must go to a candidate whose log is at least as up to date."""
    if reply.result is not VoteResult.ACCEPT:
        return None
    if (request.ledger_end_term, request.ledger_end_index) < (voter.ledger_end_term, voter.ledger_end_index):
        return Violation(
            "vote-log-up-to-date",
            f"{voter.node_id} granted {request.candidate} (log end {request.ledger_end_term}, "
            f"{request.ledger_end_index}) with its own log at ({voter.ledger_end_term}, {voter.ledger_end_index})",
            voter.node_id,
        )
    return None


# the leader's lease is judged one heartbeat round after it must have run out, plus a
# margin for the 10 ms maintenance lattice and the round's decision wait
LEASE_SLACK_MS = 500


def lease_bound_ms(timing: Timing) -> int:
    """How long a leader may go on without hearing from a quorum: the lease
    (maxHeartBeatLeak x heartBeatTimeIntervalMs), one heartbeat round for the round that
    notices it, and ``LEASE_SLACK_MS``."""
    return timing.lease_ms + timing.heartbeat_interval_ms + LEASE_SLACK_MS


def lease_deadline(v: DLedgerView, peers: Sequence[str], last_heard: Mapping[str, int],
                   timing: Timing) -> int | None:
    """The last instant ``v``'s node may still lead: ``lease_bound_ms`` after it last had
    heard from a quorum (itself included); None if it does not lead (or is a group of
    one). ``last_heard``: when it last received anything from each peer."""
    if v.role is not Role.LEADER or len(peers) < 2:
        return None
    others = sorted((last_heard.get(p, NEVER_HEARD) for p in peers if p != v.node_id), reverse=True)
    return others[quorum_size(len(peers)) - 2] + lease_bound_ms(timing)


def check_leader_lease(v: DLedgerView, peers: Sequence[str], last_heard: Mapping[str, int], now: int,
                       timing: Timing) -> Violation | None:
    due = lease_deadline(v, peers, last_heard, timing)
    if due is None or now <= due:
        return None
    heard = due - lease_bound_ms(timing)
    if heard == NEVER_HEARD:
        # it leads without a quorum ever having answered it since it (re)started: its lease
        # never began, so it is out of lease at once (a node elected by a quorum heard from one)
        return Violation("leader-lease", f"{v.node_id} leads term {v.curr_term} at t={now} without having heard "
                                         f"from a quorum since it started: its lease (lease {timing.lease_ms} ms) "
                                         f"never began", v.node_id)
    return Violation("leader-lease", f"{v.node_id} still leads term {v.curr_term} at t={now}; it last heard from a "
                                     f"quorum at t={heard} (lease {timing.lease_ms} ms, judged "
                                     f"{lease_bound_ms(timing)} ms after)", v.node_id)


NEVER_HEARD = -(10**12)

STATELESS_CHECKS = (check_ledger_end_term, check_applied_committed_end)


def _check_follower_progress(h: DLedgerHistory, r: RaftView) -> Violation | None:
    """Raft's follower-progress, for followers that kept what their leader counted: a
    DLedger follower may drop acknowledged entries on a duplicated TRUNCATE (``dropped_counted``)."""
    return raft.check_follower_progress(h, r, functools.partial(dropped_counted, h))


# the shared checks, DLedger's follower-progress in place of Raft's
_SHARED_CHECKS = tuple(_check_follower_progress if c is raft.check_follower_progress else c
                       for c in raft.SHARED_CHECKS)


def check_node(h: DLedgerHistory, v: DLedgerView) -> list[Violation]:
    """Every per-node invariant for one fresh observation (then call ``record``)."""
    r = raft_view(v)
    found = [c(h, r) for c in _SHARED_CHECKS] + [raft.check_log_terms(r), raft.check_restart_durable(h, r)]
    found += [c(v) for c in STATELESS_CHECKS]
    return [x for x in found if x is not None] + raft.check_log_matching_with_others(h, r)


def record(h: DLedgerHistory, v: DLedgerView) -> None:
    """Fold an observation into the history (after it was checked)."""
    r = raft_view(v)
    raft.record_shared(h, r)
    raft.record_last_view(h, r)


def node_crashed(h: DLedgerHistory, node_id: str) -> None:
    """``node_id`` crashed: what it held is kept for its restart's durability check."""
    raft.forget_volatile(h, node_id)


# ------------------------------------------------------------------ liveness


def stable_leader(views: Iterable[DLedgerView | None]) -> str | None:
    """The leader, if exactly one live node leads and every other live node follows it."""
    return raft.stable_leader(None if v is None else raft_view(v) for v in views)


def liveness_bound_ms(timing: Timing, rounds: int = 3) -> int:
    """How long after the last fault heals a single stable leader must exist.

    A stale leader steps down, and a follower of a dead leader times out, within one
    lease (maxHeartBeatLeak * heartBeatTimeIntervalMs) plus one heartbeat interval.
    Each election attempt then costs at most a vote round (2000 + maxVoteIntervalMs)
    plus the wait before the next one, whose worst case is the ALREADY_HAS_LEADER
    back-off (maxVoteIntervalMs + lease). We allow ``rounds`` attempts (split votes
    are possible; randomised intervals make more rare) and one interval for the
    winner's first heartbeat to reach everyone.
    """
    attempt = timing.vote_round_base_wait_ms + 2 * timing.max_vote_interval_ms + timing.lease_ms
    return timing.lease_ms + timing.heartbeat_interval_ms + rounds * attempt + timing.heartbeat_interval_ms


def invariant_names(profile: Profile) -> Sequence[str]:
    return tuple(INVARIANTS)
