"""Abstract protocol states of a Raft-family group (DLedger included, through its Raft view).

Campaigns measure which abstract states a run reaches and steer towards new ones
(conformance/search.py). An abstract state forgets names, absolute terms, indexes and
times, and keeps what the protocol's decisions depend on:

per node (live or down):

| component | values |
|---|---|
| role | ``L`` leader, ``F`` follower, ``C`` candidate, ``-`` down |
| term | ``=`` the highest live term, ``<`` behind it |
| vote | ``0`` none in its term, ``s`` itself, ``o`` another node |
| log | relation to the reference log: ``same``, ``prefix`` (shorter), ``longer`` (extends it), ``stale`` (diverges, last term older), ``fork`` (diverges, last term as new or newer); a divergent log holding more entries than the reference is ``stale-longer`` or ``fork-longer`` |
| commit | ``=``, ``<``, ``>`` the reference node's committed index |

A divergent log's length is kept because procedures branch on it: a vote compares the
last term, then the length (an old leader cut off with a *longer* log of an older term is
where a length-first slip grants its vote: the `stale-leader-longer-log` nemesis aims
there), and a leader walks a divergent follower back from the shorter of its own
position and the follower's end.

The reference log is the log of the leader with the highest term among live nodes, or,
with no leader, the most up-to-date live log (last term, then length). A group's state
is the multiset of its node states (node names do not matter: symmetry), the number of
live leaders, and the network's condition (``clean``, ``cut``: a partition or blocked
link, ``lossy``: loss or duplication).

A step's state (``step_state``, what the search steers by) adds what the node handled:
a tick, or a message by its kind and its term against the node's own before the step
(``handled``): every handler decides first on that relation (an older term is refused or
ignored, a newer one makes the node step down, the same term is where votes, entries
and acknowledgements are judged), so a stale or late message and a fresh one are
different situations.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from spec.raft.records import RaftView
from spec.dledger.records import Role

_ROLE = {Role.LEADER: "L", Role.FOLLOWER: "F", Role.CANDIDATE: "C"}

NODE_ROLES = ("L", "F", "C")
TERM_RELATIONS = ("=", "<")
VOTES = ("0", "s", "o")
LOG_RELATIONS = ("same", "prefix", "longer", "stale", "stale-longer", "fork", "fork-longer")
COMMIT_RELATIONS = ("=", "<", ">")
NETWORKS = ("clean", "cut", "lossy")
DOWN = "-"


def log_relation(log: Sequence, reference: Sequence) -> str:
    """How ``log`` stands to ``reference`` (entries compared by index, term and body)."""
    common = min(len(log), len(reference))
    if log[:common] == reference[:common]:  # (the usual case, compared in C: equal entries agree)
        common = 0
    for i in range(common):
        a, b = log[i], reference[i]
        if (a.index, a.term, a.body) != (b.index, b.term, b.body):
            kind = "stale" if log[-1].term < reference[-1].term else "fork"
            return kind + "-longer" if len(log) > len(reference) else kind
    if len(log) == len(reference):
        return "same"
    return "prefix" if len(log) < len(reference) else "longer"


def _reference(views: Sequence[RaftView]) -> RaftView | None:
    leaders = [v for v in views if v.role is Role.LEADER]
    if leaders:
        return max(leaders, key=lambda v: (v.curr_term, v.node_id))
    if not views:
        return None
    return max(views, key=lambda v: ((v.log[-1].term if v.log else -1), len(v.log), v.node_id))


def node_state(v: RaftView, reference: RaftView, max_term: int) -> str:
    """One node's abstract state, e.g. ``F=o/prefix/<``."""
    vote = "0" if v.voted_for is None else ("s" if v.voted_for == v.node_id else "o")
    term = "=" if v.curr_term == max_term else "<"
    commit = "=" if v.committed_index == reference.committed_index else (
        "<" if v.committed_index < reference.committed_index else ">")
    return f"{_ROLE[v.role]}{term}{vote}/{log_relation(v.log, reference.log)}/{commit}"


def group_state(views: Iterable[RaftView | None], network: str) -> str:
    """The group's abstract state: its node states (sorted), live leaders and network."""
    views = list(views)
    live = [v for v in views if v is not None]
    reference = _reference(live)
    if reference is None:
        return f"all-down|{network}"
    max_term = max(v.curr_term for v in live)
    nodes = sorted(node_state(v, reference, max_term) for v in live) + [DOWN] * (len(views) - len(live))
    leaders = sum(v.role is Role.LEADER for v in live)
    return f"{' '.join(nodes)}|leaders={leaders}|{network}"


MESSAGE_TERMS = ("<", "=", ">")  # a handled message's term against the node's: older, the same, newer


def handled(kind: str, message_term: int | None, node_term: int | None) -> str:
    """What a step handled, as a step's state names it: ``kind`` (``tick``, or a message
    kind) with, for a message carrying a term, its relation to the node's term before
    the step (``VoteRequest>``: a vote request of a newer term). Without both terms (a
    client request, a message opaque to rmqha, a node's first step) the kind alone."""
    if message_term is None or node_term is None:
        return kind
    return kind + ("<" if message_term < node_term else "=" if message_term == node_term else ">")


def step_state(node_id: str, event: str, views: Iterable[RaftView | None], network: str) -> str | None:
    """The abstract state a node reached by one step, in its group's context: its own
    state, what it handled (``handled``: ``tick``, or a message kind and its term's
    relation), the live leaders (0, 1, 2+) and the network, e.g.
    ``C<o/stale/<|PushEntryRequest=|leaders=1|cut``: the coverage the
    search steers by. A whole group's state (``group_state``) is too fine for that:
    almost every run reaches new ones, so novelty would say nothing."""
    live = [v for v in views if v is not None]
    reference = _reference(live)
    me = next((v for v in live if v.node_id == node_id), None)
    if reference is None or me is None:
        return None
    max_term = max(v.curr_term for v in live)
    leaders = min(2, sum(v.role is Role.LEADER for v in live))
    return f"{node_state(me, reference, max_term)}|{event}|leaders={leaders}|{network}"


def every_node_state() -> tuple[str, ...]:
    """Every node state ``node_state`` can produce (the universe the report checks reached)."""
    return tuple(f"{r}{t}{v}/{log}/{c}" for r in NODE_ROLES for t in TERM_RELATIONS for v in VOTES
                 for log in LOG_RELATIONS for c in COMMIT_RELATIONS)
