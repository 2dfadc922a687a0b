"""The minimal replicated log: follower push handling, the leader's per-follower
dispatcher (COMPARE → TRUNCATE → APPEND), and the commit rules.

Two generations (the profile's ``log_generation``):

* G1 (≤ 0.3.2): COMPARE sends the leader's own entry at a compare index; a mismatch
  steps the index back by one (or down to the follower's end). The commit index is the
  quorum watermark with no current-term check: the Raft "figure 8" hazard exists.
* G2 (0.4.0+): COMPARE sends (prevIndex, prevTerm) of the entry before the write index;
  a mismatch answers the conflict hint (xTerm, xIndex = first index of xTerm there);
  TRUNCATE drops from match + 1; only entries of the current term commit by counting.

Logs are passed as sequences of ``Entry`` with ``log[i].index == i``.
"""
from __future__ import annotations

import enum
from typing import Sequence

import attrs

from spec.dledger.effects import AdvanceCommitIndex, AppendEntries, ClampCommitIndex, TruncateLog
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import DEFAULT_PROFILE, LogGeneration, Profile
from spec.dledger.records import (
    NO_INDEX,
    NO_TERM,
    Entry,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    ResponseCode,
    Role,
)

MAX_APPEND_BATCH = 4  # entries per APPEND push (the real pusher batches by bytes)


def ledger_end_term(log: Sequence[Entry]) -> int:
    """ledgerEndTerm: the term of the last entry (-1 for an empty log)."""
    return log[-1].term if log else NO_TERM


def ledger_end_term_after_append(entry: Entry, curr_term: int) -> int:
    """A follower's ledgerEndTerm after appending ``entry`` is the entry's own term.

    (DLedger #52: release-0.1 took currTerm instead; kept as a mutant.)
    """
    return entry.term


def leader_entry(log: Sequence[Entry], curr_term: int, body: str) -> Entry:
    """The entry a leader appends for a client: at ledgerEnd + 1, of its current term."""
    return Entry(len(log), curr_term, body)


def first_index_of_term(log: Sequence[Entry], term: int, at_or_before: int) -> int:
    """The first index of the run of ``term`` entries that contains ``at_or_before``."""
    i = at_or_before
    while i > 0 and log[i - 1].term == term:
        i -= 1
    return i


def client_entry(member: MemberView, log: Sequence[Entry], body: str) -> Entry | None:
    """The entry a node appends for a client's request: the leader's next index in its own
    term; a node that does not lead appends nothing (the client is told NOT_LEADER)."""
    if member.role is not Role.LEADER:
        return None
    return leader_entry(log, member.curr_term, body)


# ------------------------------------------------------------------ follower side


@attrs.frozen(slots=True)
class PushDecision:
    response: PushEntryResponse
    effects: tuple = ()
    row: str = ""


def _answer(
    request: PushEntryRequest,
    code: ResponseCode,
    end_index: int,
    row: str,
    effects: tuple = (),
    x_term: int = NO_TERM,
    x_index: int = NO_INDEX,
    term: int | None = None,
) -> PushDecision:
    return PushDecision(
        PushEntryResponse(
            term=request.term if term is None else term,
            code=code,
            type=request.type,
            end_index=end_index,
            x_term=x_term,
            x_index=x_index,
            seq=request.seq,
        ),
        effects,
        row,
    )


def _commit_effects(commit_index: int, new_end: int, committed_index: int) -> tuple:
    """Followers take min(leader commit, own end), never decreasing."""
    target = min(commit_index, new_end)
    return (AdvanceCommitIndex(target),) if target > committed_index else ()


def _compare_g2(request: PushEntryRequest, log: Sequence[Entry]) -> PushDecision:
    end = len(log) - 1
    if request.prev_index < 0:
        # Before the first entry the term is -1 (ledgerBeforeBeginTerm): only the
        # empty-leader compare (-1, -1) matches there, and no hint can be given.
        if request.prev_index == NO_INDEX and request.prev_term == NO_TERM:
            return _answer(request, ResponseCode.SUCCESS, end, "compare_empty_leader")
        return _answer(request, ResponseCode.INCONSISTENT_STATE, end, "compare_before_first")
    if end >= request.prev_index:
        local_term = log[request.prev_index].term
        if local_term == request.prev_term:
            return _answer(request, ResponseCode.SUCCESS, end, "compare_match")
        return _answer(
            request,
            ResponseCode.INCONSISTENT_STATE,
            end,
            "compare_conflict_hint",
            x_term=local_term,
            x_index=first_index_of_term(log, local_term, request.prev_index),
        )
    return _answer(request, ResponseCode.INCONSISTENT_STATE, end, "compare_beyond_end")


