"""One leader heartbeat round and one candidate round, in time, with the peers' replies given.

These are ``DLedgerLeaderElector.maintainAsLeader`` (with ``sendHeartbeats``) and
``maintainAsCandidate`` as whole steps: the elector's state and the time the maintainer
runs go in, every reply comes with the time it arrives, and out comes the state after
the step and the time the step returns (the maintainer then sleeps
``timing.maintainer_sleep_ms`` and runs again). They put together the decision tables of
``heartbeat.py`` and ``candidate.py`` with the profile's timing, so an implementation
can be judged on *when* it decides as well as on what.

How time passes in a round (every value from ``profile.timing``, docs/dledger.md):

* The requests go out at ``now``; a reply arrives ``at`` ms later (``None`` response:
  the request failed then). A peer without a reply never answers in the round.
* The latch is counted down only by an arriving reply (the candidate's own vote is a
  reply that arrives at ``now``): a quorum, a known leader (vote) or every peer having
  answered opens it. A group of one leader therefore waits the whole latch timeout.
* The waiting ends at the reply that opens the latch, or at the timeout. Replies are
  taken in order of arrival, ties in the order given; a reply arriving at the same
  instant as the one that opened the latch comes after the wake-up and does not count,
  except while the leader sleeps ``heartbeat_result_wait_ms`` (0.3.2+) after its latch:
  every reply up to the end of that sleep, its last instant included, still counts.
* The decision is taken at the end of the wait (and sleep) and stamped with that time.
"""
from __future__ import annotations

from typing import Any, Iterable

import attrs

from spec.dledger import candidate, heartbeat, vote
from spec.dledger.candidate import VOTE_INTERVAL, VOTE_WAIT, CandidateAction, NextVote
from spec.dledger.effects import (
    BecomeCandidate,
    BecomeLeader,
    RecordHeartbeatQuorum,
    ResendHeartbeat,
    SetVotedFor,
)
from spec.dledger.heartbeat import HeartbeatRoundOutcome
from spec.dledger.member_state import (
    NEVER,
    MemberView,
    is_taking_leadership,
    known_max_term_after_candidate,
    may_become_candidate,
    may_become_leader,
    next_term,
)
from spec.dledger.profiles import DEFAULT_PROFILE, Profile, Timing
from spec.dledger.records import HeartBeatResponse, ParseResult, Role, VoteRequest, VoteResponse


def _non_negative(instance, attribute, value) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, got {value}")


@attrs.frozen(slots=True)
class HeartbeatReply:
    """A follower's answer to the round's heartbeat, ``at`` ms after it was sent."""

    peer: str
    at: int = attrs.field(validator=_non_negative)
    response: HeartBeatResponse | None = None  # None: the request failed at ``at``


@attrs.frozen(slots=True)
class VoteReply:
    """A voter's answer to the round's vote request, ``at`` ms after it was sent."""

    peer: str
    at: int = attrs.field(validator=_non_negative)
    response: VoteResponse | None = None  # None: the request failed at ``at``


@attrs.frozen(slots=True)
class LeaderTimes:
    """The leader's timestamps (``NEVER`` = -1, DLedger's initial value)."""

    last_send_heartbeat_time: int = NEVER
    last_succ_heartbeat_time: int = NEVER


@attrs.frozen(slots=True)
class HeartbeatRoundResult:
    """What one run of maintainAsLeader did.

    ``outcome`` names the spec's row; a real node shows only its effects, so it is not
    part of what must agree (``adapters/operations.py``).
    """

    sent: bool  # a round went out (more than one interval since the last)
    returns_at: int  # when maintainAsLeader returned
    member: MemberView  # after the round
    times: LeaderTimes  # after the round
    role_changes: tuple = ()  # BecomeCandidate(t) as applied
    outcome: HeartbeatRoundOutcome | None = None


@attrs.frozen(slots=True)
class CandidateState:
    """The elector's candidate fields (and MemberState's knownMaxTermInGroup)."""

    next_time_to_request_vote: int = -1
    need_increase_term_immediately: bool = False
    last_parse_result: ParseResult = ParseResult.WAIT_TO_REVOTE
    last_vote_cost: int = 0
    known_max_term: int = -1
    # leadership transfer (0.2+): self is in DLedgerConfig.preferredLeaderIds, and the
    # term handleTakeLeadership set (-1: none)
    preferred_leader: bool = False
    term_to_take_leadership: int = -1


@attrs.frozen(slots=True)
class RoundDraws:
    """The random values a candidate round uses, each within its range (``candidate.draw_bound``)."""

    vote_wait: int = 0
    vote_interval: int = 0


@attrs.frozen(slots=True)
class DrawUse:
    """A random value the round drew: where, and the exclusive bound it was drawn under."""

    site: str
    bound: int


