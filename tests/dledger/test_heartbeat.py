"""Heartbeats: handle_heartbeat's rows, the leader round (H-A, H-B), the follower timeout."""
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.dledger.effects import (
    BecomeCandidate,
    BecomeFollower,
    IncreaseTermImmediately,
    RecordHeartbeatQuorum,
    RefreshLeaderHeartbeat,
    ResendHeartbeat,
)
from spec.dledger.heartbeat import (
    HEARTBEAT_OUTCOMES,
    HEARTBEAT_ROW_CODES,
    HEARTBEAT_ROWS,
    HeartbeatCounts,
    HeartbeatRoundOutcome as O,
    count_heartbeat,
    decide_heartbeat_round,
    follower_timed_out,
    handle_heartbeat,
    heartbeat_latch_open,
    leader_should_send_heartbeat,
    start_heartbeat_counts,
)
from spec.dledger.member_state import NEVER, MemberView
from spec.dledger.profiles import DEFAULT_TIMING, DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4, PROFILES
from spec.dledger.records import DEFAULT_GROUP, HeartBeatRequest, HeartBeatResponse, ResponseCode as C

PEERS = frozenset({"n1", "n2", "n3"})


def member(**kw):
    base = dict(self_id="n1", peers=PEERS, curr_term=5, leader_id=None)
    base.update(kw)
    return MemberView(**base)


HANDLE_TABLE = [
    ("wrong_remote", {}, HeartBeatRequest(7, "n2", remote_id="n3"), C.UNKNOWN_MEMBER, 7, ()),
    ("wrong_group", {}, HeartBeatRequest(7, "n2", group="other"), C.UNKNOWN_GROUP, 7, ()),
    ("unknown_member", {}, HeartBeatRequest(5, "x9"), C.UNKNOWN_MEMBER, 5, ()),
    ("unexpected_member", {}, HeartBeatRequest(5, "n1"), C.UNEXPECTED_MEMBER, 5, ()),
    ("expired_term", {}, HeartBeatRequest(4, "n2"), C.EXPIRED_TERM, 5, ()),
    ("same_leader", {"leader_id": "n2"}, HeartBeatRequest(5, "n2"), C.SUCCESS, -1, (RefreshLeaderHeartbeat(),)),
    ("no_leader_yet", {}, HeartBeatRequest(5, "n2"), C.SUCCESS, -1, (BecomeFollower(5, "n2"),)),
    ("inconsistent_leader", {"leader_id": "n3"}, HeartBeatRequest(5, "n2"), C.INCONSISTENT_LEADER, -1, ()),
    ("term_not_ready", {"leader_id": "n3"}, HeartBeatRequest(6, "n2"), C.TERM_NOT_READY, -1,
     (BecomeCandidate(6), IncreaseTermImmediately())),
]


@pytest.mark.parametrize("case", HANDLE_TABLE, ids=[c[0] for c in HANDLE_TABLE])
def test_handle_heartbeat(case):
    row, overrides, request, code, reply_term, effects = case
    d = handle_heartbeat(member(**overrides), request)
    assert (d.row, d.code, d.reply_term, d.effects) == (row, code, reply_term, effects)


def test_table_names_every_row_and_code():
    assert tuple(c[0] for c in HANDLE_TABLE) == HEARTBEAT_ROWS
    assert {c[3].name for c in HANDLE_TABLE} == set(HEARTBEAT_OUTCOMES)


def test_the_row_and_outcome_lists_are_what_handle_heartbeat_answers():
    """Over the whole input space that matters (a member's term and leader against a
    request's term, leader, group and addressee: self, peers and a stranger),
    handle_heartbeat gives exactly the declared (row, code) pairs: none missing, none
    undeclared."""
    seen = set()
    for curr_term, leader_id, term, leader, group, remote in itertools.product(
            (4, 5, 6), (None, "n1", "n2", "n3"), (4, 5, 6), ("n1", "n2", "n3", "x9"), (DEFAULT_GROUP, "other"),
            (None, "n1", "n3")):
        d = handle_heartbeat(member(curr_term=curr_term, leader_id=leader_id),
                             HeartBeatRequest(term, leader, group=group, remote_id=remote))
        seen.add((d.row, d.code))
    assert seen == set(HEARTBEAT_ROW_CODES.items())


def test_leader_receiving_heartbeat_of_same_term_is_inconsistent():
    d = handle_heartbeat(member(leader_id="n1"), HeartBeatRequest(5, "n2"))
    assert d.code is C.INCONSISTENT_LEADER


def test_count_heartbeat_keeps_the_last_expired_term_not_the_largest():
    c = start_heartbeat_counts(5)
    c = count_heartbeat(c, HeartBeatResponse(9, C.EXPIRED_TERM))
    c = count_heartbeat(c, HeartBeatResponse(7, C.EXPIRED_TERM))
    c = count_heartbeat(c, HeartBeatResponse(-1, C.SUCCESS))
    c = count_heartbeat(c, HeartBeatResponse(-1, C.TERM_NOT_READY))
    c = count_heartbeat(c, HeartBeatResponse(-1, C.INCONSISTENT_LEADER))
    c = count_heartbeat(c, None)
    assert c == HeartbeatCounts(term=5, answered=7, succ=2, not_ready=1, inconsistent_leader=True, max_term=7)


