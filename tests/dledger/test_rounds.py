"""One heartbeat round and one candidate round in time (spec/dledger/rounds.py), case by case.

Each case names the timing path it pins; the same paths are checked against real
builds in test_timing_transcript.py.
"""
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.round_inputs import NOW, candidate_round_args, heartbeat_round_args
from spec.dledger.candidate import CandidateAction, vote_round_wait_range
from spec.dledger.effects import BecomeCandidate, BecomeLeader
from spec.dledger.heartbeat import HeartbeatRoundOutcome as O
from spec.dledger.member_state import NEVER, MemberView
from spec.dledger.profiles import DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4, PROFILES
from spec.dledger.records import HeartBeatResponse, ParseResult, ResponseCode, Role, VoteResponse, VoteResult
from spec.dledger.rounds import (
    CandidateState,
    DrawUse,
    HeartbeatReply,
    LeaderTimes,
    RoundDraws,
    VoteReply,
    candidate_round,
    heartbeat_round,
)

OK = HeartBeatResponse(-1, ResponseCode.SUCCESS)
EXPIRED_7 = HeartBeatResponse(7, ResponseCode.EXPIRED_TERM)
NOT_READY = HeartBeatResponse(-1, ResponseCode.TERM_NOT_READY)


def leader(n: int = 3, term: int = 5) -> MemberView:
    return MemberView("n1", frozenset(f"n{i}" for i in range(1, n + 1)), term, "n1", "n1", Role.LEADER, term, 3)


RECENT = LeaderTimes(NOW - 2001, NOW - 1000)


def hb(profile, replies, n=3, times=RECENT):
    return heartbeat_round(leader(n), NOW, times, tuple(replies), profile)


# ------------------------------------------------------------------ heartbeat round


def test_a_round_goes_out_only_after_more_than_one_interval():
    assert not heartbeat_round(leader(), NOW, LeaderTimes(NOW - 2000, NOW), (), DLEDGER_0_4).sent
    assert heartbeat_round(leader(), NOW, LeaderTimes(NOW - 2001, NOW), (), DLEDGER_0_4).sent
    assert heartbeat_round(leader(), NOW, LeaderTimes(NEVER, NEVER), (), DLEDGER_0_4).sent


def test_only_a_leader_sends():
    follower = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, None, "n2", Role.FOLLOWER)
    r = heartbeat_round(follower, NOW, LeaderTimes(NEVER, NEVER), (), DLEDGER_0_4)
    assert (r.sent, r.returns_at, r.times) == (False, NOW, LeaderTimes(NEVER, NEVER))


@pytest.mark.parametrize("profile", [DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4], ids=lambda p: p.name)
def test_a_group_of_one_waits_the_whole_interval(profile):
    r = hb(profile, [], n=1)
    assert (r.returns_at, r.outcome, r.times) == (NOW + 2000, O.QUORUM_ACK, LeaderTimes(NOW, NOW + 2000))


def test_the_one_node_rule_is_profile_data():
    """No release lets a lone leader's own acknowledgement open its latch; the field says so."""
    eager = attrs.evolve(DLEDGER_0_4.timing, one_node_leader_waits_latch=False)
    r = heartbeat_round(leader(1), NOW, RECENT, (), DLEDGER_0_4, eager)
    assert (r.returns_at, r.outcome) == (NOW + 10, O.QUORUM_ACK)


@pytest.mark.parametrize("profile,decided", [(DLEDGER_0_2, NOW + 30), (DLEDGER_0_4, NOW + 40)], ids=["0.2", "0.4"])
def test_the_decision_comes_when_the_latch_opens_or_10ms_later(profile, decided):
    r = hb(profile, [HeartbeatReply("n2", 30, OK)])
    assert (r.returns_at, r.outcome, r.times.last_succ_heartbeat_time) == (decided, O.QUORUM_ACK, decided)


def test_a_reply_during_04s_sleep_still_counts():
    """0.4 hears the higher term 5 ms after its quorum and steps down; 0.2 has already decided."""
    replies = [HeartbeatReply("n2", 30, OK), HeartbeatReply("n3", 35, EXPIRED_7)]
    assert hb(DLEDGER_0_2, replies).outcome is O.QUORUM_ACK
    r = hb(DLEDGER_0_4, replies)
    assert (r.outcome, r.role_changes, r.member.role) == (O.STEP_DOWN_HIGHER_TERM, (BecomeCandidate(7),),
                                                           Role.CANDIDATE)


@pytest.mark.parametrize("at,counts", [(40, True), (41, False)])
def test_the_sleep_counts_its_last_instant(at, counts):
    r = hb(DLEDGER_0_4, [HeartbeatReply("n2", 30, OK), HeartbeatReply("n3", at, EXPIRED_7)])
    assert (r.outcome is O.STEP_DOWN_HIGHER_TERM) is counts


