"""DLedger protocol records: roles, result codes, requests, responses, log entries.

Names follow openmessaging/dledger (``VoteResponse.RESULT``, ``ParseResult``,
``DLedgerResponseCode``) so that a trace reads like the real node's log.
"""
from __future__ import annotations

import enum

import attrs

NO_TERM = -1
NO_INDEX = -1
# DLedgerConfig.group's default: the raft group a node belongs to
DEFAULT_GROUP = "default"


class Role(enum.Enum):
    CANDIDATE = "CANDIDATE"
    FOLLOWER = "FOLLOWER"
    LEADER = "LEADER"


class VoteResult(enum.Enum):
    """``VoteResponse.RESULT``. UNKNOWN marks a reply that carries no decision."""

    UNKNOWN = "UNKNOWN"
    ACCEPT = "ACCEPT"
    REJECT_UNKNOWN_LEADER = "REJECT_UNKNOWN_LEADER"
    REJECT_UNEXPECTED_LEADER = "REJECT_UNEXPECTED_LEADER"
    REJECT_EXPIRED_VOTE_TERM = "REJECT_EXPIRED_VOTE_TERM"
    REJECT_ALREADY_VOTED = "REJECT_ALREADY_VOTED"
    REJECT_ALREADY_HAS_LEADER = "REJECT_ALREADY_HAS_LEADER"
    REJECT_TERM_NOT_READY = "REJECT_TERM_NOT_READY"
    REJECT_TERM_SMALL_THAN_LEDGER = "REJECT_TERM_SMALL_THAN_LEDGER"
    REJECT_EXPIRED_LEDGER_TERM = "REJECT_EXPIRED_LEDGER_TERM"
    REJECT_SMALL_LEDGER_END_INDEX = "REJECT_SMALL_LEDGER_END_INDEX"
    REJECT_TAKING_LEADERSHIP = "REJECT_TAKING_LEADERSHIP"


class ParseResult(enum.Enum):
    """``VoteResponse.ParseResult``: what a candidate concludes from one vote round."""

    WAIT_TO_REVOTE = "WAIT_TO_REVOTE"
    REVOTE_IMMEDIATELY = "REVOTE_IMMEDIATELY"
    PASSED = "PASSED"
    WAIT_TO_VOTE_NEXT = "WAIT_TO_VOTE_NEXT"


class ResponseCode(enum.IntEnum):
    """The subset of ``DLedgerResponseCode`` the election and push paths answer with."""

    UNKNOWN = -1
    SUCCESS = 200
    UNKNOWN_GROUP = 400
    UNKNOWN_MEMBER = 401
    UNEXPECTED_MEMBER = 402
    EXPIRED_TERM = 403
    INCONSISTENT_STATE = 406
    INCONSISTENT_TERM = 407
    INCONSISTENT_LEADER = 409
    TERM_NOT_READY = 416


class PushType(enum.Enum):
    COMPARE = "COMPARE"
    TRUNCATE = "TRUNCATE"
    APPEND = "APPEND"
    COMMIT = "COMMIT"


# ---------------------------------------------------------------- wire messages


@attrs.frozen(slots=True)
class VoteRequest:
    term: int
    candidate: str  # VoteRequest.leaderId: the node asking for the vote
    ledger_end_term: int
    ledger_end_index: int
    round: int = 0  # the candidate's round id (stands in for the RPC future)
    group: str = DEFAULT_GROUP
    # the node the request is addressed to (remoteId); None: the node that receives it
    # (rmqha's simulated network never misroutes, so its nodes leave it out)
    remote_id: str | None = None


@attrs.frozen(slots=True)
class VoteResponse:
    term: int
    result: VoteResult
    round: int = 0  # the candidate's round id, echoed (stands in for the RPC future)


@attrs.frozen(slots=True)
class HeartBeatRequest:
    term: int
    leader: str
    round: int = 0
    group: str = DEFAULT_GROUP
    remote_id: str | None = None  # as VoteRequest.remote_id


@attrs.frozen(slots=True)
class HeartBeatResponse:
    term: int
    code: ResponseCode
    round: int = 0


@attrs.frozen(slots=True)
class Entry:
    index: int
    term: int
    body: str = ""


@attrs.frozen(slots=True)
class PushEntryRequest:
    """Leader → follower replication. Fields by type:

    COMPARE: G2 sends (prev_index, prev_term) of the entry before the write index;
    G1 sends the leader's own entry at the compare index in (prev_index, prev_term).
    TRUNCATE: keep entries ``< truncate_index`` (prev_index + 1 in G2 terms).
    APPEND: ``entries`` starting at ``entries[0].index``. COMMIT: just ``commit_index``.
    """

    term: int
    leader: str
    type: PushType
    commit_index: int
    prev_index: int = NO_INDEX
    prev_term: int = NO_TERM
    entries: tuple[Entry, ...] = ()
    seq: int = 0


@attrs.frozen(slots=True)
class PushEntryResponse:
    term: int
    code: ResponseCode
    type: PushType
    end_index: int = NO_INDEX  # follower's ledgerEndIndex after handling
    x_term: int = NO_TERM  # G2 conflict hint: the term found at prev_index
    x_index: int = NO_INDEX  # G2 conflict hint: first index of x_term
    seq: int = 0


@attrs.frozen(slots=True)
class ClientAppend:
    """A client asks the node to append ``body`` (delivered by the simulator)."""

    body: str


# ---------------------------------------------------------------- observation


@attrs.frozen(slots=True)
class PeerProgress:
    """What a leader keeps for one follower (DLedgerEntryPusher), in DLedger's words.

    ``write_index``: the EntryDispatcher's writeIndex, the index of the next entry it
    pushes to the peer (Raft's nextIndex). ``water_mark``: the peer's water mark in the
    leader's current term (peerWaterMarksByTerm[currTerm][peer]), the highest index the
    peer is known to hold as the leader does, the value the leader counts in its commit
    quorum (Raft's matchIndex; -1: nothing known yet). DLedger's logs start at 0, so a
    follower known to hold nothing has water mark -1 and write index >= 0.
    """

    peer: str
    write_index: int
    water_mark: int


@attrs.frozen(slots=True)
class DLedgerView:
    """What invariants and reports observe of one DLedger node.

    ``progress``: on a leader, its replication state per follower (sorted by peer);
    None on a node that does not lead, and on an implementation that does not expose it
    (the invariants over it then report "not observed").
    """

    node_id: str
    role: Role
    curr_term: int
    voted_for: str | None
    leader_id: str | None
    ledger_end_index: int
    ledger_end_term: int
    committed_index: int
    applied_index: int
    log: tuple[Entry, ...]
    progress: tuple[PeerProgress, ...] | None = None
