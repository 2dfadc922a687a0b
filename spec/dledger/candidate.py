"""The candidate round (DLedgerLeaderElector.maintainAsCandidate).

1. ``candidate_action``: whether to do anything now, and whether to call nextTerm().
2. the node asks every peer (itself through ``handle_vote(self_vote=True)``);
   ``count_vote`` folds each reply into ``VoteCounts``; ``vote_round_closed`` says
   when the round may stop waiting early.
3. ``parse_vote_result``: the ParseResult table (P-B from 0.2, P-A in release-0.1)
   decides the outcome, the next vote time and the role change.
"""
from __future__ import annotations

import enum
from typing import Callable

import attrs

from spec.dledger.effects import BecomeCandidate, BecomeLeader
from spec.dledger.member_state import NEVER
from spec.dledger.profiles import DEFAULT_PROFILE, DEFAULT_TIMING, Profile, Timing
from spec.dledger.records import ParseResult, VoteResponse, VoteResult
from spec.quorum import is_quorum


class CandidateAction(enum.Enum):
    WAIT = "WAIT"  # before nextTimeToRequestVote and no immediate term increase
    INCREASE_TERM_ONLY = "INCREASE_TERM_ONLY"  # nextTerm(), reschedule, no campaign
    CAMPAIGN_NEXT_TERM = "CAMPAIGN_NEXT_TERM"  # nextTerm(), then ask for votes
    CAMPAIGN_SAME_TERM = "CAMPAIGN_SAME_TERM"  # ask for votes at the current term


def candidate_action(
    now: int,
    next_time_to_request_vote: int,
    need_increase_term_immediately: bool,
    last_parse_result: ParseResult,
) -> CandidateAction:
    """Steps 1-3 of maintainAsCandidate, for a node whose role is CANDIDATE.

    After INCREASE_TERM_ONLY or CAMPAIGN_NEXT_TERM the node sets lastParseResult to
    WAIT_TO_REVOTE; after INCREASE_TERM_ONLY it clears needIncreaseTermImmediately and
    sets nextTimeToRequestVote := next_vote_time(now).
    """
    if now < candidate_due_at(next_time_to_request_vote, need_increase_term_immediately):
        return CandidateAction.WAIT
    if need_increase_term_immediately:
        return CandidateAction.INCREASE_TERM_ONLY
    if last_parse_result is ParseResult.WAIT_TO_VOTE_NEXT:
        return CandidateAction.CAMPAIGN_NEXT_TERM
    return CandidateAction.CAMPAIGN_SAME_TERM


def candidate_due_at(next_time_to_request_vote: int, need_increase_term_immediately: bool) -> int:
    """The first time (ms) at which ``candidate_action`` stops answering WAIT."""
    return NEVER if need_increase_term_immediately else next_time_to_request_vote


def next_vote_time(
    now: int,
    draw: int,
    timing: Timing = DEFAULT_TIMING,
    taking_leadership: bool = False,
    last_vote_cost: int = 0,
    profile: Profile = DEFAULT_PROFILE,
) -> int:
    """getNextTimeToRequestVote: now + min + rand[0, max - min).

    ``draw`` is the random value, already in ``[0, vote_interval_spread(...))``;
    the caller (the simulator) owns the randomness. Release-0.1 adds lastVoteCost.
    """
    low = timing.min_take_leadership_vote_interval_ms if taking_leadership else timing.min_vote_interval_ms
    extra = last_vote_cost if profile.vote_interval_adds_last_cost else 0
    return now + low + draw + extra


def vote_interval_spread(timing: Timing = DEFAULT_TIMING, taking_leadership: bool = False) -> int:
    """Exclusive upper bound of the random part of next_vote_time."""
    if taking_leadership:
        return timing.max_take_leadership_vote_interval_ms - timing.min_take_leadership_vote_interval_ms
    return timing.max_vote_interval_ms - timing.min_vote_interval_ms


def vote_round_wait_ms(draw: int, timing: Timing = DEFAULT_TIMING) -> int:
    """How long a round waits for replies: base (3000 in 0.1, 2000 after) + rand[0, maxVoteIntervalMs)."""
    return timing.vote_round_base_wait_ms + draw


