"""Heartbeats: the follower's handle_heartbeat, the leader's heartbeat round, and
the follower timeout (DLedgerLeaderElector.handleHeartBeat / sendHeartbeats /
maintainAsFollower).

handle_heartbeat, all profiles, first match wins:

| row                  | condition                        | code                  | reply term | effects |
|----------------------|----------------------------------|-----------------------|------------|---------|
| wrong_remote         | remoteId != me (DLedgerServer)   | UNKNOWN_MEMBER (401)  | req.term   |         |
| wrong_group          | group != mine (DLedgerServer)    | UNKNOWN_GROUP (400)   | req.term   |         |
| unknown_member       | leader not a peer                | UNKNOWN_MEMBER (401)  | C          |         |
| unexpected_member    | leader == me                     | UNEXPECTED_MEMBER (402)| C         |         |
| expired_term         | term < C                         | EXPIRED_TERM (403)    | C          |         |
| same_leader          | term == C and L == leader        | SUCCESS (200)         | -1         | heartbeat timer := now |
| no_leader_yet        | term == C and L null             | SUCCESS               | -1         | toFollower(term, leader) |
| inconsistent_leader  | term == C and L another node     | INCONSISTENT_LEADER (409)| -1      |         |
| term_not_ready       | term > C                         | TERM_NOT_READY (416)  | -1         | toCandidate(term); needIncreaseTermImmediately |
"""
from __future__ import annotations

import enum
from typing import Callable

import attrs

from spec.dledger.effects import (
    INCREASE_TERM_IMMEDIATELY,
    RECORD_HEARTBEAT_QUORUM,
    REFRESH_LEADER_HEARTBEAT,
    RESEND_HEARTBEAT,
    BecomeCandidate,
    BecomeFollower,
)
from spec.dledger.member_state import NEVER, MemberView, addressed_to_another, elapsed, of_another_group
from spec.dledger.profiles import DEFAULT_PROFILE, DEFAULT_TIMING, Profile, Timing
from spec.dledger.records import NO_TERM, HeartBeatRequest, HeartBeatResponse, ResponseCode
from spec.quorum import is_quorum


@attrs.frozen(slots=True)
class HeartbeatDecision:
    code: ResponseCode
    reply_term: int
    effects: tuple = ()
    row: str = ""


# Each row of handle_heartbeat and the code it answers, in check order: the row and
# outcome lists below are derived from it (tests/dledger/test_heartbeat.py checks it
# against every answer handle_heartbeat gives over its whole input space).
HEARTBEAT_ROW_CODES: dict[str, ResponseCode] = {
    "wrong_remote": ResponseCode.UNKNOWN_MEMBER,
    "wrong_group": ResponseCode.UNKNOWN_GROUP,
    "unknown_member": ResponseCode.UNKNOWN_MEMBER,
    "unexpected_member": ResponseCode.UNEXPECTED_MEMBER,
    "expired_term": ResponseCode.EXPIRED_TERM,
    "same_leader": ResponseCode.SUCCESS,
    "no_leader_yet": ResponseCode.SUCCESS,
    "inconsistent_leader": ResponseCode.INCONSISTENT_LEADER,
    "term_not_ready": ResponseCode.TERM_NOT_READY,
}


def _row(row: str, reply_term: int, effects: tuple = ()) -> HeartbeatDecision:
    return HeartbeatDecision(HEARTBEAT_ROW_CODES[row], reply_term, effects, row)


