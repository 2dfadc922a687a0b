"""The generic Raft profile of the invariants, for any Raft-family implementation.

Pure predicates over ``RaftView`` observations (``spec/raft/records.py``) and a
``RaftHistory`` that remembers what was observed so far; ``record`` folds a checked
observation into the history and ``forget_volatile`` is called when a node crashes
(Raft's commitIndex is volatile state: a restarted node may start lower).

| name | what must hold (Raft paper, figure 3) |
|---|---|
| election-safety | at most one leader per term, over the whole history |
| term-monotonic | a node's currentTerm never decreases, restarts included |
| one-vote-per-term | vote durability: a node votes for at most one candidate per term, restarts included |
| log-matching | two logs holding an entry with the same index and term are identical up to that index |
| leader-completeness | an entry committed in a term is in the log of every leader of a later term |
| committed-prefix | state machine safety: no two nodes ever commit different entries at one index |
| commit-monotonic | a node's commitIndex never decreases while it stays up |
| commit-within-log | a node never considers an index committed that its log does not hold |
| liveness | after the last fault heals, one stable leader within the implementation's bound |

These are DLedger's invariants (``spec/invariants/dledger.py``) restated over the
generic view where they coincide, under the same names, plus the three that the
DLedger observation makes structural (log matching, commit monotonicity, commit
within log).
"""
from __future__ import annotations

import attrs

from spec.invariants import Violation, dledger
from spec.raft.records import RaftEntry, RaftRole, RaftView

INVARIANTS: dict[str, str] = {
    "election-safety": "at most one leader per term over the whole history",
    "term-monotonic": "currentTerm never decreases on a node, restarts included",
    "one-vote-per-term": "a node votes for at most one candidate per term, restarts included",
    "log-matching": "logs with an entry of the same index and term are identical up to it",
    "leader-completeness": "every committed entry is in the log of every leader of a later term",
    "committed-prefix": "no two nodes commit different entries at the same index",
    "commit-monotonic": "commitIndex never decreases while a node stays up",
    "commit-within-log": "commitIndex never exceeds the last index of the node's log",
    "liveness": "after the last fault heals, exactly one leader within the bound",
}


@attrs.define(slots=True)
class RaftHistory:
    """What the invariants remember. Updated only through ``record`` and ``forget_volatile``."""

    leader_of_term: dict[int, str] = attrs.Factory(dict)
    max_term: dict[str, int] = attrs.Factory(dict)
    vote_of: dict[tuple[str, int], str] = attrs.Factory(dict)
    commit_of: dict[str, int] = attrs.Factory(dict)  # per live node: last commitIndex seen
    committed: dict[int, RaftEntry] = attrs.Factory(dict)  # index -> the entry first seen committed there
    committed_under_term: dict[int, int] = attrs.Factory(dict)  # index -> largest leader term seen then
    largest_leader_term: int = -10**9
    last_view: dict[str, RaftView] = attrs.Factory(dict)  # per live node: its last observation


def _same(a: RaftEntry, b: RaftEntry) -> bool:
    return a.term == b.term and a.body == b.body


# ------------------------------------------------------------------ per-node predicates


def check_election_safety(h: RaftHistory, v: RaftView) -> Violation | None:
    if v.role is RaftRole.LEADER:
        other = h.leader_of_term.get(v.curr_term)
        if other is not None and other != v.node_id:
            return Violation("election-safety", f"{other} and {v.node_id} both leader in term {v.curr_term}",
                             v.node_id)
    return None


def check_term_monotonic(h: RaftHistory, v: RaftView) -> Violation | None:
    seen = h.max_term.get(v.node_id)
    if seen is not None and v.curr_term < seen:
        return Violation("term-monotonic", f"{v.node_id} currentTerm went from {seen} back to {v.curr_term}",
                         v.node_id)
    return None


def check_one_vote_per_term(h: RaftHistory, v: RaftView) -> Violation | None:
    if v.voted_for is not None:
        earlier = h.vote_of.get((v.node_id, v.curr_term))
        if earlier is not None and earlier != v.voted_for:
            return Violation("one-vote-per-term",
                             f"{v.node_id} voted for {earlier} and then {v.voted_for} in term {v.curr_term}",
                             v.node_id)
    return None


def check_commit_monotonic(h: RaftHistory, v: RaftView) -> Violation | None:
    before = h.commit_of.get(v.node_id)
    if before is not None and v.committed_index < before:
        return Violation("commit-monotonic",
                         f"{v.node_id} commitIndex went from {before} back to {v.committed_index} without a restart",
                         v.node_id)
    return None


