"""The generic Raft profile of the invariants, for any Raft-family implementation.

Pure predicates over ``RaftView`` observations (``spec/raft/records.py``) and a
``RaftHistory`` that remembers what was observed so far; ``record`` folds a checked
observation into the history and ``forget_volatile`` is called when a node crashes
(Raft's commitIndex is volatile state: a restarted node may start lower).

| name | what must hold (Raft paper, figure 3) |
|---|---|
| election-safety | at most one leader per term, over the whole history |
| term-monotonic | a node's term (currentTerm) never decreases, restarts included |
| one-vote-per-term | vote durability: a node votes for at most one candidate per term, restarts included |
| log-matching | two logs holding an entry with the same index and term are identical up to that index |
| leader-completeness | an entry committed in a term is in the log of every leader of a later term |
| committed-prefix | state machine safety: no two nodes ever commit different entries at one index |
| commit-monotonic | a node's commitIndex never decreases while it stays up |
| commit-within-log | a node never considers an index committed that its log does not hold |
| log-terms | entry terms never decrease along a log, and no entry's term exceeds the node's term |
| restart-durable | a node restarts with the term, vote and log it held when it crashed: nothing lost, nothing resurrected |
| follower-progress | within one leader term, a follower's match index never goes backwards and stays below its next index (etcd/raft's Progress) |
| leader-commit-rule | a leader advances its commit index only by counting replicas of an entry of its own term (section 5.4.2) |
| liveness | after the last fault heals, one stable leader within the implementation's bound |

The five safety invariants and the two over a leader's progress (``SHARED_CHECKS``), log matching, log terms, restart
durability and liveness are defined here once, for every Raft-family protocol:
DLedger's invariants (``spec/invariants/dledger.py``) run these very functions on a
DLedger node seen as a Raft node (``spec.raft.records.raft_view``) and add only what is
DLedger's own. commit-monotonic and commit-within-log are judged on generic Raft groups
(DLedger's applied-committed-end covers the second; its commit index is volatile too).

Restart durability compares the first observation after a restart with the last one
before the crash: every observation follows a step whose durable state was written
before its messages left (Ready.persist), so what was observed had been persisted.

follower-progress and leader-commit-rule read what a leader keeps per follower
(``RaftView.progress``: next and match index). An implementation that does not expose
it leaves ``progress`` None: both checks then judge nothing, and the scenario reports
them "not observed" (``progress_observed``), never as passed. The commit rule is judged
between two observations of one leader in one term (it needs the commit index the leader
had before); a leader that commits in the very step it is elected is not judged.
"""
from __future__ import annotations

from typing import Callable, Iterable

import attrs

from spec.dledger.log import leader_commit_index, quorum_match_index
from spec.invariants import Violation
from spec.raft.records import LogEntry, RaftEntry, RaftRole, RaftView

INVARIANTS: dict[str, str] = {
    "election-safety": "at most one leader per term over the whole history",
    "term-monotonic": "a node's term never decreases, restarts included",
    "one-vote-per-term": "a node votes for at most one candidate per term, restarts included",
    "log-matching": "logs with an entry of the same index and term are identical up to it",
    "leader-completeness": "every committed entry is in the log of every leader of a later term",
    "committed-prefix": "no two nodes commit different entries at the same index",
    "commit-monotonic": "commitIndex never decreases while a node stays up",
    "commit-within-log": "commitIndex never exceeds the last index of the node's log",
    "log-terms": "entry terms never decrease along a log and never exceed the node's term",
    "restart-durable": "a node restarts with the term, vote and log it held when it crashed",
    "follower-progress": "within one leader term a follower's match index never goes back and stays below its next index",
    "leader-commit-rule": "a leader advances its commit index only by counting replicas of an entry of its own term",
    "liveness": "after the last fault heals, exactly one leader within the bound",
}