def handle_heartbeat(member: MemberView, request: HeartBeatRequest) -> HeartbeatDecision:
    c = member.curr_term
    if addressed_to_another(member, request.remote_id):
        return _row("wrong_remote", request.term)
    if of_another_group(member, request.group):
        return _row("wrong_group", request.term)
    if request.leader not in member.peers:
        return _row("unknown_member", c)
    if request.leader == member.self_id:
        return _row("unexpected_member", c)
    if request.term < c:
        return _row("expired_term", c)
    if request.term == c:
        if member.leader_id == request.leader:
            return _row("same_leader", NO_TERM, (REFRESH_LEADER_HEARTBEAT,))
        if member.leader_id is None:
            return _row("no_leader_yet", NO_TERM, (BecomeFollower(request.term, request.leader),))
        return _row("inconsistent_leader", NO_TERM)
    # A larger term: step down to candidate first, like handle_vote; the next
    # heartbeat at the new term makes this node a follower.
    return _row("term_not_ready", NO_TERM, (BecomeCandidate(request.term), INCREASE_TERM_IMMEDIATELY))


HEARTBEAT_ROWS = tuple(HEARTBEAT_ROW_CODES)
HEARTBEAT_OUTCOMES = tuple(dict.fromkeys(code.name for code in HEARTBEAT_ROW_CODES.values()))


# ------------------------------------------------------------ leader heartbeat round


def leader_should_send_heartbeat(now: int, last_send_heartbeat_time: int, timing: Timing = DEFAULT_TIMING) -> bool:
    """maintainAsLeader: a new round when more than one interval since the last send."""
    return now >= heartbeat_due_at(last_send_heartbeat_time, timing)


def heartbeat_due_at(last_send_heartbeat_time: int, timing: Timing = DEFAULT_TIMING) -> int:
    """The first time (ms) at which a leader's next heartbeat round starts: more than one
    interval after the last send (``NEVER``: at once)."""
    if last_send_heartbeat_time == NEVER:
        return NEVER
    return last_send_heartbeat_time + timing.heartbeat_interval_ms + 1


@attrs.frozen(slots=True)
class HeartbeatCounts:
    term: int
    answered: int = 1  # allNum starts at 1 (self)
    succ: int = 1  # succNum starts at 1 (self)
    not_ready: int = 0
    inconsistent_leader: bool = False
    max_term: int = -1  # the LAST EXPIRED_TERM reply's term, not the largest


def start_heartbeat_counts(term: int) -> HeartbeatCounts:
    return HeartbeatCounts(term=term)


def count_heartbeat(counts: HeartbeatCounts, reply: HeartBeatResponse | None) -> HeartbeatCounts:
    """Fold one reply (None: network error, counts only as answered)."""
    if reply is None:
        return attrs.evolve(counts, answered=counts.answered + 1)
    code = reply.code
    return HeartbeatCounts(
        term=counts.term,
        answered=counts.answered + 1,
        succ=counts.succ + (code is ResponseCode.SUCCESS),
        not_ready=counts.not_ready + (code is ResponseCode.TERM_NOT_READY),
        inconsistent_leader=counts.inconsistent_leader or code is ResponseCode.INCONSISTENT_LEADER,
        max_term=reply.term if code is ResponseCode.EXPIRED_TERM else counts.max_term,
    )


def heartbeat_latch_open(counts: HeartbeatCounts, peer_size: int) -> bool:
    """The leader stops waiting on a quorum (succ, or succ + notReady) or when all answered."""
    return (
        is_quorum(counts.succ, peer_size)
        or is_quorum(counts.succ + counts.not_ready, peer_size)
        or counts.answered >= peer_size
    )


class HeartbeatRoundOutcome(enum.Enum):
    QUORUM_ACK = "QUORUM_ACK"  # lastSuccHeartBeatTime := now
    RESEND = "RESEND"  # quorum with not-ready followers: send again at the next tick
    STEP_DOWN_HIGHER_TERM = "STEP_DOWN_HIGHER_TERM"  # toCandidate(maxTerm)
    STEP_DOWN_INCONSISTENT_LEADER = "STEP_DOWN_INCONSISTENT_LEADER"  # toCandidate(term)
    STEP_DOWN_LEASE_EXPIRED = "STEP_DOWN_LEASE_EXPIRED"  # toCandidate(term)
    KEEP = "KEEP"  # nothing this round


@attrs.frozen(slots=True)
class HeartbeatRoundDecision:
    outcome: HeartbeatRoundOutcome
    effects: tuple = ()