def _compare_g1(request: PushEntryRequest, log: Sequence[Entry]) -> PushDecision:
    end = len(log) - 1
    i = request.prev_index
    if 0 <= i <= end and log[i].term == request.prev_term:
        return _answer(request, ResponseCode.SUCCESS, end, "compare_match")
    return _answer(request, ResponseCode.INCONSISTENT_STATE, end, "compare_mismatch")


_COMPARE = {"G1": _compare_g1, "G2": _compare_g2}


def handle_push(
    member: MemberView,
    request: PushEntryRequest,
    log: Sequence[Entry],
    committed_index: int,
    profile: Profile = DEFAULT_PROFILE,
) -> PushDecision:
    """A follower handles one push. It accepts only from its leader in its term."""
    end = len(log) - 1
    if request.term < member.curr_term:
        return _answer(request, ResponseCode.EXPIRED_TERM, end, "expired_term", term=member.curr_term)
    if request.term != member.curr_term:
        return _answer(request, ResponseCode.INCONSISTENT_TERM, end, "inconsistent_term", term=member.curr_term)
    if member.leader_id != request.leader:
        return _answer(request, ResponseCode.INCONSISTENT_LEADER, end, "inconsistent_leader")
    kind = request.type
    if kind is PushType.COMPARE:
        return _COMPARE[profile.log_generation](request, log)
    if kind is PushType.TRUNCATE:
        if not 0 <= request.prev_index <= end + 1:
            # the store cannot truncate there (DLedgerStore.truncate's index check)
            return _answer(request, ResponseCode.INCONSISTENT_STATE, end, "truncate_out_of_range")
        # Keep entries < prev_index, then write the entries sent along (G1 rewrites
        # the matched entry itself; G2 sends none).
        new_end = request.prev_index - 1 + len(request.entries)
        effects = (TruncateLog(request.prev_index),)
        if request.entries:
            effects += (AppendEntries(request.entries),)
        effects += (ClampCommitIndex(new_end),)
        effects += _commit_effects(request.commit_index, new_end, min(committed_index, new_end))
        return _answer(request, ResponseCode.SUCCESS, new_end, "truncate", effects)
    if kind is PushType.APPEND:
        if request.entries and 0 <= request.entries[0].index and request.entries[-1].index <= end and all(
                log[e.index] == e for e in request.entries):
            # a push of entries it already holds (the ack was lost, or the push came twice):
            # upstream answers SUCCESS and changes nothing (EntryHandler.checkAppendFuture,
            # "PushFallBehind", every release); a push that differs from them is out of order
            return _answer(request, ResponseCode.SUCCESS, end, "append_held")
        if not request.entries or request.entries[0].index != end + 1:
            return _answer(request, ResponseCode.INCONSISTENT_STATE, end, "append_out_of_order")
        new_end = request.entries[-1].index
        effects = (AppendEntries(request.entries),) + _commit_effects(request.commit_index, new_end, committed_index)
        return _answer(request, ResponseCode.SUCCESS, new_end, "append", effects)
    return _answer(request, ResponseCode.SUCCESS, end, "commit", _commit_effects(request.commit_index, end, committed_index))


PUSH_ROWS = (
    "expired_term",
    "inconsistent_term",
    "inconsistent_leader",
    "compare_empty_leader",
    "compare_match",
    "compare_conflict_hint",
    "compare_beyond_end",
    "compare_before_first",
    "compare_mismatch",
    "truncate",
    "truncate_out_of_range",
    "append",
    "append_held",
    "append_out_of_order",
    "commit",
)


# ------------------------------------------------------------------ leader side


class DispatcherState(enum.Enum):
    COMPARE = "COMPARE"
    TRUNCATE = "TRUNCATE"
    APPEND = "APPEND"


@attrs.frozen(slots=True)
class Dispatcher:
    """The leader's replication state for one follower (EntryDispatcher).

    ``next_index``: G2's writeIndex (compare at next_index - 1, append from it);
    G1's compareIndex is ``next_index - 1`` too, so one field serves both.
    ``match_index``: the follower's last index known to equal the leader's.
    """

    state: DispatcherState = DispatcherState.COMPARE
    next_index: int = -1  # -1: not started (start from the leader's end)
    match_index: int = NO_INDEX


def start_dispatcher() -> Dispatcher:
    return Dispatcher()


