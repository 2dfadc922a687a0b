"""Records of a generic Raft node as the suite observes it.

Indexes are the implementation's own (PySyncObj starts its log at 1 with a no-op
entry, DLedger at 0): the invariants compare entries by ``index`` and never assume
where a log starts, so a log that was compacted (a suffix only) is still judged.
"""
from __future__ import annotations

from typing import Protocol

import attrs

from spec.dledger.records import DLedgerView, Role


# The three Raft roles, under the names DLedger's records already give them, so that
# leader-tracking code serves a DLedger group and a generic Raft group alike.
RaftRole = Role


@attrs.frozen(slots=True)
class RaftEntry:
    index: int
    term: int
    body: str = ""  # a readable rendering of the command ("noop" for internal entries)


class LogEntry(Protocol):
    """What the generic invariants read of a log entry (a ``RaftEntry``, or a DLedger ``Entry``)."""

    @property
    def index(self) -> int: ...
    @property
    def term(self) -> int: ...
    @property
    def body(self) -> str: ...


@attrs.frozen(slots=True)
class FollowerProgress:
    """What a leader keeps for one follower (Raft paper, figure 2: nextIndex[],
    matchIndex[]; etcd/raft's Progress): ``next_index``, the index of the next entry to
    send it; ``match_index``, the highest index known to be replicated on it (the value
    the leader counts for it when it advances its commit index). Raft's convention
    holds in every implementation's own indexes: ``match_index < next_index``, and
    "nothing known" is the index just before the log's first (0 where logs start at 1,
    as in PySyncObj; -1 where they start at 0, as in DLedger)."""

    peer: str
    next_index: int
    match_index: int


@attrs.frozen(slots=True)
class RaftView:
    """One node's visible state.

    ``voted_for`` is the vote of ``curr_term`` (None if none); ``log`` is the node's
    log in index order, contiguous; ``committed_index`` is the highest index it
    considers committed (volatile in Raft: it may restart lower after a crash).
    ``progress``: on a leader, its ``FollowerProgress`` per follower, sorted by peer;
    None on a node that does not lead, or whose implementation does not expose it
    (the invariants that read it then report "not observed", never a pass).
    """

    node_id: str
    role: RaftRole
    curr_term: int
    voted_for: str | None
    leader_id: str | None
    committed_index: int
    log: tuple[LogEntry, ...] = ()
    progress: tuple[FollowerProgress, ...] | None = None

    @property
    def last_index(self) -> int:
        return self.log[-1].index if self.log else -1

    def entry(self, index: int) -> LogEntry | None:
        """The entry at ``index`` (None if the log does not hold it)."""
        if not self.log:
            return None
        i = index - self.log[0].index
        return self.log[i] if 0 <= i < len(self.log) else None


def raft_view(v: DLedgerView) -> RaftView:
    """A DLedger node seen as a Raft node: the same role, term, vote, leader, commit
    index and log (DLedger's entries already carry index, term and body, and are shared,
    not copied). DLedger-only state (ledgerEnd, applied index) is left out: the
    invariants that read it are DLedger's own (``spec/invariants/dledger.py``).

    A leader's progress per follower: DLedger's writeIndex is Raft's nextIndex and its
    peer water mark Raft's matchIndex. The conventions already agree (the next entry to
    send; the last entry known replicated, so water mark < writeIndex), only "nothing
    known" is -1 because DLedger's logs start at index 0: the values carry over as
    they are."""
    progress = v.progress
    if progress is not None:
        progress = tuple(FollowerProgress(p.peer, p.write_index, p.water_mark) for p in progress)
    return RaftView(v.node_id, v.role, v.curr_term, v.voted_for, v.leader_id, v.committed_index, v.log, progress)


@attrs.frozen(slots=True)
class ClientCommand:
    """A client asks the node to replicate ``body`` (delivered by the simulator)."""

    body: str


# What a ``LinkFault`` does to a node's connections with a peer (adapters/simulated_tcp.py):
# ``reset`` aborts them (ECONNRESET here, an RST to the peer); ``half-open`` silences them
# in both directions while both ends still hold them established.
LINK_FAULTS = ("reset", "half-open")


@attrs.frozen(slots=True)
class LinkFault:
    """The network does something to ``node``'s connections with ``peer`` (delivered by the
    simulator from ``"network"`` to a node whose implementation holds connections of its
    own and declares ``link_faults`` in its hello)."""

    peer: str
    kind: str
