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
class RaftView:
    """One node's visible state.

    ``voted_for`` is the vote of ``curr_term`` (None if none); ``log`` is the node's
    log in index order, contiguous; ``committed_index`` is the highest index it
    considers committed (volatile in Raft: it may restart lower after a crash).
    """

    node_id: str
    role: RaftRole
    curr_term: int
    voted_for: str | None
    leader_id: str | None
    committed_index: int
    log: tuple[LogEntry, ...] = ()

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
    invariants that read it are DLedger's own (``spec/invariants/dledger.py``)."""
    return RaftView(v.node_id, v.role, v.curr_term, v.voted_for, v.leader_id, v.committed_index, v.log)


@attrs.frozen(slots=True)
class ClientCommand:
    """A client asks the node to replicate ``body`` (delivered by the simulator)."""

    body: str
