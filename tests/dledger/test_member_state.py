"""MemberState role-change guards and the taking-leadership rule."""
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.dledger.member_state import (
    NEVER,
    elapsed,
    is_taking_leadership,
    known_max_term_after_candidate,
    may_become_candidate,
    may_become_follower,
    may_become_leader,
    next_term,
    parse_result_after_becoming_follower,
)
from spec.dledger.profiles import DLEDGER_0_1, DLEDGER_0_4
from spec.dledger.records import ParseResult

GUARDS = [
    ("leader_at_current_term", may_become_leader, 5, 5, True),
    ("leader_at_other_term", may_become_leader, 5, 4, False),
    ("follower_at_current_term", may_become_follower, 5, 5, True),
    ("follower_at_newer_term", may_become_follower, 5, 6, False),
    ("candidate_at_current_term", may_become_candidate, 5, 5, True),
    ("candidate_at_newer_term", may_become_candidate, 5, 9, True),
    ("candidate_at_older_term", may_become_candidate, 5, 4, False),
]


@pytest.mark.parametrize("case", GUARDS, ids=[g[0] for g in GUARDS])
def test_role_change_guards(case):
    _, guard, curr, term, expected = case
    assert guard(curr, term) is expected


TAKING = [
    ("0.2.3_preferred_at_transfer_term", DLEDGER_0_4, "n1", {"n1"}, 7, 7, True),
    ("0.2.3_not_preferred", DLEDGER_0_4, "n1", {"n2"}, 7, 7, False),
    ("0.2.3_other_term", DLEDGER_0_4, "n1", {"n1"}, 6, 7, False),
    ("0.2.3_no_preferred_ids", DLEDGER_0_4, "n1", set(), 7, 7, False),
    ("0.2.0_preferred_any_term", attrs.evolve(DLEDGER_0_4, taking_leadership="0.2.0"), "n1", {"n1"}, -1, 7, True),
    ("0.2.0_transfer_term", attrs.evolve(DLEDGER_0_4, taking_leadership="0.2.0"), "n1", set(), 7, 7, True),
    ("0.1_never", DLEDGER_0_1, "n1", {"n1"}, 7, 7, False),
]


@pytest.mark.parametrize("case", TAKING, ids=[t[0] for t in TAKING])
def test_is_taking_leadership(case):
    _, profile, me, preferred, take, curr, expected = case
    assert is_taking_leadership(profile, me, frozenset(preferred), take, curr) is expected


def test_never_is_infinitely_long_ago():
    assert elapsed(10, NEVER) == float("inf") and elapsed(10, 4) == 6


@given(st.integers(-1, 50), st.integers(-1, 50), st.integers(-1, 50))
def test_next_term_is_strictly_larger_and_reaches_known_max(curr, known, candidate_term):
    known = known_max_term_after_candidate(known, candidate_term)
    assert known >= candidate_term
    t = next_term(curr, known)
    assert t > curr and t >= known if known > curr else t == curr + 1


PARSE_RESETS = [
    # (profile, the last round's result, what changeToFollower leaves)
    ("since_pr37_resets", DLEDGER_0_4, ParseResult.WAIT_TO_VOTE_NEXT, ParseResult.WAIT_TO_REVOTE),
    ("release_0_1_keeps", DLEDGER_0_1, ParseResult.WAIT_TO_VOTE_NEXT, ParseResult.WAIT_TO_VOTE_NEXT),
]


@pytest.mark.parametrize("case", PARSE_RESETS, ids=[c[0] for c in PARSE_RESETS])
def test_becoming_follower_resets_the_last_parse_result_since_pr37(case):
    _, profile, last, expected = case
    assert parse_result_after_becoming_follower(last, profile) is expected
