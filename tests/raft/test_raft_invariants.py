"""The generic Raft invariants (spec/invariants/raft.py), predicate by predicate.

Each row feeds a history of observations to the invariants and names what must be
reported: a good history reports nothing, a known-bad one reports exactly its
invariant. The last tests show that every invariant is violated by a real
implementation (a mutant of the reference, or PySyncObj) in a committed scenario script.
"""
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.scenarios.registry import get_scenario
from conformance.script import read_script
from spec.dledger.profiles import PROFILES
from spec.dledger.records import DLedgerView, Entry, PeerProgress, Role
from spec.invariants import dledger
from spec.invariants import raft as inv
from spec.raft.records import FollowerProgress, RaftEntry, RaftRole, RaftView, raft_view

F, C, L = RaftRole.FOLLOWER, RaftRole.CANDIDATE, RaftRole.LEADER
SCRIPTS = Path(__file__).parents[1] / "scenarios" / "raft"


def log(*terms, start=1, bodies=None):
    return tuple(RaftEntry(start + i, t, (bodies or {}).get(start + i, f"e{start + i}")) for i, t in enumerate(terms))


def view(node, role=F, term=None, vote=None, leader=None, commit=-1, entries=(), progress=None):
    """A node's observation; its term defaults to the last entry's (at least 1)."""
    if term is None:
        term = max(1, entries[-1].term if entries else 1)
    return RaftView(node, role, term, vote, leader, commit, entries, progress)


def leading(term, commit, entries, **progress):
    """n1 leading ``term``, with progress given as peer=(next index, match index)."""
    return view("n1", L, term, "n1", "n1", commit, entries,
                tuple(FollowerProgress(p, n, m) for p, (n, m) in sorted(progress.items())))


CRASH = "crash"  # a history step: ("crash", node)


def judge(history, h=None):
    """Every violation the invariants report over ``history`` (views and crashes, in order)."""
    h = inv.RaftHistory() if h is None else h
    found = []
    for step in history:
        if isinstance(step, tuple) and step[0] == CRASH:
            inv.forget_volatile(h, step[1])
            continue
        found += inv.check_node(h, step)
        inv.record(h, step)
    return found