@attrs.frozen(slots=True)
class _RoundInput:
    counts: HeartbeatCounts
    peer_size: int
    now: int
    last_succ_heartbeat_time: int
    timing: Timing


HeartbeatRule = Callable[[_RoundInput], "HeartbeatRoundDecision | None"]


def quorum_ack(x: _RoundInput) -> HeartbeatRoundDecision | None:
    if is_quorum(x.counts.succ, x.peer_size):
        return HeartbeatRoundDecision(HeartbeatRoundOutcome.QUORUM_ACK, (RECORD_HEARTBEAT_QUORUM,))
    return None


def quorum_with_not_ready(x: _RoundInput) -> HeartbeatRoundDecision | None:
    if is_quorum(x.counts.succ + x.counts.not_ready, x.peer_size):
        return HeartbeatRoundDecision(HeartbeatRoundOutcome.RESEND, (RESEND_HEARTBEAT,))
    return None


def higher_term(x: _RoundInput) -> HeartbeatRoundDecision | None:
    if x.counts.max_term > x.counts.term:
        return HeartbeatRoundDecision(
            HeartbeatRoundOutcome.STEP_DOWN_HIGHER_TERM, (BecomeCandidate(x.counts.max_term),)
        )
    return None


def inconsistent_leader(x: _RoundInput) -> HeartbeatRoundDecision | None:
    if x.counts.inconsistent_leader:
        return HeartbeatRoundDecision(
            HeartbeatRoundOutcome.STEP_DOWN_INCONSISTENT_LEADER, (BecomeCandidate(x.counts.term),)
        )
    return None


def lease_expired(x: _RoundInput) -> HeartbeatRoundDecision | None:
    if elapsed(x.now, x.last_succ_heartbeat_time) > x.timing.lease_ms:
        return HeartbeatRoundDecision(
            HeartbeatRoundOutcome.STEP_DOWN_LEASE_EXPIRED, (BecomeCandidate(x.counts.term),)
        )
    return None


HEARTBEAT_RULES: dict[str, HeartbeatRule] = {
    f.__name__: f for f in (quorum_ack, quorum_with_not_ready, higher_term, inconsistent_leader, lease_expired)
}

_KEEP = HeartbeatRoundDecision(HeartbeatRoundOutcome.KEEP)


def decide_heartbeat_round(
    counts: HeartbeatCounts,
    peer_size: int,
    now: int,
    last_succ_heartbeat_time: int,
    timing: Timing = DEFAULT_TIMING,
    profile: Profile = DEFAULT_PROFILE,
) -> HeartbeatRoundDecision:
    """What the leader does after a heartbeat round (H-A or H-B row order)."""
    x = _RoundInput(counts, peer_size, now, last_succ_heartbeat_time, timing)
    for name in profile.heartbeat_order:
        decision = HEARTBEAT_RULES[name](x)
        if decision is not None:
            return decision
    return _KEEP


HEARTBEAT_ROUND_OUTCOMES = tuple(o.value for o in HeartbeatRoundOutcome)


# ------------------------------------------------------------------ follower timeout


def follower_timed_out(now: int, last_leader_heartbeat_time: int, timing: Timing = DEFAULT_TIMING) -> bool:
    """maintainAsFollower: no heartbeat for maxHeartBeatLeak intervals → toCandidate(C).

    Only heartbeats reset the timer, never log pushes. The step-down keeps currTerm,
    so the first round after a timeout campaigns at the old term.
    """
    return now >= follower_timeout_at(last_leader_heartbeat_time, timing)


def follower_timeout_at(last_leader_heartbeat_time: int, timing: Timing = DEFAULT_TIMING) -> int:
    """The first time (ms) at which ``follower_timed_out`` holds (``NEVER``: at once)."""
    if last_leader_heartbeat_time == NEVER:
        return NEVER
    return last_leader_heartbeat_time + timing.lease_ms + 1
