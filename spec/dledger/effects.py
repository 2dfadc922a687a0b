"""Effects: what a decision asks the node to do to its own state.

Decision procedures return these instead of a modified copy of the state; the node
applies them in order (``reference/dledger_node.py``), guarded by the role-change
preconditions in ``member_state.py``. Each is tiny and immutable.
"""
from __future__ import annotations

import attrs

from spec.dledger.records import Entry


@attrs.frozen(slots=True)
class SetVotedFor:
    """currVoteFor := candidate, and persist (currTerm, currVoteFor) before replying."""

    candidate: str


@attrs.frozen(slots=True)
class BecomeCandidate:
    """changeRoleToCandidate(term): applies only if term >= currTerm (see member_state)."""

    term: int


@attrs.frozen(slots=True)
class IncreaseTermImmediately:
    """needIncreaseTermImmediately := true: the next candidate round calls nextTerm()."""


@attrs.frozen(slots=True)
class BecomeFollower:
    """changeRoleToFollower(term, leader): applies only if currTerm == term."""

    term: int
    leader: str


@attrs.frozen(slots=True)
class BecomeLeader:
    """changeRoleToLeader(term): applies only if currTerm == term."""

    term: int


@attrs.frozen(slots=True)
class RefreshLeaderHeartbeat:
    """lastLeaderHeartBeatTime := now (a heartbeat from the current leader arrived)."""


@attrs.frozen(slots=True)
class RecordHeartbeatQuorum:
    """lastSuccHeartBeatTime := now (a quorum acknowledged the leader's heartbeat)."""


@attrs.frozen(slots=True)
class ResendHeartbeat:
    """lastSendHeartBeatTime := -1: send the next heartbeat round at the next tick."""


@attrs.frozen(slots=True)
class TruncateLog:
    """Drop every entry with index >= ``from_index``."""

    from_index: int


@attrs.frozen(slots=True)
class AppendEntries:
    entries: tuple[Entry, ...]


@attrs.frozen(slots=True)
class AdvanceCommitIndex:
    """committedIndex := index (only ever moves forward; the node checks nothing)."""

    index: int


@attrs.frozen(slots=True)
class ClampCommitIndex:
    """committedIndex := min(committedIndex, index) after a truncation (fix of #316)."""

    index: int


# Shared instances of the field-less effects.
INCREASE_TERM_IMMEDIATELY = IncreaseTermImmediately()
REFRESH_LEADER_HEARTBEAT = RefreshLeaderHeartbeat()
RECORD_HEARTBEAT_QUORUM = RecordHeartbeatQuorum()
RESEND_HEARTBEAT = ResendHeartbeat()