@attrs.define(slots=True)
class RaftHistory:
    """What the invariants remember. Updated only through ``record`` and ``forget_volatile``."""

    leader_of_term: dict[int, str] = attrs.Factory(dict)
    max_term: dict[str, int] = attrs.Factory(dict)
    vote_of: dict[tuple[str, int], str] = attrs.Factory(dict)
    commit_of: dict[str, int] = attrs.Factory(dict)  # per live node: last commitIndex seen
    committed: dict[int, LogEntry] = attrs.Factory(dict)  # index -> the entry first seen committed there
    committed_under_term: dict[int, int] = attrs.Factory(dict)  # index -> largest leader term seen then
    largest_leader_term: int = -10**9
    last_view: dict[str, RaftView] = attrs.Factory(dict)  # per live node: its last observation
    at_crash: dict[str, RaftView] = attrs.Factory(dict)  # per crashed node: its last observation before the crash
    # The committed indexes are [committed_low, committed_high] while ``committed_interval``
    # holds (always, unless a compacted log showed a later stretch first): the checks then
    # visit only that range instead of every entry of every log.
    committed_low: int = 0
    committed_high: int = -1
    committed_interval: bool = True


def _same(a: LogEntry, b: LogEntry) -> bool:
    return a.term == b.term and a.body == b.body