def next_push(
    d: Dispatcher,
    log: Sequence[Entry],
    term: int,
    leader: str,
    commit_index: int,
    generation: LogGeneration,
    seq: int,
) -> tuple[Dispatcher, PushEntryRequest | None]:
    """The next request this dispatcher sends (None: nothing to send now)."""
    end = len(log) - 1
    if d.state is DispatcherState.COMPARE:
        if end == NO_INDEX:
            return d, None  # an empty leader log has nothing to compare
        next_index = end + 1 if d.next_index < 0 or d.next_index > end + 1 else d.next_index
        d = attrs.evolve(d, next_index=next_index)
        prev = next_index - 1
        prev_term = log[prev].term if prev >= 0 else NO_TERM
        return d, PushEntryRequest(term, leader, PushType.COMPARE, commit_index, prev, prev_term, (), seq)
    if d.state is DispatcherState.TRUNCATE:
        keep_below = d.match_index + 1
        entries = (log[d.match_index],) if generation == "G1" and d.match_index >= 0 else ()
        cut = d.match_index if entries else keep_below
        return d, PushEntryRequest(term, leader, PushType.TRUNCATE, commit_index, cut, NO_TERM, entries, seq)
    # APPEND
    if d.next_index <= end:
        batch = tuple(log[d.next_index : d.next_index + MAX_APPEND_BATCH])
        return d, PushEntryRequest(term, leader, PushType.APPEND, commit_index, d.next_index - 1, NO_TERM, batch, seq)
    return d, None


def commit_push(term: int, leader: str, commit_index: int, seq: int) -> PushEntryRequest:
    """An idle dispatcher tells its follower the commit index."""
    return PushEntryRequest(term, leader, PushType.COMMIT, commit_index, seq=seq)


def on_push_response(
    d: Dispatcher, request: PushEntryRequest, response: PushEntryResponse, generation: LogGeneration
) -> Dispatcher:
    """Advance the dispatcher on a reply; any unexpected answer goes back to COMPARE."""
    ok = response.code is ResponseCode.SUCCESS
    kind = request.type
    if kind is PushType.COMPARE and d.state is DispatcherState.COMPARE:
        if ok:
            match = request.prev_index
            if match == response.end_index:
                return Dispatcher(DispatcherState.APPEND, match + 1, match)
            return Dispatcher(DispatcherState.TRUNCATE, match + 1, match)
        if response.code is not ResponseCode.INCONSISTENT_STATE:
            return d
        if generation == "G2":
            # fast backup: jump to the first index of the conflicting term, or to the end
            target = response.x_index if response.x_term != NO_TERM else response.end_index + 1
            return attrs.evolve(d, next_index=target)
        compare = request.prev_index
        compare = response.end_index if compare > response.end_index else compare - 1
        if compare < 0:
            # nothing in common: rewrite the follower from the first entry
            return Dispatcher(DispatcherState.TRUNCATE, 0, NO_INDEX)
        return attrs.evolve(d, next_index=compare + 1)
    if kind is PushType.TRUNCATE and d.state is DispatcherState.TRUNCATE and ok:
        return Dispatcher(DispatcherState.APPEND, response.end_index + 1, response.end_index)
    if kind is PushType.APPEND and d.state is DispatcherState.APPEND:
        if ok:
            last = request.entries[-1].index
            return Dispatcher(DispatcherState.APPEND, max(d.next_index, last + 1), max(d.match_index, last))
        return Dispatcher(DispatcherState.COMPARE, d.next_index, d.match_index)
    if kind is PushType.COMMIT:
        return d
    return Dispatcher(DispatcherState.COMPARE, d.next_index, d.match_index)


def quorum_match_index(match_indexes: Sequence[int]) -> int:
    """The largest index that a majority (self included) holds: the quorum watermark."""
    ordered = sorted(match_indexes, reverse=True)
    return ordered[len(ordered) // 2]


def leader_commit_index(
    match_indexes: Sequence[int],
    log: Sequence[Entry],
    curr_term: int,
    committed_index: int,
    generation: LogGeneration,
) -> int:
    """The leader's new committedIndex. ``match_indexes`` has one value per peer.

    G1 commits the watermark whatever its term; G2 only when the entry at the
    watermark is of the current term (entries before it then commit with it).
    """
    q = min(quorum_match_index(match_indexes), len(log) - 1)
    if q <= committed_index:
        return committed_index
    if generation == "G2" and log[q].term != curr_term:
        return committed_index
    return q