# The random values of a candidate: where each is drawn, and its range. A step-by-step
# judge accepts any value in the range (upstream draws them from java.util.Random).
VOTE_WAIT = "vote_wait"  # random.nextInt(maxVoteIntervalMs) of the vote latch's timeout
VOTE_INTERVAL = "vote_interval"  # random.nextInt(max - min) of getNextTimeToRequestVote


def draw_bound(site: str, timing: Timing = DEFAULT_TIMING, taking_leadership: bool = False) -> int:
    """The exclusive upper bound upstream passes to ``Random.nextInt`` at ``site``."""
    if site == VOTE_WAIT:
        return timing.max_vote_interval_ms
    return vote_interval_spread(timing, taking_leadership)


def vote_round_wait_range(timing: Timing = DEFAULT_TIMING) -> range:
    """Every allowed wait of one vote round's latch (ms)."""
    return range(vote_round_wait_ms(0, timing), vote_round_wait_ms(draw_bound(VOTE_WAIT, timing), timing))


def next_vote_time_range(
    now: int,
    timing: Timing = DEFAULT_TIMING,
    taking_leadership: bool = False,
    last_vote_cost: int = 0,
    profile: Profile = DEFAULT_PROFILE,
) -> range:
    """Every allowed value of getNextTimeToRequestVote at ``now``."""
    low = next_vote_time(now, 0, timing, taking_leadership, last_vote_cost, profile)
    return range(low, low + vote_interval_spread(timing, taking_leadership))


@attrs.frozen(slots=True)
class VoteCounts:
    term: int  # the term the round campaigns for
    answered: int = 0  # allNum: replies and failures
    valid: int = 0  # replies with a known result (self included)
    accepted: int = 0
    not_ready: int = 0  # REJECT_TERM_NOT_READY
    bigger: int = 0  # REJECT_EXPIRED_LEDGER_TERM or REJECT_SMALL_LEDGER_END_INDEX
    already_has_leader: bool = False
    known_max_term: int = -1  # max reply term over EXPIRED_VOTE_TERM and TERM_SMALL_THAN_LEDGER


def start_vote_counts(term: int) -> VoteCounts:
    return VoteCounts(term=term, known_max_term=term)


_BIGGER = (VoteResult.REJECT_EXPIRED_LEDGER_TERM, VoteResult.REJECT_SMALL_LEDGER_END_INDEX)
_TERM_HINT = (VoteResult.REJECT_EXPIRED_VOTE_TERM, VoteResult.REJECT_TERM_SMALL_THAN_LEDGER)


def count_vote(counts: VoteCounts, reply: VoteResponse | None) -> VoteCounts:
    """Fold one reply (None: the request failed) into the round's counters."""
    if reply is None:
        return attrs.evolve(counts, answered=counts.answered + 1)
    result = reply.result
    return VoteCounts(
        term=counts.term,
        answered=counts.answered + 1,
        valid=counts.valid + (result is not VoteResult.UNKNOWN),
        accepted=counts.accepted + (result is VoteResult.ACCEPT),
        not_ready=counts.not_ready + (result is VoteResult.REJECT_TERM_NOT_READY),
        bigger=counts.bigger + (result in _BIGGER),
        already_has_leader=counts.already_has_leader or result is VoteResult.REJECT_ALREADY_HAS_LEADER,
        known_max_term=(
            max(counts.known_max_term, reply.term) if result in _TERM_HINT else counts.known_max_term
        ),
    )


def vote_round_closed(counts: VoteCounts, peer_size: int) -> bool:
    """The vote latch opens early on a known leader or a quorum, else when all answered."""
    return (
        counts.already_has_leader
        or is_quorum(counts.accepted, peer_size)
        or is_quorum(counts.accepted + counts.not_ready, peer_size)
        or counts.answered >= peer_size
    )


class NextVote(enum.Enum):
    """How nextTimeToRequestVote changes after a parse."""

    UNCHANGED = "UNCHANGED"
    VOTE_INTERVAL = "VOTE_INTERVAL"  # next_vote_time(now)
    VOTE_INTERVAL_PLUS_LEASE = "VOTE_INTERVAL_PLUS_LEASE"  # + heartBeatTimeIntervalMs * maxHeartBeatLeak
    VOTE_INTERVAL_PLUS_MAX = "VOTE_INTERVAL_PLUS_MAX"  # + maxVoteIntervalMs