def _committed_top(v: RaftView) -> int:
    """The highest index ``v`` holds and considers committed."""
    return min(v.committed_index, v.last_index)


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
        return Violation("term-monotonic", f"{v.node_id} term went from {seen} back to {v.curr_term}",
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


def conflicting_committed(h: RaftHistory, v: RaftView) -> int | None:
    """The first index ``v`` considers committed that holds another entry than the one
    committed there before (None: none does)."""
    if not v.log:
        return None
    first, top = v.log[0].index, _committed_top(v)
    if h.committed_interval:  # only indexes committed before can disagree
        first, top = max(first, h.committed_low), min(top, h.committed_high)
    for entry in v.log[first - v.log[0].index: top - v.log[0].index + 1]:
        earlier = h.committed.get(entry.index)
        if earlier is not None and not _same(entry, earlier):
            return entry.index
    return None


def check_committed_prefix(h: RaftHistory, v: RaftView) -> Violation | None:
    index = conflicting_committed(h, v)
    if index is None:
        return None
    entry, earlier = v.entry(index), h.committed[index]
    return Violation("committed-prefix",
                     f"{v.node_id} committed index {index} as (term {entry.term}, {entry.body!r}) "
                     f"but (term {earlier.term}, {earlier.body!r}) was committed there before", v.node_id)


def missing_committed(h: RaftHistory, v: RaftView) -> int | None:
    """The first index committed before ``v``'s term whose entry ``v``, a leader, lacks
    (None: it holds every one, or it does not lead)."""
    if v.role is not RaftRole.LEADER:
        return None
    first = v.log[0].index if v.log else None
    indexes = range(h.committed_low, h.committed_high + 1) if h.committed_interval else sorted(h.committed)
    for index in indexes:
        if h.committed_under_term[index] >= v.curr_term:
            continue  # committed while this term's leader may already have been elected
        if first is not None and index < first:
            continue  # compacted into a snapshot: not observable
        mine = v.entry(index)
        if mine is None or not _same(mine, h.committed[index]):
            return index
    return None


def check_leader_completeness(h: RaftHistory, v: RaftView) -> Violation | None:
    index = missing_committed(h, v)
    if index is None:
        return None
    entry = h.committed[index]
    return Violation("leader-completeness",
                     f"leader {v.node_id} of term {v.curr_term} lacks committed entry {index} "
                     f"(term {entry.term}, {entry.body!r})", v.node_id)


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
    if v.log[low - v.log[0].index: anchor + 1 - v.log[0].index] == \
            other.log[low - other.log[0].index: anchor + 1 - other.log[0].index]:
        return None  # (the usual case, compared in C: equal entries are the same)
    a, b = sorted((v, other), key=lambda x: x.node_id)  # the same words whichever node was judged
    for i in range(low, anchor + 1):
        mine, theirs = a.entry(i), b.entry(i)
        if not _same(mine, theirs):
            return Violation("log-matching",
                             f"{a.node_id} and {b.node_id} agree on (index {anchor}, term {a.entry(anchor).term}) "
                             f"but differ at index {i}: (term {mine.term}, {mine.body!r}) vs "
                             f"(term {theirs.term}, {theirs.body!r})", v.node_id)
    return None


def check_log_terms(v: RaftView) -> Violation | None:
    """Terms never decrease along a log, and no entry is of a term the node has not reached."""
    for a, b in zip(v.log, v.log[1:]):
        if b.term < a.term:
            return Violation("log-terms", f"{v.node_id}: entry {b.index} has term {b.term} after term {a.term} "
                                          f"at index {a.index}", v.node_id)
    if v.log and v.log[-1].term > v.curr_term:
        return Violation("log-terms", f"{v.node_id}: entry {v.log[-1].index} has term {v.log[-1].term}, "
                                      f"beyond the node's term {v.curr_term}", v.node_id)
    return None


def check_restart_durable(h: RaftHistory, v: RaftView) -> Violation | None:
    """The first observation after a restart holds what the last one before the crash did."""
    before = h.at_crash.get(v.node_id)
    if before is None:
        return None
    where = f"{v.node_id} restarted with"
    if (v.curr_term, v.voted_for) != (before.curr_term, before.voted_for):
        return Violation("restart-durable", f"{where} term {v.curr_term} and vote {v.voted_for!r}; it crashed with "
                                            f"term {before.curr_term} and vote {before.voted_for!r}", v.node_id)
    if v.last_index != before.last_index:
        what = "lost" if v.last_index < before.last_index else "resurrected"
        return Violation("restart-durable", f"{where} its log ending at index {v.last_index}; it crashed with it "
                                            f"ending at {before.last_index} (entries {what})", v.node_id)
    for e in v.log:
        old = before.entry(e.index)
        if old is not None and not _same(e, old):
            return Violation("restart-durable", f"{where} (term {e.term}, {e.body!r}) at index {e.index}; it crashed "
                                                f"holding (term {old.term}, {old.body!r}) there", v.node_id)
    return None


# ------------------------------------------------------------------ a leader's progress

# the properties judged only on a leader's progress: "not observed" without it
PROGRESS_PROPERTIES = ("follower-progress", "leader-commit-rule")


def progress_observed(v: RaftView) -> bool:
    """Whether ``v`` lets the progress invariants judge: a leader exposing its progress."""
    return v.role is RaftRole.LEADER and v.progress is not None


def _same_leadership(h: RaftHistory, v: RaftView) -> RaftView | None:
    """The previous observation of ``v``'s node, if it led in the same term and exposed
    its progress then too (None otherwise: nothing to compare with)."""
    before = h.last_view.get(v.node_id)
    if before is None or before.progress is None or before.role is not RaftRole.LEADER \
            or before.curr_term != v.curr_term:
        return None
    return before


def _matches(v: RaftView) -> str:
    return ", ".join(f"{p.peer}: {p.match_index}" for p in v.progress) or "none"


def dropped_below(h: RaftHistory, peer: str, index: int) -> bool:
    """Whether ``peer``'s last observed log ends below ``index``: it no longer holds an
    entry its leader counted for it."""
    w = h.last_view.get(peer)
    return w is not None and w.last_index < index


def check_follower_progress(h: RaftHistory, v: RaftView,
                            dropped: Callable[[str, int, int], bool] | None = None) -> Violation | None:
    """etcd/raft's Progress within one leader term: matchIndex < nextIndex, and a
    follower's matchIndex never goes backwards (replicated entries stay replicated).

    A Raft leader keeps both by construction (it ignores a stale rejection), and a Raft
    follower cuts its log only where it conflicts with its leader's. DLedger's follower
    acts on every TRUNCATE of its leader's term, a duplicated one delivered after it
    acknowledged later entries included (upstream's EntryHandler.handleDoTruncate, 0.4.0
    and since), so it can drop entries it acknowledged; its leader then takes
    writeIndex from the follower's answer, at or below the water mark it counted, and
    the next compare matches lower. ``dropped(peer, term, index)`` (DLedger's; None for
    Raft, judged strictly) says whether ``peer`` dropped, in leader term ``term``, an entry
    at or below ``index`` that its leader had counted: the progress for such a follower is
    not judged (docs/dledger.md, "follower-progress").
    """
    if v.progress is None or v.role is not RaftRole.LEADER:
        return None
    where = f"leader {v.node_id} of term {v.curr_term}"
    for p in v.progress:
        if p.match_index >= p.next_index and (dropped is None or not dropped(p.peer, v.curr_term, p.match_index)):
            return Violation("follower-progress", f"{where}: {p.peer}'s match index {p.match_index} is not below "
                                                  f"its next index {p.next_index}", v.node_id)
    before = _same_leadership(h, v)
    if before is not None:
        was = {p.peer: p.match_index for p in before.progress}
        for p in v.progress:
            old = was.get(p.peer)
            if old is not None and p.match_index < old and (dropped is None
                                                            or not dropped(p.peer, v.curr_term, old)):
                return Violation("follower-progress", f"{where}: {p.peer}'s match index went back from {old} "
                                                      f"to {p.match_index} within the term", v.node_id)
    return None


class _ByIndex:
    """A view's log addressed by the implementation's own indexes, the way the spec's
    commit rule reads a log (``log[i]`` the entry at index i, ``len(log) - 1`` the last
    index), whatever index the log starts at."""

    __slots__ = ("_v",)

    def __init__(self, v: RaftView):
        self._v = v

    def __len__(self) -> int:
        return self._v.last_index + 1

    def __getitem__(self, index: int) -> LogEntry:
        return self._v.entry(index) or _NOT_HELD


_NOT_HELD = RaftEntry(-1, -2, "")  # an index the log does not hold (compacted): of no term


def check_leader_commit_rule(h: RaftHistory, v: RaftView) -> Violation | None:
    """A leader that advanced its commit index from c to c' (one term, two observations)
    must have been able to: the spec's commit rule (``spec.dledger.log.leader_commit_index``
    with the current-term rule, Raft section 5.4.2), given its own log and its followers'
    match indexes as observed now, capped at c', yields c'. Match indexes never go back
    within a term (follower-progress), so the ones observed after the commit are at least
    those it counted."""
    if v.progress is None or v.role is not RaftRole.LEADER:
        return None
    before = _same_leadership(h, v)
    to = v.committed_index
    if before is None or to <= before.committed_index:
        return None
    counted = [min(v.last_index, to)] + [min(p.match_index, to) for p in v.progress]
    if leader_commit_index(counted, _ByIndex(v), v.curr_term, before.committed_index, "G2") == to:
        return None
    quorum = quorum_match_index([v.last_index] + [p.match_index for p in v.progress])
    entry = v.entry(to)
    if quorum >= to and entry is not None:
        why = (f"entry {to} is of term {entry.term}: only an entry of its own term commits by counting replicas "
               f"(older ones commit with it)")
    else:
        why = f"a quorum holds only up to index {quorum} (its log ends at {v.last_index}; match indexes {_matches(v)})"
    return Violation("leader-commit-rule", f"leader {v.node_id} of term {v.curr_term} advanced its commit index "
                                           f"from {before.committed_index} to {to}: {why}", v.node_id)


# The safety invariants of every Raft-family protocol, in the order they are reported:
# the five of the Raft paper, then the two over a leader's progress.
SHARED_CHECKS = (
    check_election_safety,
    check_term_monotonic,
    check_one_vote_per_term,
    check_committed_prefix,
    check_leader_completeness,
    check_follower_progress,
    check_leader_commit_rule,
)
NODE_CHECKS = SHARED_CHECKS[:3] + (check_commit_monotonic,) + SHARED_CHECKS[3:] + (check_restart_durable,)
STATELESS_CHECKS = (check_commit_within_log, check_log_terms)


def check_log_matching_with_others(h: RaftHistory, v: RaftView) -> list[Violation]:
    """Log matching between ``v`` and the last observation of every other live node."""
    found = (check_log_matching(v, w) for n, w in sorted(h.last_view.items()) if n != v.node_id)
    return [x for x in found if x is not None]


def check_node(h: RaftHistory, v: RaftView) -> list[Violation]:
    """Every invariant for one fresh observation of ``v.node_id`` (then call ``record``).

    Log matching is checked against the last observation of every other live node.
    """
    found = [c(h, v) for c in NODE_CHECKS] + [c(v) for c in STATELESS_CHECKS]
    return [x for x in found if x is not None] + check_log_matching_with_others(h, v)


def record_shared(h: RaftHistory, v: RaftView) -> None:
    """Fold an observation into what the shared checks remember (after it was checked)."""
    if v.role is RaftRole.LEADER:
        h.leader_of_term.setdefault(v.curr_term, v.node_id)
        if v.curr_term > h.largest_leader_term:
            h.largest_leader_term = v.curr_term
    if v.curr_term > h.max_term.get(v.node_id, -10**9):
        h.max_term[v.node_id] = v.curr_term
    if v.voted_for is not None:
        h.vote_of.setdefault((v.node_id, v.curr_term), v.voted_for)
    if not v.log:
        return
    first, top = v.log[0].index, _committed_top(v)
    if top < first:
        return
    if not h.committed:
        h.committed_low, h.committed_high = first, first - 1
    elif h.committed_interval and (first > h.committed_high + 1 or top < h.committed_low - 1):
        h.committed_interval = False  # a stretch apart from what was committed so far
    if h.committed_interval:  # only below and above the committed range is anything new
        stretches = ((first, min(top, h.committed_low - 1)), (max(first, h.committed_high + 1), top))
        h.committed_low, h.committed_high = min(h.committed_low, first), max(h.committed_high, top)
    else:
        stretches = ((first, top),)
    for low, high in stretches:
        for entry in v.log[low - first: high - first + 1]:
            if entry.index not in h.committed:  # each index keeps the entry first seen committed there
                h.committed[entry.index] = entry
                h.committed_under_term[entry.index] = h.largest_leader_term


def record(h: RaftHistory, v: RaftView) -> None:
    """Fold an observation into the history (after it was checked)."""
    record_shared(h, v)
    h.commit_of[v.node_id] = max(v.committed_index, h.commit_of.get(v.node_id, v.committed_index))
    record_last_view(h, v)


def record_last_view(h: RaftHistory, v: RaftView) -> None:
    """Remember ``v`` as its node's current state (log matching, restart durability); the
    first observation after a restart has then been judged against the crash."""
    h.last_view[v.node_id] = v
    h.at_crash.pop(v.node_id, None)


def forget_volatile(h: RaftHistory, node_id: str) -> None:
    """``node_id`` crashed: its volatile state (commitIndex, current log view) is gone;
    what it held is kept for the restart-durable check of its next life."""
    h.commit_of.pop(node_id, None)
    last = h.last_view.pop(node_id, None)
    if last is not None:
        h.at_crash[node_id] = last


# ------------------------------------------------------------------ liveness

def stable_leader(views: Iterable[RaftView | None]) -> str | None:
    """The leader, if exactly one live node leads and every other live node follows it."""
    live = [v for v in views if v is not None]
    leaders = [v for v in live if v.role is RaftRole.LEADER]
    if len(leaders) != 1:
        return None
    lead = leaders[0]
    for v in live:
        if v is lead:
            continue
        if v.role is not RaftRole.FOLLOWER or v.leader_id != lead.node_id or v.curr_term != lead.curr_term:
            return None
    return lead.node_id