@attrs.frozen(slots=True)
class CandidateRoundResult:
    """What one run of maintainAsCandidate did (``action`` and ``parse``: the spec's names)."""

    returns_at: int
    member: MemberView  # after the round
    state: CandidateState  # after the round
    role_changes: tuple = ()  # BecomeCandidate(t) / BecomeLeader(t) as applied
    draws: tuple[DrawUse, ...] = ()
    action: CandidateAction | None = None
    parse: ParseResult | None = None


@attrs.frozen(slots=True)
class _SpecRules:
    handle_vote: Any = vote.handle_vote
    parse_vote_result: Any = candidate.parse_vote_result
    decide_heartbeat_round: Any = heartbeat.decide_heartbeat_round


SPEC_RULES = _SpecRules()


def _in_arrival_order(replies: Iterable, peers: Iterable[str]) -> list:
    """The first reply of each asked peer, by arrival (ties: as given)."""
    asked, seen, out = set(peers), set(), []
    for r in replies:
        if r.peer in asked and r.peer not in seen:
            seen.add(r.peer)
            out.append(r)
    return sorted(out, key=lambda r: r.at)  # stable: ties keep the given order


def _wait(counts, replies: list, start: int, deadline: int, count, is_open, already_open: bool = False):
    """Fold replies arriving by ``deadline`` until the latch opens: (counts, woke_at, rest)."""
    if already_open:
        return counts, start, replies
    for i, r in enumerate(replies):
        t = start + r.at
        if t > deadline:
            return counts, deadline, replies[i:]
        counts = count(counts, r.response)
        if is_open(counts):
            return counts, t, replies[i + 1:]
    return counts, deadline, []


# ------------------------------------------------------------------ the instants of a round
# (the reference node keeps its rounds with these too)


def heartbeat_latch_deadline(start: int, timing: Timing) -> int:
    """When a heartbeat round sent at ``start`` stops waiting on its latch."""
    return start + timing.heartbeat_latch_wait_ms


def heartbeat_decision_time(woke_at: int, timing: Timing) -> int:
    """When the leader decides, having stopped waiting at ``woke_at`` (0.3.2+ sleeps first)."""
    return woke_at + timing.heartbeat_result_wait_ms


def vote_latch_deadline(start: int, draw: int, timing: Timing) -> int:
    """When a vote round started at ``start`` stops waiting (``draw``: its random part)."""
    return start + candidate.vote_round_wait_ms(draw, timing)


def heartbeat_latch_open_at_start(counts, peer_size: int, timing: Timing) -> bool:
    """Whether the leader's own acknowledgement opens the latch (a group of one); no release does."""
    return not timing.one_node_leader_waits_latch and heartbeat.heartbeat_latch_open(counts, peer_size)


def next_maintainer_run(returned_at: int, timing: Timing) -> int:
    """The StateMaintainer runs again this long after a run returns."""
    return returned_at + timing.maintainer_sleep_ms