def check_commit_within_log(v: RaftView) -> Violation | None:
    if v.committed_index > v.last_index:
        return Violation("commit-within-log",
                         f"{v.node_id} commitIndex {v.committed_index} is beyond its last log index {v.last_index}",
                         v.node_id)
    return None


def check_committed_prefix(h: RaftHistory, v: RaftView) -> Violation | None:
    top = min(v.committed_index, v.last_index)
    for entry in v.log:
        if entry.index > top:
            break
        earlier = h.committed.get(entry.index)
        if earlier is not None and not _same(entry, earlier):
            return Violation("committed-prefix",
                             f"{v.node_id} committed index {entry.index} as (term {entry.term}, {entry.body!r}) "
                             f"but (term {earlier.term}, {earlier.body!r}) was committed there before", v.node_id)
    return None


def check_leader_completeness(h: RaftHistory, v: RaftView) -> Violation | None:
    if v.role is not RaftRole.LEADER:
        return None
    first = v.log[0].index if v.log else None
    for index, entry in sorted(h.committed.items()):
        if h.committed_under_term[index] >= v.curr_term:
            continue  # committed while this term's leader may already have been elected
        if first is not None and index < first:
            continue  # compacted into a snapshot: not observable
        mine = v.entry(index)
        if mine is None or not _same(mine, entry):
            return Violation("leader-completeness",
                             f"leader {v.node_id} of term {v.curr_term} lacks committed entry {index} "
                             f"(term {entry.term}, {entry.body!r})", v.node_id)
    return None


# ------------------------------------------------------------------ across nodes


def check_log_matching(v: RaftView, other: RaftView) -> Violation | None:
    """Raft's Log Matching property between two current logs."""
    if not v.log or not other.log:
        return None
    low = max(v.log[0].index, other.log[0].index)
    high = min(v.last_index, other.last_index)
    # the highest common index where both hold an entry of the same term
    anchor = next((i for i in range(high, low - 1, -1) if v.entry(i).term == other.entry(i).term), None)
    if anchor is None:
        return None
    for i in range(low, anchor + 1):
        mine, theirs = v.entry(i), other.entry(i)
        if not _same(mine, theirs):
            return Violation("log-matching",
                             f"{v.node_id} and {other.node_id} agree on (index {anchor}, term {v.entry(anchor).term}) "
                             f"but differ at index {i}: (term {mine.term}, {mine.body!r}) vs "
                             f"(term {theirs.term}, {theirs.body!r})", v.node_id)
    return None


NODE_CHECKS = (
    check_election_safety,
    check_term_monotonic,
    check_one_vote_per_term,
    check_commit_monotonic,
    check_committed_prefix,
    check_leader_completeness,
)
STATELESS_CHECKS = (check_commit_within_log,)


def check_node(h: RaftHistory, v: RaftView) -> list[Violation]:
    """Every invariant for one fresh observation of ``v.node_id`` (then call ``record``).

    Log matching is checked against the last observation of every other live node.
    """
    found = [c(h, v) for c in NODE_CHECKS] + [c(v) for c in STATELESS_CHECKS]
    found += [check_log_matching(v, w) for n, w in sorted(h.last_view.items()) if n != v.node_id]
    return [x for x in found if x is not None]


def record(h: RaftHistory, v: RaftView) -> None:
    """Fold an observation into the history (after it was checked)."""
    if v.role is RaftRole.LEADER:
        h.leader_of_term.setdefault(v.curr_term, v.node_id)
        h.largest_leader_term = max(h.largest_leader_term, v.curr_term)
    if v.curr_term > h.max_term.get(v.node_id, -10**9):
        h.max_term[v.node_id] = v.curr_term
    if v.voted_for is not None:
        h.vote_of.setdefault((v.node_id, v.curr_term), v.voted_for)
    h.commit_of[v.node_id] = max(v.committed_index, h.commit_of.get(v.node_id, v.committed_index))
    top = min(v.committed_index, v.last_index)
    for entry in v.log:
        if entry.index > top:
            break
        if entry.index not in h.committed:
            h.committed[entry.index] = entry
            h.committed_under_term[entry.index] = h.largest_leader_term
    h.last_view[v.node_id] = v


def forget_volatile(h: RaftHistory, node_id: str) -> None:
    """``node_id`` crashed: its volatile state (commitIndex, current log view) is gone."""
    h.commit_of.pop(node_id, None)
    h.last_view.pop(node_id, None)


# ------------------------------------------------------------------ liveness

# One live leader, every other live node its follower in its term: a RaftView has the
# fields DLedger's judgement reads (node_id, role, leader_id, curr_term).
stable_leader = dledger.stable_leader
