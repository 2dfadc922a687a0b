"""handle_vote: one named case per row of the V-B and V-A tables, plus properties."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.dledger.effects import BecomeCandidate, IncreaseTermImmediately, SetVotedFor
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4, PROFILES
from spec.dledger.records import ResponseCode, VoteRequest, VoteResult
from spec.dledger.vote import VOTE_OUTCOMES, handle_vote

PEERS = frozenset({"n1", "n2", "n3"})


def voter(**kw):
    base = dict(self_id="n1", peers=PEERS, curr_term=5, voted_for=None, leader_id=None,
                ledger_end_term=3, ledger_end_index=10)
    base.update(kw)
    return MemberView(**base)


def req(term=5, candidate="n2", lt=3, li=10, **kw):
    return VoteRequest(term, candidate, lt, li, **kw)


# (id, voter overrides, request, self_vote, expected result, expected reply term, expected effects)
V_B_TABLE = [
    # DLedgerServer: the reply copies the request's term and carries no result (code in test_server_checks)
    ("wrong_remote", {}, req(term=7, remote_id="n2"), False, VoteResult.UNKNOWN, 7, ()),
    ("wrong_group", {}, req(term=7, group="other"), False, VoteResult.UNKNOWN, 7, ()),
    ("unknown_leader", {}, req(candidate="x9"), False, VoteResult.REJECT_UNKNOWN_LEADER, 5, ()),
    ("unexpected_leader", {}, req(candidate="n1"), False, VoteResult.REJECT_UNEXPECTED_LEADER, 5, ()),
    ("expired_ledger_term", {}, req(lt=2, li=99), False, VoteResult.REJECT_EXPIRED_LEDGER_TERM, 5, ()),
    ("small_ledger_end_index", {}, req(li=9), False, VoteResult.REJECT_SMALL_LEDGER_END_INDEX, 5, ()),
    ("expired_vote_term", {}, req(term=4), False, VoteResult.REJECT_EXPIRED_VOTE_TERM, 5, ()),
    ("already_has_leader", {"voted_for": "n3", "leader_id": "n3"}, req(), False,
     VoteResult.REJECT_ALREADY_HAS_LEADER, 5, ()),
    ("already_voted", {"voted_for": "n3"}, req(), False, VoteResult.REJECT_ALREADY_VOTED, 5, ()),
    ("term_not_ready", {}, req(term=7), False, VoteResult.REJECT_TERM_NOT_READY, 5,
     (BecomeCandidate(7), IncreaseTermImmediately())),
    ("term_small_than_ledger", {"curr_term": 2, "ledger_end_term": 3}, req(term=2), False,
     VoteResult.REJECT_TERM_SMALL_THAN_LEDGER, 3, ()),
    ("taking_leadership", {"taking_leadership": True}, req(), False, VoteResult.REJECT_TAKING_LEADERSHIP, 5, ()),
    ("accept", {}, req(), False, VoteResult.ACCEPT, 5, (SetVotedFor("n2"),)),
    # notes on the table
    ("accept_same_candidate_again_with_leader", {"voted_for": "n2", "leader_id": "n2"}, req(), False,
     VoteResult.ACCEPT, 5, (SetVotedFor("n2"),)),
    ("self_vote_skips_unexpected_leader", {}, req(candidate="n1"), True, VoteResult.ACCEPT, 5, (SetVotedFor("n1"),)),
    ("self_vote_not_blocked_by_taking_leadership", {"taking_leadership": True}, req(candidate="n1"), True,
     VoteResult.ACCEPT, 5, (SetVotedFor("n1"),)),
    ("taking_leadership_only_when_not_behind", {"taking_leadership": True}, req(li=11), False,
     VoteResult.ACCEPT, 5, (SetVotedFor("n2"),)),
]


@pytest.mark.parametrize("profile", [DLEDGER_0_2, DLEDGER_0_4], ids=lambda p: p.name)
@pytest.mark.parametrize("case", V_B_TABLE, ids=[c[0] for c in V_B_TABLE])
def test_v_b_table(case, profile):
    _, overrides, request, self_vote, result, reply_term, effects = case
    d = handle_vote(voter(**overrides), request, self_vote, profile)
    assert (d.result, d.reply_term, d.effects) == (result, reply_term, effects)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_server_checks(profile):
    p = PROFILES[profile]
    assert handle_vote(voter(), req(remote_id="n2", group="other"), False, p).code is ResponseCode.UNKNOWN_MEMBER
    assert handle_vote(voter(), req(group="other"), False, p).code is ResponseCode.UNKNOWN_GROUP
    assert handle_vote(voter(group="other"), req(group="other", remote_id="n1"), False, p).code is ResponseCode.SUCCESS
    # a candidate's own vote never goes through the server
    assert handle_vote(voter(), req(candidate="n1", group="other", remote_id="n9"), True, p).result is VoteResult.ACCEPT


def test_v_b_table_names_every_outcome():
    assert {c[4].value for c in V_B_TABLE} == set(VOTE_OUTCOMES)


# V-A (release-0.1): terms before logs, no taking-leadership row.
V_A_TABLE = [
    ("stale_term_beats_stale_log", {}, req(term=4, lt=2), VoteResult.REJECT_EXPIRED_VOTE_TERM, 5),
    ("newer_term_not_ready_even_if_log_behind", {}, req(term=7, lt=2), VoteResult.REJECT_TERM_NOT_READY, 5),
    ("already_voted_before_log", {"voted_for": "n3"}, req(lt=2), VoteResult.REJECT_ALREADY_VOTED, 5),
    ("log_checked_at_equal_term", {}, req(lt=2), VoteResult.REJECT_EXPIRED_LEDGER_TERM, 5),
    ("small_index_at_equal_term", {}, req(li=3), VoteResult.REJECT_SMALL_LEDGER_END_INDEX, 5),
    ("no_taking_leadership_row", {"taking_leadership": True}, req(), VoteResult.ACCEPT, 5),
]


@pytest.mark.parametrize("case", V_A_TABLE, ids=[c[0] for c in V_A_TABLE])
def test_v_a_table(case):
    _, overrides, request, result, reply_term = case
    d = handle_vote(voter(**overrides), request, False, DLEDGER_0_1)
    assert (d.result, d.reply_term) == (result, reply_term)


def test_v_b_checks_log_before_term():
    d = handle_vote(voter(), req(term=7, lt=2), False, DLEDGER_0_4)
    assert d.result is VoteResult.REJECT_EXPIRED_LEDGER_TERM
    assert d.effects == ()  # a stale log never makes the voter step down (PR #48)


# ------------------------------------------------------------------ properties

ids = st.sampled_from(["n1", "n2", "n3", "x9"])
terms = st.integers(-1, 8)
views = st.builds(
    MemberView,
    self_id=st.just("n1"),
    peers=st.just(PEERS),
    curr_term=terms,
    voted_for=st.none() | ids,
    leader_id=st.none() | ids,
    ledger_end_term=terms,
    ledger_end_index=st.integers(-1, 6),
    taking_leadership=st.booleans(),
)
requests = st.builds(VoteRequest, terms, ids, terms, st.integers(-1, 6))
profiles = st.sampled_from(list(PROFILES.values()))


@given(views, requests, st.booleans(), profiles)
def test_handle_vote_never_changes_curr_term(v, r, self_vote, profile):
    d = handle_vote(v, r, self_vote, profile)
    # the only term-related effect is stepping down to candidate at a LARGER term,
    # which leaves currTerm as it is (nextTerm moves it later, in the candidate round)
    for e in d.effects:
        assert isinstance(e, (SetVotedFor, BecomeCandidate, IncreaseTermImmediately))
        if isinstance(e, BecomeCandidate):
            assert e.term > v.curr_term


@given(views, requests, st.booleans(), profiles)
def test_accept_implies_candidate_log_up_to_date(v, r, self_vote, profile):
    d = handle_vote(v, r, self_vote, profile)
    if d.result is VoteResult.ACCEPT:
        assert (r.ledger_end_term, r.ledger_end_index) >= (v.ledger_end_term, v.ledger_end_index)
        assert r.term == v.curr_term and r.term >= v.ledger_end_term
        assert v.voted_for in (None, r.candidate)
        assert d.effects == (SetVotedFor(r.candidate),)


@given(views, requests, st.booleans(), profiles)
def test_reply_term_is_current_term_except_ledger_hint(v, r, self_vote, profile):
    d = handle_vote(v, r, self_vote, profile)
    expected = v.ledger_end_term if d.result is VoteResult.REJECT_TERM_SMALL_THAN_LEDGER else v.curr_term
    assert d.reply_term == expected


@given(views, requests, st.booleans())
def test_v_a_and_v_b_agree_when_logs_and_terms_do_not_conflict(v, r, self_vote):
    # Reordering the rows only matters when both a log row and a term row match.
    a = handle_vote(v, r, self_vote, DLEDGER_0_1)
    b = handle_vote(v, r, self_vote, DLEDGER_0_4)
    log_ok = (r.ledger_end_term, r.ledger_end_index) >= (v.ledger_end_term, v.ledger_end_index) or (
        r.ledger_end_term > v.ledger_end_term
    )
    if log_ok and r.term == v.curr_term and not v.taking_leadership:
        assert a.result == b.result