@attrs.frozen(slots=True)
class ParseDecision:
    result: ParseResult
    next_vote: NextVote
    effects: tuple = ()
    row: str = "otherwise"


def next_time_after_parse(
    decision: ParseDecision, current: int, vote_time: int, timing: Timing = DEFAULT_TIMING
) -> int:
    """Apply ``decision.next_vote`` given ``vote_time`` = next_vote_time(now, ...)."""
    kind = decision.next_vote
    if kind is NextVote.UNCHANGED:
        return current
    if kind is NextVote.VOTE_INTERVAL:
        return vote_time
    if kind is NextVote.VOTE_INTERVAL_PLUS_LEASE:
        return vote_time + timing.lease_ms
    return vote_time + timing.max_vote_interval_ms


ParseRule = Callable[[VoteCounts, int], "ParseDecision | None"]


def known_max_term_bigger(c: VoteCounts, n: int) -> ParseDecision | None:
    if c.known_max_term > c.term:
        return ParseDecision(
            ParseResult.WAIT_TO_VOTE_NEXT,
            NextVote.VOTE_INTERVAL,
            (BecomeCandidate(c.known_max_term),),
            "known_max_term_bigger",
        )
    return None


def already_has_leader_revote(c: VoteCounts, n: int) -> ParseDecision | None:
    if c.already_has_leader:
        return ParseDecision(
            ParseResult.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL_PLUS_LEASE, (), "already_has_leader_revote"
        )
    return None


def already_has_leader_vote_next(c: VoteCounts, n: int) -> ParseDecision | None:
    # release-0.1 (and the bug fixed by PR #25): a known leader made the candidate
    # increase its term on the next round, inflating terms under asymmetric partitions.
    if c.already_has_leader:
        return ParseDecision(
            ParseResult.WAIT_TO_VOTE_NEXT,
            NextVote.VOTE_INTERVAL_PLUS_LEASE,
            (),
            "already_has_leader_vote_next",
        )
    return None


def valid_not_quorum(c: VoteCounts, n: int) -> ParseDecision | None:
    if not is_quorum(c.valid, n):
        return ParseDecision(ParseResult.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL, (), "valid_not_quorum")
    return None


def valid_minus_bigger_not_quorum(c: VoteCounts, n: int) -> ParseDecision | None:
    if not is_quorum(c.valid - c.bigger, n):
        return ParseDecision(
            ParseResult.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL_PLUS_MAX, (), "valid_minus_bigger_not_quorum"
        )
    return None


def accepted_quorum(c: VoteCounts, n: int) -> ParseDecision | None:
    if is_quorum(c.accepted, n):
        return ParseDecision(ParseResult.PASSED, NextVote.UNCHANGED, (BecomeLeader(c.term),), "accepted_quorum")
    return None


def accepted_plus_not_ready_quorum(c: VoteCounts, n: int) -> ParseDecision | None:
    if is_quorum(c.accepted + c.not_ready, n):
        return ParseDecision(
            ParseResult.REVOTE_IMMEDIATELY, NextVote.UNCHANGED, (), "accepted_plus_not_ready_quorum"
        )
    return None


def accepted_plus_bigger_quorum(c: VoteCounts, n: int) -> ParseDecision | None:
    if is_quorum(c.accepted + c.bigger, n):
        return ParseDecision(
            ParseResult.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL, (), "accepted_plus_bigger_quorum"
        )
    return None


PARSE_RULES: dict[str, ParseRule] = {
    f.__name__: f
    for f in (
        known_max_term_bigger,
        already_has_leader_revote,
        already_has_leader_vote_next,
        valid_not_quorum,
        valid_minus_bigger_not_quorum,
        accepted_quorum,
        accepted_plus_not_ready_quorum,
        accepted_plus_bigger_quorum,
    )
}

_OTHERWISE = ParseDecision(ParseResult.WAIT_TO_VOTE_NEXT, NextVote.VOTE_INTERVAL, (), "otherwise")


def parse_vote_result(counts: VoteCounts, peer_size: int, profile: Profile = DEFAULT_PROFILE) -> ParseDecision:
    """The ParseResult table, first matching row wins."""
    for name in profile.parse_order:
        decision = PARSE_RULES[name](counts, peer_size)
        if decision is not None:
            return decision
    return _OTHERWISE


PARSE_OUTCOMES = tuple(r.value for r in ParseResult)