def test_a_reply_at_the_instant_the_latch_opened_comes_too_late_without_a_sleep():
    # 0.2, group of 5: the second SUCCESS at 30 opens the latch; the EXPIRED_TERM at 30 is after it
    replies = [HeartbeatReply("n2", 30, OK), HeartbeatReply("n3", 30, OK), HeartbeatReply("n4", 30, EXPIRED_7)]
    assert hb(DLEDGER_0_2, replies, n=5).outcome is O.QUORUM_ACK
    # given first, it counts: no quorum yet when it arrives, and H-A finds the higher term after the quorum
    reordered = [replies[2], replies[0], replies[1]]
    r = hb(DLEDGER_0_2, reordered, n=5)
    assert (r.outcome, r.returns_at) == (O.QUORUM_ACK, NOW + 30)
    assert hb(DLEDGER_0_4, reordered, n=5).outcome is O.STEP_DOWN_HIGHER_TERM


@pytest.mark.parametrize("profile", [DLEDGER_0_2, DLEDGER_0_4], ids=["0.2", "0.4"])
def test_a_round_without_quorum_times_out_at_one_interval(profile):
    r = hb(profile, [HeartbeatReply("n2", 5, None)])
    assert (r.returns_at, r.outcome) == (NOW + 2000, O.KEEP)


def test_04s_shorter_latch_lets_a_late_quorum_in_during_the_sleep():
    replies = [HeartbeatReply("n2", 1995, OK)]
    assert hb(DLEDGER_0_2, replies).returns_at == NOW + 1995
    r = hb(DLEDGER_0_4, replies)
    assert (r.returns_at, r.outcome) == (NOW + 2000, O.QUORUM_ACK)


def test_failures_count_as_answers():
    r = hb(DLEDGER_0_2, [HeartbeatReply("n2", 5, None), HeartbeatReply("n3", 7, None)])
    assert (r.returns_at, r.outcome) == (NOW + 7, O.KEEP)


@pytest.mark.parametrize("last_succ,outcome", [(NOW + 2000 - 6000, O.KEEP),
                                               (NOW + 2000 - 6001, O.STEP_DOWN_LEASE_EXPIRED)])
def test_the_lease_is_checked_at_the_decision(last_succ, outcome):
    r = hb(DLEDGER_0_4, [], times=LeaderTimes(NOW - 2001, last_succ))
    assert r.outcome is outcome


def test_resend_forgets_the_last_send():
    r = hb(DLEDGER_0_4, [HeartbeatReply("n2", 10, NOT_READY)])
    assert (r.outcome, r.times.last_send_heartbeat_time) == (O.RESEND, NEVER)


def test_inconsistent_leader_steps_down_at_its_own_term():
    r = hb(DLEDGER_0_1, [HeartbeatReply("n2", 10, HeartBeatResponse(-1, ResponseCode.INCONSISTENT_LEADER))])
    assert (r.outcome, r.role_changes) == (O.STEP_DOWN_INCONSISTENT_LEADER, (BecomeCandidate(5),))


def test_replies_from_unknown_peers_and_repeats_are_ignored():
    r = hb(DLEDGER_0_2, [HeartbeatReply("x9", 1, OK), HeartbeatReply("n2", 5, None), HeartbeatReply("n2", 6, OK)])
    assert (r.returns_at, r.outcome) == (NOW + 2000, O.KEEP)


# ------------------------------------------------------------------ candidate round


def candidate(n: int = 3, term: int = 5, voted=None) -> MemberView:
    return MemberView("n1", frozenset(f"n{i}" for i in range(1, n + 1)), term, voted, None, Role.CANDIDATE, 4, 3)


ACCEPT = VoteResponse(5, VoteResult.ACCEPT)
DRAWS = RoundDraws(vote_wait=400, vote_interval=100)


def cr(profile, replies=(), n=3, state=CandidateState(), member=None):
    return candidate_round(member or candidate(n), NOW, state, tuple(replies), DRAWS, profile)


def test_wait_until_the_next_vote_time():
    r = cr(DLEDGER_0_4, state=CandidateState(next_time_to_request_vote=NOW + 1))
    assert (r.action, r.returns_at, r.draws, r.member) == (CandidateAction.WAIT, NOW, (), candidate())


@pytest.mark.parametrize("profile,next_time", [(DLEDGER_0_1, NOW + 1234 + 300 + 100), (DLEDGER_0_4, NOW + 300 + 100)],
                         ids=["0.1 adds the last cost", "0.4"])
