"""Safety and liveness invariants of DLedger, checked after every step.

Each invariant is a pure predicate over an observation (``DLedgerView`` of one node)
and a ``DLedgerHistory`` summarising everything observed so far; the history is
folded forward by ``record``. A monitor (conformance/) calls ``check_node`` after
every activation of a node, ``check_vote_grant`` on every vote a node grants, and
``stable_leader`` to judge liveness once faults have healed.

| name                     | what must hold                                                        |
|--------------------------|-----------------------------------------------------------------------|
| election-safety          | at most one leader per term, over the whole history                   |
| term-monotonic           | a node's currTerm never decreases, restarts included                  |
| one-vote-per-term        | a node grants at most one candidate per term, restarts included       |
| vote-log-up-to-date      | ACCEPT only when the candidate's (ledgerEndTerm, ledgerEndIndex) >= the voter's |
| ledger-end-term          | ledgerEndTerm is the term of the last entry                           |
| committed-prefix         | committed prefixes never diverge                                      |
| leader-completeness      | every committed entry is in the log of every leader of a later term (G2; G1 may violate it) |
| applied-committed-end    | applied <= committed <= ledgerEnd                                     |
| liveness                 | after the last fault heals, one stable leader within ``liveness_bound_ms`` |
"""
from __future__ import annotations

from typing import Iterable, Sequence

import attrs

from spec.dledger.profiles import Profile, Timing
from spec.dledger.records import DLedgerView, Role, VoteRequest, VoteResponse, VoteResult
from spec.invariants import Violation

INVARIANTS: dict[str, str] = {
    "election-safety": "at most one leader per term over the whole history",
    "term-monotonic": "currTerm never decreases on a node, restarts included",
    "one-vote-per-term": "a node grants at most one candidate per term, restarts included",
    "vote-log-up-to-date": "ACCEPT only for a candidate whose log is at least as up to date",
    "ledger-end-term": "ledgerEndTerm is the term of the last entry",
    "committed-prefix": "committed prefixes never diverge",
    "leader-completeness": "every committed entry is in the log of every leader of a later term",
    "applied-committed-end": "applied <= committed <= ledgerEnd",
    "liveness": "after the last fault heals, exactly one leader within the bound",
}


def known_profile_difference(name: str, profile: Profile) -> bool:
    """Invariants a profile is known not to guarantee (reported, never hidden).

    G1 logs commit the quorum watermark without a current-term check, so a later
    leader can miss a committed entry (Raft's figure 8): leader completeness and,
    through it, committed-prefix agreement can fail in dledger-0.1 and dledger-0.2.
    """
    return profile.log_generation == "G1" and name in ("leader-completeness", "committed-prefix")


@attrs.define(slots=True)
class DLedgerHistory:
    """What the invariants remember. Updated only through ``record``."""

    leader_of_term: dict[int, str] = attrs.Factory(dict)
    max_term: dict[str, int] = attrs.Factory(dict)
    vote_of: dict[tuple[str, int], str] = attrs.Factory(dict)
    committed: list = attrs.Factory(list)  # the longest committed prefix seen (entries)
    committed_under_term: list = attrs.Factory(list)  # per committed index: largest leader term seen then
    largest_leader_term: int = -10**9


# ------------------------------------------------------------------ predicates


def check_election_safety(h: DLedgerHistory, v: DLedgerView) -> Violation | None:
    if v.role is Role.LEADER:
        other = h.leader_of_term.get(v.curr_term)
        if other is not None and other != v.node_id:
            return Violation(
                "election-safety", f"{other} and {v.node_id} both leader in term {v.curr_term}", v.node_id
            )
    return None


def check_term_monotonic(h: DLedgerHistory, v: DLedgerView) -> Violation | None:
    seen = h.max_term.get(v.node_id)
    if seen is not None and v.curr_term < seen:
        return Violation("term-monotonic", f"{v.node_id} currTerm went from {seen} back to {v.curr_term}", v.node_id)
    return None


def check_one_vote_per_term(h: DLedgerHistory, v: DLedgerView) -> Violation | None:
    if v.voted_for is not None:
        earlier = h.vote_of.get((v.node_id, v.curr_term))
        if earlier is not None and earlier != v.voted_for:
            return Violation(
                "one-vote-per-term",
                f"{v.node_id} voted for {earlier} and then {v.voted_for} in term {v.curr_term}",
                v.node_id,
            )
    return None


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


def _same(a, b) -> bool:
    return a.index == b.index and a.term == b.term and a.body == b.body


def check_committed_prefix(h: DLedgerHistory, v: DLedgerView) -> Violation | None:
    upto = min(v.committed_index, v.ledger_end_index, len(h.committed) - 1)
    for i in range(upto + 1):
        if not _same(v.log[i], h.committed[i]):
            return Violation(
                "committed-prefix",
                f"{v.node_id} committed entry {i} as (term {v.log[i].term}, {v.log[i].body!r}) "
                f"but (term {h.committed[i].term}, {h.committed[i].body!r}) was committed before",
                v.node_id,
            )
    return None


def check_leader_completeness(h: DLedgerHistory, v: DLedgerView) -> Violation | None:
    if v.role is not Role.LEADER:
        return None
    for i, entry in enumerate(h.committed):
        if h.committed_under_term[i] >= v.curr_term:
            continue  # committed while this term's leader may already have been elected
        if i >= len(v.log) or not _same(v.log[i], entry):
            return Violation(
                "leader-completeness",
                f"leader {v.node_id} of term {v.curr_term} lacks committed entry {i} "
                f"(term {entry.term}, {entry.body!r})",
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


NODE_CHECKS = (
    check_election_safety,
    check_term_monotonic,
    check_one_vote_per_term,
    check_committed_prefix,
    check_leader_completeness,
)
STATELESS_CHECKS = (check_ledger_end_term, check_applied_committed_end)


def check_node(h: DLedgerHistory, v: DLedgerView) -> list[Violation]:
    """Every per-node invariant for one fresh observation (then call ``record``)."""
    found = [c(h, v) for c in NODE_CHECKS] + [c(v) for c in STATELESS_CHECKS]
    return [x for x in found if x is not None]


def record(h: DLedgerHistory, v: DLedgerView) -> None:
    """Fold an observation into the history (after it was checked)."""
    if v.role is Role.LEADER:
        h.leader_of_term.setdefault(v.curr_term, v.node_id)
        if v.curr_term > h.largest_leader_term:
            h.largest_leader_term = v.curr_term
    if v.curr_term > h.max_term.get(v.node_id, -10**9):
        h.max_term[v.node_id] = v.curr_term
    if v.voted_for is not None:
        h.vote_of.setdefault((v.node_id, v.curr_term), v.voted_for)
    top = min(v.committed_index, v.ledger_end_index)
    if top >= len(h.committed):
        for i in range(len(h.committed), top + 1):
            h.committed.append(v.log[i])
            h.committed_under_term.append(h.largest_leader_term)


# ------------------------------------------------------------------ liveness


def stable_leader(views: Iterable[DLedgerView | None]) -> str | None:
    """The leader, if exactly one live node leads and every other live node follows it."""
    live = [v for v in views if v is not None]
    leaders = [v for v in live if v.role is Role.LEADER]
    if len(leaders) != 1:
        return None
    lead = leaders[0]
    for v in live:
        if v is lead:
            continue
        if v.role is not Role.FOLLOWER or v.leader_id != lead.node_id or v.curr_term != lead.curr_term:
            return None
    return lead.node_id


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
