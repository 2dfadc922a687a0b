"""The replicated log: push handling (G1/G2), the leader's dispatcher, commit rules."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.dledger.effects import AdvanceCommitIndex, AppendEntries, ClampCommitIndex, TruncateLog
from spec.dledger.log import (
    PUSH_ROWS,
    Dispatcher,
    DispatcherState as S,
    first_index_of_term,
    handle_push,
    leader_commit_index,
    ledger_end_term,
    next_push,
    on_push_response,
    quorum_match_index,
    start_dispatcher,
)
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4
from spec.dledger.records import Entry, PushEntryRequest, PushType as T, ResponseCode as C, Role

PEERS = frozenset({"n1", "n2", "n3"})


def log_of(*terms):
    return [Entry(i, t, f"e{i}") for i, t in enumerate(terms)]


def follower(term=5, leader="n2"):
    return MemberView("n1", PEERS, term, None, leader, Role.FOLLOWER)


def push(kind, prev_index=-1, prev_term=-1, entries=(), commit=-1, term=5, leader="n2"):
    return PushEntryRequest(term, leader, kind, commit, prev_index, prev_term, tuple(entries))


LOCAL = log_of(1, 1, 2, 2)  # follower's log: indexes 0..3

# (row, profile, request, committed, code, end index in reply, hint, effects)
PUSH_TABLE = [
    ("expired_term", DLEDGER_0_4, push(T.COMPARE, term=4), -1, C.EXPIRED_TERM, 3, None, ()),
    ("inconsistent_term", DLEDGER_0_4, push(T.COMPARE, term=6), -1, C.INCONSISTENT_TERM, 3, None, ()),
    ("inconsistent_leader", DLEDGER_0_4, push(T.COMPARE, leader="n3"), -1, C.INCONSISTENT_LEADER, 3, None, ()),
    ("compare_empty_leader", DLEDGER_0_4, push(T.COMPARE), -1, C.SUCCESS, 3, None, ()),
    ("compare_match", DLEDGER_0_4, push(T.COMPARE, 2, 2), -1, C.SUCCESS, 3, None, ()),
    ("compare_conflict_hint", DLEDGER_0_4, push(T.COMPARE, 3, 3), -1, C.INCONSISTENT_STATE, 3, (2, 2), ()),
    ("compare_beyond_end", DLEDGER_0_4, push(T.COMPARE, 7, 3), -1, C.INCONSISTENT_STATE, 3, None, ()),
    ("compare_before_first", DLEDGER_0_4, push(T.COMPARE, -1, 2), -1, C.INCONSISTENT_STATE, 3, None, ()),
    ("truncate_out_of_range", DLEDGER_0_4, push(T.TRUNCATE, 9), -1, C.INCONSISTENT_STATE, 3, None, ()),
    ("truncate_out_of_range", DLEDGER_0_4, push(T.TRUNCATE, -1), -1, C.INCONSISTENT_STATE, 3, None, ()),
    ("compare_match", DLEDGER_0_2, push(T.COMPARE, 1, 1), -1, C.SUCCESS, 3, None, ()),
    ("compare_mismatch", DLEDGER_0_2, push(T.COMPARE, 3, 3), -1, C.INCONSISTENT_STATE, 3, None, ()),
    ("truncate", DLEDGER_0_4, push(T.TRUNCATE, 2, commit=5), 3, C.SUCCESS, 1, None,
     (TruncateLog(2), ClampCommitIndex(1))),
    ("truncate", DLEDGER_0_2, push(T.TRUNCATE, 1, entries=[Entry(1, 1, "e1")], commit=5), -1, C.SUCCESS, 1, None,
     (TruncateLog(1), AppendEntries((Entry(1, 1, "e1"),)), ClampCommitIndex(1), AdvanceCommitIndex(1))),
    ("append", DLEDGER_0_4, push(T.APPEND, 3, entries=[Entry(4, 5, "x")], commit=9), 1, C.SUCCESS, 4, None,
     (AppendEntries((Entry(4, 5, "x"),)), AdvanceCommitIndex(4))),
    ("append_out_of_order", DLEDGER_0_4, push(T.APPEND, 5, entries=[Entry(6, 5, "x")]), -1, C.INCONSISTENT_STATE, 3,
     None, ()),
    # a push of entries it holds, up to its last one: answered SUCCESS, nothing changes (the
    # leader's ack was lost, or the push came twice); one that differs from them is out of order
    ("append_held", DLEDGER_0_4, push(T.APPEND, 1, entries=LOCAL[2:4], commit=9), 1, C.SUCCESS, 3, None, ()),
    ("append_held", DLEDGER_0_1, push(T.APPEND, 0, entries=LOCAL[1:2]), 1, C.SUCCESS, 3, None, ()),
    ("append_out_of_order", DLEDGER_0_4, push(T.APPEND, 1, entries=[Entry(2, 2, "other")]), -1, C.INCONSISTENT_STATE, 3,
     None, ()),
    ("append_out_of_order", DLEDGER_0_4, push(T.APPEND, 2, entries=[LOCAL[3], Entry(4, 5, "x")]), -1,
     C.INCONSISTENT_STATE, 3, None, ()),
    ("commit", DLEDGER_0_4, push(T.COMMIT, commit=2), 0, C.SUCCESS, 3, None, (AdvanceCommitIndex(2),)),
]


@pytest.mark.parametrize("case", PUSH_TABLE, ids=[f"{c[0]}-{c[1].log_generation}" for c in PUSH_TABLE])
def test_handle_push(case):
    row, profile, request, committed, code, end, hint, effects = case
    d = handle_push(follower(), request, LOCAL, committed, profile)
    assert (d.row, d.response.code, d.response.end_index, d.effects) == (row, code, end, effects)
    if hint is not None:
        assert (d.response.x_term, d.response.x_index) == hint


def test_push_table_names_every_row():
    assert {c[0] for c in PUSH_TABLE} == set(PUSH_ROWS)


@given(st.builds(PushEntryRequest, st.integers(-1, 7), st.sampled_from(["n2", "n3"]), st.sampled_from(list(T)),
                 st.integers(-1, 9), st.integers(-3, 9), st.integers(-1, 5),
                 st.lists(st.builds(Entry, st.integers(0, 9), st.integers(0, 5)), max_size=3).map(tuple)),
       st.integers(-1, 3), st.sampled_from([DLEDGER_0_2, DLEDGER_0_4]))
def test_handle_push_never_breaks_the_log(request, committed, profile):
    d = handle_push(follower(), request, LOCAL, committed, profile)
    flog = list(LOCAL)
    for e in d.effects:
        if isinstance(e, TruncateLog):
            assert 0 <= e.from_index <= len(flog)
            del flog[e.from_index:]
        elif isinstance(e, AppendEntries):
            flog.extend(e.entries)
        elif isinstance(e, AdvanceCommitIndex):
            assert committed < e.index <= len(flog) - 1
    assert [x.index for x in flog] == list(range(len(flog))) or d.response.code is not C.SUCCESS


def test_follower_commit_never_beyond_its_end_nor_backwards():
    d = handle_push(follower(), push(T.COMMIT, commit=99), LOCAL, 1, DLEDGER_0_4)
    assert d.effects == (AdvanceCommitIndex(3),)
    d = handle_push(follower(), push(T.COMMIT, commit=0), LOCAL, 1, DLEDGER_0_4)
    assert d.effects == ()


def test_first_index_of_term_and_ledger_end_term():
    log = log_of(1, 1, 2, 2, 2, 3)
    assert first_index_of_term(log, 2, 4) == 2
    assert first_index_of_term(log, 1, 1) == 0
    assert ledger_end_term(log) == 3 and ledger_end_term([]) == -1


@pytest.mark.parametrize(
    "matches,expected", [([5, 3, 1], 3), ([5, 5, 1], 5), ([4, 1, 1, 2], 1), ([7], 7), ([2, 9, 9, 0, 1], 2)]
)
def test_quorum_match_index(matches, expected):
    assert quorum_match_index(matches) == expected


COMMIT_TABLE = [
    # (id, log terms, matches, curr term, committed, G1, G2)
    ("current_term_entry_commits", (1, 2, 2), [2, 2, 0], 2, -1, 2, 2),
    ("old_term_entry_g1_commits_g2_waits", (1, 1, 2), [1, 1, 0], 3, -1, 1, -1),
    ("never_backwards", (1, 1), [1, 0, 0], 1, 1, 1, 1),
    ("clamped_to_log", (1,), [5, 5, 5], 1, -1, 0, 0),
]


@pytest.mark.parametrize("case", COMMIT_TABLE, ids=[c[0] for c in COMMIT_TABLE])
def test_leader_commit_index(case):
    _, terms, matches, term, committed, g1, g2 = case
    log = log_of(*terms)
    assert leader_commit_index(matches, log, term, committed, "G1") == g1
    assert leader_commit_index(matches, log, term, committed, "G2") == g2


# ------------------------------------------------------------------ dispatcher


def replicate(leader_log, follower_log, generation, profile, max_steps=200):
    """Run the dispatcher against a follower using only spec functions."""
    d = start_dispatcher()
    flog = list(follower_log)
    committed = -1
    member = MemberView("n1", PEERS, 9, None, "n2", Role.FOLLOWER)
    for seq in range(max_steps):
        d, request = next_push(d, leader_log, 9, "n2", -1, generation, seq)
        if request is None:
            return d, flog
        decision = handle_push(member, request, flog, committed, profile)
        for e in decision.effects:
            if isinstance(e, TruncateLog):
                del flog[e.from_index:]
            elif isinstance(e, AppendEntries):
                flog.extend(e.entries)
        d = on_push_response(d, request, decision.response, generation)
    raise AssertionError("dispatcher did not converge")


def test_dispatcher_states_g2():
    leader = log_of(1, 2, 2)
    d, req = next_push(start_dispatcher(), leader, 3, "n2", -1, "G2", 1)
    assert req.type is T.COMPARE and (req.prev_index, req.prev_term) == (2, 2)
    d2 = on_push_response(d, req, handle_push(follower(3), req, log_of(1, 1), -1, DLEDGER_0_4).response, "G2")
    assert d2.state is S.COMPARE and d2.next_index == 2  # beyond end: next compare at the follower's end
    d3 = on_push_response(d2, *(lambda r: (r, handle_push(follower(3), r, log_of(1, 1), -1, DLEDGER_0_4).response))(
        next_push(d2, leader, 3, "n2", -1, "G2", 2)[1]), "G2")
    # conflict hint: writeIndex := first index of the follower's term there (0), so compare at -1
    assert d3.state is S.COMPARE and d3.next_index == 0
    assert Dispatcher(S.APPEND, 3, 2) == on_push_response(
        Dispatcher(S.TRUNCATE, 3, 2), push(T.TRUNCATE, 3), handle_push(follower(5), push(T.TRUNCATE, 3), log_of(1, 2, 2, 9), -1).response, "G2")


def diverging_logs():
    """Two logs that obey log matching: a common prefix, then suffixes written by
    leaders of different terms (leader terms 4 and 6, follower terms 5 and 7)."""
    prefix = st.lists(st.integers(1, 3), max_size=5).map(sorted)
    leader_tail = st.lists(st.sampled_from([4, 6]), max_size=4).map(sorted)
    follower_tail = st.lists(st.sampled_from([5, 7]), max_size=4).map(sorted)
    return st.tuples(prefix, leader_tail, follower_tail).map(
        lambda t: ([Entry(i, x, f"L{i}") for i, x in enumerate(t[0] + t[1])],
                   [Entry(i, x, f"L{i}" if i < len(t[0]) else f"F{i}") for i, x in enumerate(t[0] + t[2])])
    )


@given(diverging_logs(), st.sampled_from([("G1", DLEDGER_0_2), ("G2", DLEDGER_0_4)]))
def test_dispatcher_makes_the_follower_log_equal_the_leaders(logs, gen):
    leader, follower_log = logs
    if not leader:
        return  # an empty leader log sends nothing (DLedger's dispatcher waits)
    _, flog = replicate(leader, follower_log, gen[0], gen[1])
    assert flog == leader