def test_increase_term_only(profile, next_time):
    r = cr(profile, state=CandidateState(need_increase_term_immediately=True, last_vote_cost=1234))
    assert r.action is CandidateAction.INCREASE_TERM_ONLY
    assert (r.member.curr_term, r.member.voted_for, r.returns_at) == (6, None, NOW)
    assert (r.state.next_time_to_request_vote, r.state.need_increase_term_immediately) == (next_time, False)
    assert r.draws == (DrawUse("vote_interval", 700),)


def test_a_group_of_one_is_elected_at_once():
    r = cr(DLEDGER_0_4, n=1)
    assert (r.returns_at, r.parse, r.member.role, r.role_changes) == (NOW, ParseResult.PASSED, Role.LEADER,
                                                                     (BecomeLeader(5),))
    assert r.draws == (DrawUse("vote_wait", 1000),)


def test_a_quorum_closes_the_round_when_it_arrives():
    r = cr(DLEDGER_0_2, [VoteReply("n3", 700, ACCEPT), VoteReply("n2", 250, ACCEPT)])
    assert (r.returns_at, r.state.last_vote_cost, r.parse, r.member.voted_for) == (NOW + 250, 250,
                                                                                   ParseResult.PASSED, "n1")


@pytest.mark.parametrize("profile,wait", [(DLEDGER_0_1, 3400), (DLEDGER_0_2, 2400), (DLEDGER_0_4, 2400)],
                         ids=["0.1", "0.2", "0.4"])
def test_a_round_without_quorum_waits_base_plus_the_random_part(profile, wait):
    no = VoteResponse(5, VoteResult.REJECT_ALREADY_VOTED)
    r = cr(profile, [VoteReply("n2", 10, no)])
    assert r.returns_at == NOW + wait and wait in vote_round_wait_range(profile.timing)
    assert r.parse is ParseResult.WAIT_TO_VOTE_NEXT  # a quorum answered, not enough of them accepted
    # the next vote time comes after the round: 0.1 adds the round's cost once more
    extra = wait if profile.vote_interval_adds_last_cost else 0
    assert r.state.next_time_to_request_vote == NOW + wait + extra + 300 + 100


@pytest.mark.parametrize("at,passed", [(2400, True), (2401, False)])
def test_a_vote_at_the_timeout_still_counts(at, passed):
    r = cr(DLEDGER_0_4, [VoteReply("n2", at, ACCEPT)])
    assert (r.parse is ParseResult.PASSED) is passed and r.returns_at == NOW + 2400


def test_a_known_leader_closes_the_round_early():
    r = cr(DLEDGER_0_4, [VoteReply("n2", 50, VoteResponse(5, VoteResult.REJECT_ALREADY_HAS_LEADER))])
    assert (r.returns_at, r.parse) == (NOW + 50, ParseResult.WAIT_TO_REVOTE)
    assert r.state.next_time_to_request_vote == NOW + 50 + 300 + 100 + 6000


def test_a_transferee_draws_its_next_vote_from_the_short_range():
    state = CandidateState(need_increase_term_immediately=True, preferred_leader=True, term_to_take_leadership=6)
    r = candidate_round(candidate(), NOW, state, (), RoundDraws(0, 50), DLEDGER_0_4)
    assert (r.draws, r.state.next_time_to_request_vote) == ((DrawUse("vote_interval", 70),), NOW + 30 + 50)
    assert candidate_round(candidate(), NOW, state, (), RoundDraws(0, 50), DLEDGER_0_1).draws == (
        DrawUse("vote_interval", 700),)


# ------------------------------------------------------------------ properties


@given(st.randoms(use_true_random=False), st.sampled_from(list(PROFILES.values())))
def test_a_heartbeat_round_lasts_at_most_one_interval(rng, profile):
    args = heartbeat_round_args(rng)
    r = heartbeat_round(profile=profile, **args)
    assert args["now"] <= r.returns_at <= args["now"] + profile.timing.heartbeat_interval_ms
    if not r.sent:
        assert r.returns_at == args["now"] and r.times == args["times"]


@given(st.randoms(use_true_random=False), st.sampled_from(list(PROFILES.values())))
def test_a_candidate_round_lasts_at_most_its_latch_timeout(rng, profile):
    args = candidate_round_args(rng)
    r = candidate_round(profile=profile, **args)
    wait = profile.timing.vote_round_base_wait_ms + args["draws"].vote_wait
    assert args["now"] <= r.returns_at <= args["now"] + wait
    assert r.state.last_vote_cost == (r.returns_at - args["now"] if r.parse else args["state"].last_vote_cost)
    assert r.member.curr_term >= args["member"].curr_term