def maintainer_run_at_or_after(next_run: int, due: int, timing: Timing) -> int:
    """The first run of the StateMaintainer at or after ``due``.

    It runs at ``next_run`` and every ``maintainer_sleep_ms`` after, for as long as its
    runs return at once (its beat; other threads changing its state do not move it): a
    leader's next round, a follower's timeout and a candidate's next campaign happen at
    the first such run, not at the instant they fall due. Real builds (0.1 to 0.4.0,
    StateMaintainer.doWork on a virtual clock): a heartbeat round returning 40 ms after
    it started is followed by the next 2010 ms after it, not 2001.
    """
    if due <= next_run:
        return next_run
    step = timing.maintainer_sleep_ms
    return next_run + -(-(due - next_run) // step) * step


def maintainer_run_at_or_before(next_run: int, now: int, timing: Timing) -> int:
    """The StateMaintainer's last run at or before ``now`` (``now >= next_run``): the run a
    node activated at ``now`` does, whose decisions are taken at that run's instant."""
    step = timing.maintainer_sleep_ms
    return next_run + (now - next_run) // step * step


# ------------------------------------------------------------------ leader


def heartbeat_round(
    member: MemberView,
    now: int,
    times: LeaderTimes,
    replies: Iterable[HeartbeatReply],
    profile: Profile = DEFAULT_PROFILE,
    timing: Timing | None = None,
    rules=SPEC_RULES,
) -> HeartbeatRoundResult:
    """maintainAsLeader at ``now``: maybe send a round, wait, decide."""
    timing = timing or profile.timing
    if member.role is not Role.LEADER or not heartbeat.leader_should_send_heartbeat(
        now, times.last_send_heartbeat_time, timing
    ):
        return HeartbeatRoundResult(False, now, member, times)
    n = member.peer_size
    others = sorted(member.peers - {member.self_id})
    ordered = _in_arrival_order(replies, others)
    counts = heartbeat.start_heartbeat_counts(member.curr_term)
    counts, woke, rest = _wait(
        counts, ordered, now, heartbeat_latch_deadline(now, timing),
        heartbeat.count_heartbeat, lambda c: heartbeat.heartbeat_latch_open(c, n),
        already_open=heartbeat_latch_open_at_start(counts, n, timing),
    )
    decided = heartbeat_decision_time(woke, timing)
    if timing.heartbeat_result_wait_ms:  # replies keep arriving while the leader sleeps
        for r in rest:
            if now + r.at > decided:
                break
            counts = heartbeat.count_heartbeat(counts, r.response)
    decision = rules.decide_heartbeat_round(counts, n, decided, times.last_succ_heartbeat_time, timing, profile)
    last_send, last_succ, role_changes = now, times.last_succ_heartbeat_time, []
    for e in decision.effects:
        if isinstance(e, RecordHeartbeatQuorum):
            last_succ = decided
        elif isinstance(e, ResendHeartbeat):
            last_send = NEVER
        elif isinstance(e, BecomeCandidate) and may_become_candidate(member.curr_term, e.term):
            member = attrs.evolve(member, role=Role.CANDIDATE, leader_id=None)
            role_changes.append(e)
    return HeartbeatRoundResult(True, decided, member, LeaderTimes(last_send, last_succ), tuple(role_changes),
                                decision.outcome)


# ------------------------------------------------------------------ candidate


def candidate_round(
    member: MemberView,
    now: int,
    state: CandidateState,
    replies: Iterable[VoteReply],
    draws: RoundDraws = RoundDraws(),
    profile: Profile = DEFAULT_PROFILE,
    timing: Timing | None = None,
    rules=SPEC_RULES,
) -> CandidateRoundResult:
    """maintainAsCandidate at ``now``: maybe move the term, campaign, wait, parse."""
    timing = timing or profile.timing
    action = candidate.candidate_action(
        now, state.next_time_to_request_vote, state.need_increase_term_immediately, state.last_parse_result
    )
    if action is CandidateAction.WAIT:
        return CandidateRoundResult(now, member, state, action=action)
    if member.role is not Role.CANDIDATE:
        return CandidateRoundResult(now, member, state)
    used: list[DrawUse] = []

    def next_vote_time(at: int, cost: int) -> int:
        taking = is_taking_leadership(profile, member.self_id,
                                      frozenset({member.self_id}) if state.preferred_leader else frozenset(),
                                      state.term_to_take_leadership, member.curr_term)
        used.append(DrawUse(VOTE_INTERVAL, candidate.draw_bound(VOTE_INTERVAL, timing, taking)))
        return candidate.next_vote_time(at, draws.vote_interval, timing, taking, cost, profile)

    if action is not CandidateAction.CAMPAIGN_SAME_TERM:
        member = attrs.evolve(member, curr_term=next_term(member.curr_term, state.known_max_term), voted_for=None)
        state = attrs.evolve(state, last_parse_result=ParseResult.WAIT_TO_REVOTE)
    if action is CandidateAction.INCREASE_TERM_ONLY:
        state = attrs.evolve(state, need_increase_term_immediately=False,
                             next_time_to_request_vote=next_vote_time(now, state.last_vote_cost))
        return CandidateRoundResult(now, member, state, (), tuple(used), action)

    term, n = member.curr_term, member.peer_size
    own = rules.handle_vote(
        member, VoteRequest(term, member.self_id, member.ledger_end_term, member.ledger_end_index), True, profile)
    if any(isinstance(e, SetVotedFor) for e in own.effects):
        member = attrs.evolve(member, voted_for=member.self_id)
    counts = candidate.count_vote(candidate.start_vote_counts(term), VoteResponse(own.reply_term, own.result))
    used.append(DrawUse(VOTE_WAIT, candidate.draw_bound(VOTE_WAIT, timing)))
    deadline = vote_latch_deadline(now, draws.vote_wait, timing)
    counts, ended, _ = _wait(
        counts, _in_arrival_order(replies, sorted(member.peers - {member.self_id})), now, deadline,
        candidate.count_vote, lambda c: candidate.vote_round_closed(c, n),
        already_open=candidate.vote_round_closed(counts, n),
    )
    cost = ended - now
    decision = rules.parse_vote_result(counts, n, profile)
    next_time = state.next_time_to_request_vote
    if decision.next_vote is not NextVote.UNCHANGED:
        next_time = candidate.next_time_after_parse(decision, next_time, next_vote_time(ended, cost), timing)
    known_max, role_changes = state.known_max_term, []
    for e in decision.effects:
        if isinstance(e, BecomeCandidate) and may_become_candidate(member.curr_term, e.term):
            known_max = known_max_term_after_candidate(known_max, e.term)
            member = attrs.evolve(member, role=Role.CANDIDATE, leader_id=None)
            role_changes.append(e)
        elif isinstance(e, BecomeLeader) and may_become_leader(member.curr_term, e.term):
            member = attrs.evolve(member, role=Role.LEADER, leader_id=member.self_id)
            role_changes.append(e)
    state = attrs.evolve(state, last_parse_result=decision.result, last_vote_cost=cost,
                         next_time_to_request_vote=next_time, known_max_term=known_max)
    return CandidateRoundResult(ended, member, state, tuple(role_changes), tuple(used), action, decision.result)
