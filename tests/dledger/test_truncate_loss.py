"""Committed entries lost to a late TRUNCATE (spec/invariants/dledger.py, docs/dledger.md):
which drops the monitor remembers, and which leader-completeness and committed-prefix
violations they turn into the finding ``committed_lost_to_truncate``: a table per outcome."""
import attrs
import pytest

from spec.dledger.records import DLedgerView, Entry, PeerProgress, PushEntryRequest, PushType, Role
from spec.invariants import Violation
from spec.invariants import dledger as inv

M = [Entry(i, 1, f"m{i + 1}") for i in range(5)]  # m1..m5 of term 1


def view(node, role, log, term=1, commit=-1):
    leader = "n1" if role is not Role.CANDIDATE else None
    return DLedgerView(node, role, term, "n1", leader, len(log) - 1, log[-1].term if log else -1,
                       min(commit, len(log) - 1), min(commit, len(log) - 1), tuple(log))


def push(kind, term=1):
    return PushEntryRequest(term, "n1", kind, -1)


def committed_history():
    """n1 led term 1 and committed m1..m5 (index 0..4)."""
    h = inv.DLedgerHistory()
    leader = view("n1", Role.LEADER, M, commit=4)
    assert inv.check_node(h, leader) == []
    inv.record(h, leader)
    return h


DIVERGENT = [Entry(3, 0, "old"), Entry(4, 0, "old2")]  # a tail the leader does not hold
LEADER = view("n1", Role.LEADER, M, commit=4)


@pytest.mark.parametrize("name, request_, before, after, leader, remembered", [
    ("a TRUNCATE dropping m4, m5, which the leader holds", push(PushType.TRUNCATE), M, M[:3], LEADER, {3, 4}),
    # Raft's repair of a divergent log (figure 8 under G1 loses a committed entry so: a violation)
    ("a TRUNCATE dropping a tail the leader does not hold", push(PushType.TRUNCATE), M[:3] + DIVERGENT, M[:3],
     LEADER, set()),
    ("the leader not yet seen", push(PushType.TRUNCATE), M, M[:3], None, set()),
    ("a TRUNCATE that drops nothing", push(PushType.TRUNCATE), M[:3], M[:3], LEADER, set()),
    ("a TRUNCATE of another term (refused by the spec)", push(PushType.TRUNCATE, term=0), M, M[:3], LEADER, set()),
    ("a COMPARE", push(PushType.COMPARE), M, M[:3], LEADER, set()),
    ("an APPEND", push(PushType.APPEND), M[:3], M, LEADER, set()),
])
def test_note_truncate_outcomes(name, request_, before, after, leader, remembered):
    h = inv.DLedgerHistory()
    inv.note_truncate(h, view("n2", Role.FOLLOWER, before), view("n2", Role.FOLLOWER, after), request_, leader)
    assert {i for i, _, _ in h.truncated} == remembered, name


@pytest.mark.parametrize("name, dropped, new_leader_log, violation, lost", [
    # m4 and m5 were dropped on a TRUNCATE: the leader lacking m4 is the protocol's own loss
    ("leader-completeness about a dropped entry", M[3:], M[:3], "leader-completeness", 3),
    # the leader lacks m4, but no follower dropped m4 on a TRUNCATE (only m5): a violation
    ("leader-completeness about an entry no TRUNCATE dropped", M[4:], M[:3], "leader-completeness", None),
    ("leader-completeness with no TRUNCATE at all", [], M[:3], "leader-completeness", None),
    ("another property is never excused", M[3:], M[:3], "election-safety", None),
])
def test_lost_to_truncate_leader_completeness(name, dropped, new_leader_log, violation, lost):
    h = committed_history()
    if dropped:
        inv.note_truncate(h, view("n2", Role.FOLLOWER, M), view("n2", Role.FOLLOWER, M[:len(M) - len(dropped)]),
                          push(PushType.TRUNCATE), LEADER)
    leader = view("n3", Role.LEADER, new_leader_log, term=2)
    found = {v.property for v in inv.check_node(h, leader)}
    assert "leader-completeness" in found
    v = Violation(violation, "...", "n3")
    assert inv.lost_to_truncate(h, leader, v) == lost, name