@pytest.mark.parametrize(
    "case,expected",
    [(HeartbeatCounts(5), False), (HeartbeatCounts(5, answered=2, succ=2), True),
     (HeartbeatCounts(5, answered=2, succ=1, not_ready=1), True), (HeartbeatCounts(5, answered=3), True)],
    ids=["open", "succ_quorum", "succ_plus_not_ready", "all_answered"],
)
def test_heartbeat_latch(case, expected):
    assert heartbeat_latch_open(case, 3) is expected


LEASE = DEFAULT_TIMING.lease_ms
# (id, counts, last_succ, H-A outcome, H-B outcome); group of 3, now = 10_000
ROUND_TABLE = [
    ("quorum_ack", HeartbeatCounts(5, 3, 2), 9000, O.QUORUM_ACK, O.QUORUM_ACK),
    ("quorum_with_not_ready", HeartbeatCounts(5, 3, 1, 1), 9000, O.RESEND, O.RESEND),
    ("higher_term_without_quorum", HeartbeatCounts(5, 3, 1, 0, False, 8), 9000, O.STEP_DOWN_HIGHER_TERM,
     O.STEP_DOWN_HIGHER_TERM),
    # #247: with a quorum, H-A keeps leading and ignores the higher term; H-B steps down
    ("higher_term_with_quorum", HeartbeatCounts(5, 3, 2, 0, False, 8), 9000, O.QUORUM_ACK, O.STEP_DOWN_HIGHER_TERM),
    ("inconsistent_leader", HeartbeatCounts(5, 3, 1, 0, True), 9000, O.STEP_DOWN_INCONSISTENT_LEADER,
     O.STEP_DOWN_INCONSISTENT_LEADER),
    ("lease_expired", HeartbeatCounts(5, 3, 1), 10_000 - LEASE - 1, O.STEP_DOWN_LEASE_EXPIRED,
     O.STEP_DOWN_LEASE_EXPIRED),
    ("lease_never_succeeded", HeartbeatCounts(5, 3, 1), NEVER, O.STEP_DOWN_LEASE_EXPIRED, O.STEP_DOWN_LEASE_EXPIRED),
    ("keep_within_lease", HeartbeatCounts(5, 3, 1), 10_000 - LEASE, O.KEEP, O.KEEP),
]


@pytest.mark.parametrize("case", ROUND_TABLE, ids=[c[0] for c in ROUND_TABLE])
def test_heartbeat_round(case):
    _, counts, last_succ, h_a, h_b = case
    for profile, expected in ((DLEDGER_0_1, h_a), (DLEDGER_0_2, h_a), (DLEDGER_0_4, h_b)):
        d = decide_heartbeat_round(counts, 3, 10_000, last_succ, DEFAULT_TIMING, profile)
        assert d.outcome is expected, profile.name


def test_round_table_names_every_outcome():
    assert {c[3] for c in ROUND_TABLE} | {c[4] for c in ROUND_TABLE} == set(O)


def test_round_effects():
    def effects(counts, last):
        return decide_heartbeat_round(counts, 3, 10_000, last).effects

    assert effects(HeartbeatCounts(5, 3, 2), 0) == (RecordHeartbeatQuorum(),)
    assert effects(HeartbeatCounts(5, 3, 1, 1), 0) == (ResendHeartbeat(),)
    assert effects(HeartbeatCounts(5, 3, 1, 0, False, 8), 9000) == (BecomeCandidate(8),)
    assert effects(HeartbeatCounts(5, 3, 1, 0, True), 9000) == (BecomeCandidate(5),)


def test_leader_send_and_follower_timeout():
    hb = DEFAULT_TIMING.heartbeat_interval_ms
    assert leader_should_send_heartbeat(0, NEVER)
    assert not leader_should_send_heartbeat(hb, 0)
    assert leader_should_send_heartbeat(hb + 1, 0)
    assert not follower_timed_out(LEASE, 0)
    assert follower_timed_out(LEASE + 1, 0)


@given(
    st.builds(HeartbeatCounts, st.just(5), st.integers(1, 5), st.integers(1, 5), st.integers(0, 4), st.booleans(),
              st.integers(-1, 9)),
    st.integers(1, 5),
    st.integers(-1, 20_000),
    st.sampled_from(list(PROFILES.values())),
)
def test_step_down_never_raises_the_term_by_itself(counts, n, last_succ, profile):
    d = decide_heartbeat_round(counts, n, 20_000, last_succ, DEFAULT_TIMING, profile)
    for e in d.effects:
        if isinstance(e, BecomeCandidate):
            assert e.term in (counts.term, counts.max_term) and e.term >= counts.term


@given(st.builds(HeartBeatRequest, st.integers(-1, 8), st.sampled_from(["n1", "n2", "n3", "x9"])),
       st.integers(-1, 8), st.none() | st.sampled_from(["n1", "n2", "n3"]))
def test_handle_heartbeat_follows_only_at_its_own_term(request, term, leader):
    d = handle_heartbeat(member(curr_term=term, leader_id=leader), request)
    for e in d.effects:
        if isinstance(e, BecomeFollower):
            assert e.term == term and leader is None
    if d.code is C.SUCCESS:
        assert request.term == term
