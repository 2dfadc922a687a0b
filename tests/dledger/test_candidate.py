"""The candidate round: action, counting, the ParseResult tables P-B and P-A."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.dledger.candidate import (
    CandidateAction,
    NextVote,
    VoteCounts,
    candidate_action,
    count_vote,
    next_time_after_parse,
    next_vote_time,
    parse_vote_result,
    start_vote_counts,
    vote_interval_spread,
    vote_round_closed,
    vote_round_wait_ms,
)
from spec.dledger.effects import BecomeCandidate, BecomeLeader
from spec.dledger.member_state import next_term
from spec.dledger.profiles import DEFAULT_TIMING, DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4, Timing
from spec.dledger.records import ParseResult, VoteResponse, VoteResult
from spec.quorum import is_quorum, quorum_size

R = ParseResult

ACTION_TABLE = [
    ("wait_before_next_vote_time", 100, 200, False, R.WAIT_TO_REVOTE, CandidateAction.WAIT),
    ("increase_term_immediately_even_early", 100, 200, True, R.WAIT_TO_REVOTE, CandidateAction.INCREASE_TERM_ONLY),
    ("increase_term_immediately_beats_vote_next", 300, 200, True, R.WAIT_TO_VOTE_NEXT,
     CandidateAction.INCREASE_TERM_ONLY),
    ("vote_next_increments_term", 300, 200, False, R.WAIT_TO_VOTE_NEXT, CandidateAction.CAMPAIGN_NEXT_TERM),
    ("revote_keeps_term", 300, 200, False, R.WAIT_TO_REVOTE, CandidateAction.CAMPAIGN_SAME_TERM),
    ("revote_immediately_keeps_term", 300, 200, False, R.REVOTE_IMMEDIATELY, CandidateAction.CAMPAIGN_SAME_TERM),
    ("first_round_at_initial_term", 0, -1, False, R.WAIT_TO_REVOTE, CandidateAction.CAMPAIGN_SAME_TERM),
]


@pytest.mark.parametrize("case", ACTION_TABLE, ids=[c[0] for c in ACTION_TABLE])
def test_candidate_action(case):
    _, now, next_time, need, last, expected = case
    assert candidate_action(now, next_time, need, last) is expected


@pytest.mark.parametrize(
    "curr,known,expected", [(3, -1, 4), (3, 3, 4), (3, 7, 7), (-1, -1, 0)], ids=["inc", "equal", "jump", "0.1-initial"]
)
def test_next_term(curr, known, expected):
    assert next_term(curr, known) == expected


@pytest.mark.parametrize("n,q", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3)])
def test_quorum(n, q):
    assert quorum_size(n) == q and is_quorum(q, n) and not is_quorum(q - 1, n)


def reply(result, term=5):
    return VoteResponse(term, result)


def counts(term=5, **kw):
    return VoteCounts(term=term, **{"known_max_term": term, **kw})


def test_count_vote_folds_each_result():
    c = start_vote_counts(5)
    for r in [VoteResult.ACCEPT, VoteResult.REJECT_TERM_NOT_READY, VoteResult.REJECT_EXPIRED_LEDGER_TERM,
              VoteResult.REJECT_SMALL_LEDGER_END_INDEX, VoteResult.REJECT_ALREADY_HAS_LEADER]:
        c = count_vote(c, reply(r))
    c = count_vote(c, reply(VoteResult.REJECT_EXPIRED_VOTE_TERM, term=8))
    c = count_vote(c, reply(VoteResult.REJECT_TERM_SMALL_THAN_LEDGER, term=7))
    c = count_vote(c, reply(VoteResult.UNKNOWN))
    c = count_vote(c, None)
    assert c == VoteCounts(term=5, answered=9, valid=7, accepted=1, not_ready=1, bigger=2,
                           already_has_leader=True, known_max_term=8)


CLOSE_TABLE = [
    ("open", counts(answered=1, valid=1, accepted=1), False),
    ("already_has_leader", counts(answered=1, already_has_leader=True), True),
    ("accepted_quorum", counts(answered=2, valid=2, accepted=2), True),
    ("accepted_plus_not_ready_quorum", counts(answered=2, valid=2, accepted=1, not_ready=1), True),
    ("all_answered", counts(answered=3, valid=1, accepted=1), True),
]


@pytest.mark.parametrize("case", CLOSE_TABLE, ids=[c[0] for c in CLOSE_TABLE])
def test_vote_round_closed(case):
    _, c, expected = case
    assert vote_round_closed(c, 3) is expected


# P-B, group of 3: (row, counts, result, next vote, effects)
P_B_TABLE = [
    ("known_max_term_bigger", counts(valid=3, accepted=3, known_max_term=9), R.WAIT_TO_VOTE_NEXT,
     NextVote.VOTE_INTERVAL, (BecomeCandidate(9),)),
    ("already_has_leader_revote", counts(valid=3, accepted=1, already_has_leader=True), R.WAIT_TO_REVOTE,
     NextVote.VOTE_INTERVAL_PLUS_LEASE, ()),
    ("valid_not_quorum", counts(valid=1, accepted=1), R.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL, ()),
    ("valid_minus_bigger_not_quorum", counts(valid=3, accepted=1, bigger=2), R.WAIT_TO_REVOTE,
     NextVote.VOTE_INTERVAL_PLUS_MAX, ()),
    ("accepted_quorum", counts(valid=2, accepted=2), R.PASSED, NextVote.UNCHANGED, (BecomeLeader(5),)),
    ("accepted_plus_not_ready_quorum", counts(valid=3, accepted=1, not_ready=1), R.REVOTE_IMMEDIATELY,
     NextVote.UNCHANGED, ()),
    ("otherwise", counts(valid=3, accepted=1, bigger=1), R.WAIT_TO_VOTE_NEXT, NextVote.VOTE_INTERVAL, ()),
]


@pytest.mark.parametrize("profile", [DLEDGER_0_2, DLEDGER_0_4], ids=lambda p: p.name)
@pytest.mark.parametrize("case", P_B_TABLE, ids=[c[0] for c in P_B_TABLE])
def test_p_b_table(case, profile):
    row, c, result, next_vote, effects = case
    d = parse_vote_result(c, 3, profile)
    assert (d.row, d.result, d.next_vote, d.effects) == (row, result, next_vote, effects)


def test_p_b_names_every_parse_result():
    assert {c[2] for c in P_B_TABLE} == set(ParseResult)


P_A_TABLE = [
    ("known_max_term_bigger", counts(valid=3, known_max_term=9), R.WAIT_TO_VOTE_NEXT, NextVote.VOTE_INTERVAL),
    ("already_has_leader_vote_next", counts(valid=3, accepted=1, already_has_leader=True), R.WAIT_TO_VOTE_NEXT,
     NextVote.VOTE_INTERVAL_PLUS_LEASE),
    ("valid_not_quorum", counts(valid=1, accepted=1), R.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL),
    ("accepted_quorum", counts(valid=3, accepted=2, bigger=1), R.PASSED, NextVote.UNCHANGED),
    ("accepted_plus_not_ready_quorum", counts(valid=3, accepted=1, not_ready=1), R.REVOTE_IMMEDIATELY,
     NextVote.UNCHANGED),
    ("accepted_plus_bigger_quorum", counts(valid=3, accepted=1, bigger=1), R.WAIT_TO_REVOTE, NextVote.VOTE_INTERVAL),
    ("otherwise", counts(valid=3, accepted=1), R.WAIT_TO_VOTE_NEXT, NextVote.VOTE_INTERVAL),
]


@pytest.mark.parametrize("case", P_A_TABLE, ids=[c[0] for c in P_A_TABLE])
def test_p_a_table(case):
    row, c, result, next_vote = case
    d = parse_vote_result(c, 3, DLEDGER_0_1)
    assert (d.row, d.result, d.next_vote) == (row, result, next_vote)


def test_p_a_has_no_valid_minus_bigger_row():
    c = counts(valid=3, accepted=1, bigger=2)
    assert parse_vote_result(c, 3, DLEDGER_0_1).row == "accepted_plus_bigger_quorum"
    assert parse_vote_result(c, 3, DLEDGER_0_4).row == "valid_minus_bigger_not_quorum"


@pytest.mark.parametrize(
    "kind,expected",
    [(NextVote.UNCHANGED, 50), (NextVote.VOTE_INTERVAL, 1000), (NextVote.VOTE_INTERVAL_PLUS_LEASE, 7000),
     (NextVote.VOTE_INTERVAL_PLUS_MAX, 2000)],
)
def test_next_time_after_parse(kind, expected):
    from spec.dledger.candidate import ParseDecision

    assert next_time_after_parse(ParseDecision(R.WAIT_TO_REVOTE, kind), 50, 1000, DEFAULT_TIMING) == expected


def test_next_vote_time_uses_the_drawn_value_and_taking_intervals():
    t = Timing()
    assert next_vote_time(1000, 0, t) == 1300
    assert next_vote_time(1000, vote_interval_spread(t) - 1, t) == 1999
    assert next_vote_time(1000, 5, t, taking_leadership=True) == 1035
    assert vote_interval_spread(t, taking_leadership=True) == 70
    assert next_vote_time(1000, 0, t, last_vote_cost=40, profile=DLEDGER_0_1) == 1340
    assert next_vote_time(1000, 0, t, last_vote_cost=40, profile=DLEDGER_0_4) == 1300
    assert vote_round_wait_ms(999, t) == 2999


# ------------------------------------------------------------------ properties

results = st.sampled_from(list(VoteResult))
replies = st.none() | st.builds(VoteResponse, st.integers(0, 10), results)


@given(st.integers(1, 7), st.lists(replies, max_size=7), st.sampled_from([DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4]))
def test_parse_passed_only_with_accepted_quorum_and_no_bigger_term(n, rs, profile):
    c = start_vote_counts(5)
    for r in rs[:n]:
        c = count_vote(c, r)
    d = parse_vote_result(c, n, profile)
    if d.result is R.PASSED:
        assert is_quorum(c.accepted, n) and c.known_max_term <= 5 and not c.already_has_leader
        assert d.effects == (BecomeLeader(5),)
    if c.known_max_term > 5:
        assert d.result is R.WAIT_TO_VOTE_NEXT and d.effects == (BecomeCandidate(c.known_max_term),)


@given(st.lists(replies, max_size=9))
def test_counts_are_consistent(rs):
    c = start_vote_counts(3)
    for r in rs:
        c = count_vote(c, r)
    assert c.answered == len(rs)
    assert c.accepted + c.not_ready + c.bigger <= c.valid <= c.answered
    assert c.known_max_term >= 3