def test_lost_to_truncate_committed_prefix():
    """A node that committed another entry at an index whose committed entry followers
    dropped on a TRUNCATE: the finding; at an index no TRUNCATE dropped: a violation."""
    h = committed_history()
    inv.note_truncate(h, view("n2", Role.FOLLOWER, M), view("n2", Role.FOLLOWER, M[:4]), push(PushType.TRUNCATE), LEADER)
    other = view("n3", Role.FOLLOWER, M[:4] + [Entry(4, 2, "x")], term=2, commit=4)
    (violation,) = [v for v in inv.check_node(h, other) if v.property == "committed-prefix"]
    assert inv.lost_to_truncate(h, other, violation) == 4
    worse = view("n4", Role.FOLLOWER, M[:3] + [Entry(3, 2, "y")], term=2, commit=3)
    (violation,) = [v for v in inv.check_node(h, worse) if v.property == "committed-prefix"]
    assert inv.lost_to_truncate(h, worse, violation) is None


# ------------------------------------------------------------------ follower-progress after a drop

@pytest.mark.parametrize("name, drops, last_log, term, index, excused", [
    ("no drop, the follower holds the index", [], M, 1, 4, False),
    ("its last log ends below the index", [], M[:3], 1, 4, True),
    ("its last log ends at the index", [], M[:4], 1, 3, False),
    # search seed 5980 (from 5,000): dropped m4, m5 on a TRUNCATE, then took them back from duplicated APPENDs
    ("dropped at 3, refilled: index 4", [3], M, 1, 4, True),
    ("dropped at 3, refilled: index 3 (the first dropped)", [3], M, 1, 3, True),
    ("dropped at 3, refilled: index 2, below every dropped entry", [3], M, 1, 2, False),
    ("dropped in another term", [3], M, 2, 4, False),
    ("two drops: the lower one counts", [4, 2], M, 1, 2, True),
])
def test_dropped_counted_outcomes(name, drops, last_log, term, index, excused):
    h = inv.DLedgerHistory()
    for cut in drops:
        inv.note_truncate(h, view("n2", Role.FOLLOWER, M), view("n2", Role.FOLLOWER, M[:cut]),
                          push(PushType.TRUNCATE), LEADER)
    inv.record(h, view("n2", Role.FOLLOWER, last_log))
    assert inv.dropped_counted(h, "n2", term, index) is excused, name


def _leader_counting(match):
    return attrs.evolve(LEADER, progress=(PeerProgress("n2", match + 1, match),))


@pytest.mark.parametrize("name, drop, excused", [
    ("the follower dropped what was counted, and holds it again", True, True),
    ("the follower never dropped it: Raft's rule", False, False),
])
def test_follower_progress_after_a_refilled_drop(name, drop, excused):
    """A leader's progress for a follower going back from 4 to 2 while the follower's log
    ends at 4: excused only when a TRUNCATE of the term made it drop what was counted."""
    h = inv.DLedgerHistory()
    for v in (_leader_counting(4), view("n2", Role.FOLLOWER, M)):
        assert inv.check_node(h, v) == []
        inv.record(h, v)
    if drop:
        inv.note_truncate(h, view("n2", Role.FOLLOWER, M), view("n2", Role.FOLLOWER, M[:3]),
                          push(PushType.TRUNCATE), LEADER)
    inv.record(h, view("n2", Role.FOLLOWER, M))  # the entries taken back from duplicated APPENDs
    found = [v.property for v in inv.check_node(h, _leader_counting(2))]
    assert ("follower-progress" not in found) is excused, name