ROWS = {
    # name: (history, the invariants it must violate)
    "healthy election and replication": ([
        view("n1", C, 1, "n1"), view("n2", F, 1, "n1"), view("n1", L, 1, "n1", "n1", 1, log(1)),
        view("n2", F, 1, "n1", "n1", 1, log(1)), view("n1", L, 1, "n1", "n1", 2, log(1, 1)),
        view("n3", F, 2, None, None, 0, log(1, 1)), view("n3", L, 2, "n3", "n3", 2, log(1, 1, 2)),
    ], set()),
    "two leaders in one term": ([view("n1", L, 3, "n1", "n1"), view("n2", L, 3, "n2", "n2")], {"election-safety"}),
    "a leader again in a later term": ([view("n1", L, 3, "n1", "n1"), view("n2", L, 4, "n2", "n2")], set()),
    "term goes back": ([view("n1", F, 4), view("n1", F, 3)], {"term-monotonic"}),
    "term goes back across a restart": ([view("n1", F, 4), (CRASH, "n1"), view("n1", F, 0)],
                                        {"term-monotonic", "restart-durable"}),
    "two votes in one term across a restart": ([view("n1", F, 2, "n2"), (CRASH, "n1"), view("n1", F, 2, "n3")],
                                               {"one-vote-per-term", "restart-durable"}),
    "terms go back along a log": ([view("n1", F, 3, entries=log(1, 3, 2))], {"log-terms"}),
    "an entry of a term the node has not reached": ([view("n1", F, 1, entries=log(1, 2))], {"log-terms"}),
    "a restart loses the log's tail": ([view("n1", entries=log(1, 1)), (CRASH, "n1"), view("n1", entries=log(1))],
                                       {"restart-durable"}),
    "a restart resurrects entries": ([view("n1", entries=log(1)), (CRASH, "n1"), view("n1", entries=log(1, 1))],
                                     {"restart-durable"}),
    "a restart rewrites an entry": ([view("n1", entries=log(1, 1)), (CRASH, "n1"),
                                     view("n1", entries=log(1, 1, bodies={2: "x"}))], {"restart-durable"}),
    "a restart forgets the vote": ([view("n1", F, 2, "n2"), (CRASH, "n1"), view("n1", F, 2)], {"restart-durable"}),
    "a restart as it crashed, then moving on": ([view("n1", F, 2, "n2", entries=log(1, 2)), (CRASH, "n1"),
                                                 view("n1", F, 2, "n2", entries=log(1, 2)),
                                                 view("n1", F, 3, entries=log(1, 2))], set()),
    "a vote per term": ([view("n1", F, 2, "n2"), view("n1", F, 3, "n3")], set()),
    "commit index goes back": ([view("n1", commit=2, entries=log(1, 1)), view("n1", commit=1, entries=log(1))],
                               {"commit-monotonic"}),
    "commit index restarts lower after a crash": ([view("n1", commit=2, entries=log(1, 1)), (CRASH, "n1"),
                                                   view("n1", commit=0, entries=log(1, 1))], set()),
    "commit index beyond the log": ([view("n1", commit=3, entries=log(1, 1))], {"commit-within-log"}),
    "commit index with an empty log": ([view("n1", commit=0)], {"commit-within-log"}),
    "nothing committed, nothing held": ([view("n1", commit=-1)], set()),
    "same index and term, different past": ([view("n1", entries=log(1, 2, 3)), view("n2", entries=log(2, 2, 3))],
                                            {"log-matching"}),
    "same index and term, different command": ([view("n1", entries=log(1, 2)),
                                                view("n2", entries=log(1, 2, bodies={1: "x"}))], {"log-matching"}),
    "a conflicting suffix is allowed": ([view("n1", entries=log(1, 2, 2)), view("n2", entries=log(1, 3))], set()),
    "a crashed node's log is not compared": ([view("n1", entries=log(1, 2, 3)), (CRASH, "n1"),
                                              view("n2", entries=log(2, 2, 3))], set()),
    "committed entry replaced": ([view("n1", commit=2, entries=log(1, 1)), view("n2", commit=2, entries=log(1, 2))],
                                 {"committed-prefix"}),
    "leader of a later term lacks a committed entry": ([
        view("n1", L, 1, "n1", "n1", 2, log(1, 1)), view("n2", L, 2, "n2", "n2", 1, log(1)),
    ], {"leader-completeness"}),
    "leader elected before the commit may lack it": ([
        view("n2", L, 2, "n2", "n2", 1, log(1)), view("n1", L, 1, "n1", "n1", 2, log(1, 1)),
        view("n2", L, 2, "n2", "n2", 1, log(1)),
    ], set()),
    "a leader's progress as it replicates": ([
        leading(2, 0, log(1, 2), n2=(3, 0), n3=(3, 0)), leading(2, 2, log(1, 2), n2=(3, 2), n3=(3, 0)),
        leading(2, 2, log(1, 2, 2), n2=(4, 2), n3=(2, 1)),  # next may go back (a reset), match may not
    ], set()),
    "match index not below next index": ([leading(2, 0, log(1, 2), n2=(2, 2), n3=(3, 0))], {"follower-progress"}),
    "match index goes back within a term": ([leading(2, 2, log(1, 2), n2=(3, 2), n3=(3, 2)),
                                             leading(2, 2, log(1, 2), n2=(3, 1), n3=(3, 2))], {"follower-progress"}),
    "match index starts over in a new term": ([leading(2, 2, log(1, 2), n2=(3, 2), n3=(3, 2)),
                                               leading(3, 2, log(1, 2, 3), n2=(4, 0), n3=(4, 0))], set()),
    "match index starts over after a crash": ([leading(2, 2, log(1, 2), n2=(3, 2), n3=(3, 2)), (CRASH, "n1"),
                                               leading(2, 2, log(1, 2), n2=(3, 0), n3=(3, 0))], set()),
    "commit advanced beyond what a quorum holds": ([leading(2, 1, log(1, 2, 2), n2=(2, 1), n3=(2, 1)),
                                                    leading(2, 3, log(1, 2, 2), n2=(2, 1), n3=(2, 1))],
                                                   {"leader-commit-rule"}),
    "commit of an older term's entry by counting": ([leading(3, 0, log(1, 2, 3), n2=(4, 0), n3=(4, 0)),
                                                     leading(3, 2, log(1, 2, 3), n2=(4, 2), n3=(3, 2))],
                                                    {"leader-commit-rule"}),
    "an older entry commits with one of the leader's term": ([
        leading(3, 0, log(1, 2, 3), n2=(4, 0), n3=(4, 0)), leading(3, 3, log(1, 2, 3), n2=(4, 3), n3=(3, 2)),
    ], set()),
    "a commit with the quorum the leader counts": ([leading(2, 0, log(1, 2), n2=(3, 0), n3=(3, 0)),
                                                    leading(2, 2, log(1, 2), n2=(3, 2), n3=(3, 0))], set()),
    "progress not exposed: nothing judged": ([
        leading(2, 2, log(1, 2), n2=(3, 2), n3=(3, 2)),
        view("n1", L, 2, "n1", "n1", 2, log(1, 2)), view("n1", L, 2, "n1", "n1", 2, log(1, 2, 2)),
        view("n1", L, 2, "n1", "n1", 3, log(1, 2, 2)),
    ], set()),
    "a commit in the step the leader was elected in is not judged": ([
        view("n1", C, 2, "n1", None, 0, log(1, 2)), leading(2, 2, log(1, 2), n2=(3, 0), n3=(3, 0)),
    ], set()),
    "a compacted prefix is not judged": ([
        view("n1", L, 1, "n1", "n1", 2, log(1, 1)), view("n2", L, 2, "n2", "n2", 3, log(1, 2, start=2)),
    ], set()),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_invariant_table(name):
    history, expected = ROWS[name]
    assert {v.property for v in judge(history)} == expected


def test_every_invariant_has_a_row_that_violates_it():
    violated = set().union(*(expected for _, expected in ROWS.values()))
    assert violated == set(inv.INVARIANTS) - {"liveness"}


@st.composite
def matching_logs(draw):
    """Two logs that share a prefix and then may diverge only in later terms."""
    prefix = sorted(draw(st.lists(st.integers(0, 3), max_size=5)))
    top = prefix[-1] if prefix else 0
    a = prefix + sorted(draw(st.lists(st.integers(top + 1, top + 2), max_size=3)))
    b = prefix + sorted(draw(st.lists(st.integers(top + 3, top + 4), max_size=3)))
    return log(*a), log(*b)


@given(matching_logs())
def test_logs_that_diverge_only_after_a_common_prefix_match(logs):
    a, b = logs
    assert inv.check_log_matching(view("n1", entries=a), view("n2", entries=b)) is None


@given(st.lists(st.integers(0, 3), min_size=1, max_size=6), st.data())
def test_rewriting_the_past_under_a_common_entry_breaks_log_matching(terms, data):
    terms = sorted(terms)
    i = data.draw(st.integers(0, len(terms) - 1))
    a = log(*terms)
    b = tuple(RaftEntry(e.index, e.term, "other" if k == i else e.body) for k, e in enumerate(a))
    if i == len(terms) - 1:  # the last entry differs: no common entry above it, nothing to judge
        b = b + (RaftEntry(len(terms) + 1, terms[-1] + 1, "tail"),)
        a = a + (RaftEntry(len(terms) + 1, terms[-1] + 1, "tail"),)
    found = inv.check_log_matching(view("n1", entries=a), view("n2", entries=b))
    assert found is not None and found.property == "log-matching"


@st.composite
def histories(draw):
    """Observations of three nodes whose logs may be compacted (start later), diverge and
    commit anywhere: what the committed-range shortcut must judge like the general path."""
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        node = draw(st.sampled_from(("n1", "n2", "n3")))
        if draw(st.integers(0, 5)) == 0:
            steps.append((CRASH, node))
            continue
        start = draw(st.integers(1, 4))
        terms = sorted(draw(st.lists(st.integers(1, 3), max_size=6)))
        bodies = {start + i: draw(st.sampled_from(("a", "b"))) for i in range(len(terms))}
        role = draw(st.sampled_from((F, L)))
        term = draw(st.integers(1, 4))
        steps.append(view(node, role, term, None, node if role is L else None,
                          draw(st.integers(-1, start + len(terms))), log(*terms, start=start, bodies=bodies)))
    return steps


@given(histories())
def test_the_committed_range_shortcut_judges_like_the_general_path(history):
    general = inv.RaftHistory(committed_interval=False)  # never takes the shortcut
    assert judge(history) == judge(history, general)


def test_dledger_is_judged_by_the_shared_invariants_through_its_raft_view():
    entries = (Entry(0, 1, "a"), Entry(1, 1, "b"))
    first = DLedgerView("n1", Role.LEADER, 1, "n1", "n1", 1, 1, 1, 1, entries)
    second = DLedgerView("n2", Role.LEADER, 2, "n2", "n2", 0, 1, 0, 0, entries[:1])
    h = dledger.DLedgerHistory()
    assert dledger.check_node(h, first) == []
    dledger.record(h, first)
    (found,) = dledger.check_node(h, second)
    assert found.property == "leader-completeness"
    shared = {f.__name__[len("check_"):].replace("_", "-") for f in inv.SHARED_CHECKS}
    assert set(inv.INVARIANTS) & set(dledger.INVARIANTS) == shared | {
        "log-matching", "log-terms", "restart-durable", "liveness"}


def test_a_dledger_leaders_progress_is_judged_as_raft_progress():
    entries = (Entry(0, 1, "a"), Entry(1, 2, "b"))

    def leader(commit, **progress):  # peer=(writeIndex, water mark)
        marks = tuple(PeerProgress(p, w, m) for p, (w, m) in sorted(progress.items()))
        return DLedgerView("n1", Role.LEADER, 2, "n1", "n1", 1, 2, commit, commit, entries, marks)

    # writeIndex and the water mark carry over as nextIndex and matchIndex
    assert raft_view(leader(-1, n2=(2, 1))).progress == (FollowerProgress("n2", 2, 1),)
    assert raft_view(attrs.evolve(leader(-1), progress=None)).progress is None
    h = dledger.DLedgerHistory()
    steps = [leader(-1, n2=(2, -1), n3=(2, -1)), leader(0, n2=(2, 1), n3=(1, 0))]
    found = []
    for v in steps:
        found += dledger.check_node(h, v)
        dledger.record(h, v)
    assert [f.property for f in found] == ["leader-commit-rule"]  # entry 0 is of term 1, the leader's is 2
    assert "entry 0 is of term 1" in found[0].message
    assert dledger.known_profile_difference("leader-commit-rule", PROFILES["dledger-0.2"])
    assert not dledger.known_profile_difference("leader-commit-rule", PROFILES["dledger-0.4"])


def test_releases_before_0_3_2_may_lose_liveness():
    """release-0.1's elector can livelock (tests/scenarios/dledger/
    livelock-0.1-stale-candidates-push-back-up-to-date-nodes.rmqha); 0.2.0 fixed that, but
    until 0.3.2 a leader with a heartbeat quorum ignores a higher term (#247), which can keep
    a node a candidate for ever (tests/scenarios/dledger/
    stuck-candidate-0.2-leader-with-quorum-ignores-its-higher-term.rmqha)."""
    assert dledger.known_profile_difference("liveness", PROFILES["dledger-0.1"])
    assert dledger.known_profile_difference("liveness", PROFILES["dledger-0.2"])
    assert not dledger.known_profile_difference("liveness", PROFILES["dledger-0.4"])
    assert [dledger.leader_ignores_higher_term_with_quorum(PROFILES[p])
            for p in ("dledger-0.1", "dledger-0.2", "dledger-0.4")] == [True, True, False]


DLEDGER_PROGRESS_ROWS = {
    # name: (n2's log end as last observed, or None: not observed; n2's (writeIndex, water mark)
    #        in the leader's two observations; the property reported)
    "a follower that dropped an acknowledged entry: writeIndex at the water mark": (-1, (2, 0), (0, 0), set()),
    "a follower that dropped an acknowledged entry: the next compare matches lower": (-1, (2, 0), (0, -1), set()),
    "a follower that holds what was counted: writeIndex at the water mark": (1, (2, 0), (0, 0),
                                                                             {"follower-progress"}),
    "a follower that holds what was counted: the water mark goes back": (1, (2, 1), (2, 0), {"follower-progress"}),
    "a follower never observed: judged as Raft's": (None, (2, 1), (1, 1), {"follower-progress"}),
}


@pytest.mark.parametrize("name", sorted(DLEDGER_PROGRESS_ROWS))
def test_dledger_progress_is_not_judged_for_a_follower_that_dropped_acknowledged_entries(name):
    """A DLedger follower acts on a duplicated TRUNCATE after acknowledging later entries
    (upstream's handleDoTruncate), so its leader's progress for it is then stale: judged
    only while the follower holds what its leader counted. Raft's check stays strict."""
    follower_end, first, second, expected = DLEDGER_PROGRESS_ROWS[name]
    entries = (Entry(0, 2, "a"), Entry(1, 2, "b"))

    def leader(n2):
        return DLedgerView("n1", Role.LEADER, 2, "n1", "n1", 1, 2, -1, -1, entries,
                           (PeerProgress("n2", *n2), PeerProgress("n3", 2, 1)))

    steps = [leader(first)]
    if follower_end is not None:
        steps.append(DLedgerView("n2", Role.FOLLOWER, 2, "n1", "n1", follower_end, 2 if follower_end >= 0 else -1,
                                 -1, -1, entries[:follower_end + 1]))
    steps.append(leader(second))
    h, raft_h, found, raft_found = dledger.DLedgerHistory(), inv.RaftHistory(), [], []
    for v in steps:
        found += dledger.check_node(h, v)
        dledger.record(h, v)
        raft_found += inv.check_node(raft_h, raft_view(v))
        inv.record(raft_h, raft_view(v))
    assert {f.property for f in found} == expected
    assert "follower-progress" in {f.property for f in raft_found}  # Raft's leader guards its progress


def test_stable_leader_needs_every_live_node_to_follow_it():
    lead = view("n1", L, 2, "n1", "n1")
    assert inv.stable_leader([lead, view("n2", F, 2, "n1", "n1"), None]) == "n1"
    assert inv.stable_leader([lead, view("n2", F, 1, None, "n1")]) is None  # an older term
    assert inv.stable_leader([lead, view("n2", C, 2, "n2")]) is None
    assert inv.stable_leader([lead, view("n2", L, 3, "n2", "n2")]) is None


# ------------------------------------------------------------------ real counterexamples

COUNTEREXAMPLES = sorted(SCRIPTS.glob("*.rmqha"))


def test_every_invariant_is_violated_by_a_real_implementation_in_a_script():
    covered = set()
    for path in COUNTEREXAMPLES:
        script = read_script(str(path))
        covered |= {s.args[1] for s in script.steps if s.op == "expect" and s.args[:1] == ("violation",)}
    assert covered == set(get_scenario("raft").properties) == set(inv.INVARIANTS)
