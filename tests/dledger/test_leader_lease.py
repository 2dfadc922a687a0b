"""leader-lease (spec/invariants/dledger.py): a table naming each outcome of the check,
and the two messages a user reads (a lease that ran out, a lease that never began)."""
import pytest

from spec.dledger.profiles import DEFAULT_TIMING
from spec.dledger.records import DLedgerView, Role
from spec.invariants.dledger import check_leader_lease, lease_bound_ms, lease_deadline

BOUND = lease_bound_ms(DEFAULT_TIMING)


def view(role=Role.LEADER, node="n1"):
    return DLedgerView(node, role, 3, node, node if role is Role.LEADER else None, -1, -1, -1, -1, ())


PEERS3 = ("n1", "n2", "n3")
PEERS4 = ("n1", "n2", "n3", "n4")


@pytest.mark.parametrize("name, v, peers, heard, now, outcome", [
    ("a follower has no lease", view(Role.FOLLOWER), PEERS3, {}, 10**6, None),
    ("a candidate has no lease", view(Role.CANDIDATE), PEERS3, {}, 10**6, None),
    ("a group of one has no lease", view(), ("n1",), {}, 10**6, None),
    ("heard from a quorum within the bound", view(), PEERS3, {"n2": 1000}, 1000 + BOUND - 1, None),
    ("at the bound exactly", view(), PEERS3, {"n2": 1000}, 1000 + BOUND, None),
    ("one past the bound", view(), PEERS3, {"n2": 1000}, 1000 + BOUND + 1, "ran out"),
    # 4 nodes: a quorum is 3, so the second most recent peer counts (the first is not enough)
    ("4 nodes: one recent peer is no quorum", view(), PEERS4, {"n2": 9000, "n3": 1000}, 1000 + BOUND + 1, "ran out"),
    ("4 nodes: two recent peers are", view(), PEERS4, {"n2": 9000, "n3": 8000}, 1000 + BOUND + 1, None),
    ("never heard from a quorum", view(), PEERS3, {}, 54, "never began"),
    ("4 nodes: one peer heard is not a quorum", view(), PEERS4, {"n2": 40}, 54, "never began"),
])
def test_leader_lease_outcomes(name, v, peers, heard, now, outcome):
    found = check_leader_lease(v, peers, heard, now, DEFAULT_TIMING)
    if outcome is None:
        assert found is None, name
        return
    assert found is not None and found.property == "leader-lease", name
    assert found.node == "n1"
    if outcome == "ran out":
        assert found.message == (f"n1 still leads term 3 at t={now}; it last heard from a quorum at t=1000 "
                                 f"(lease {DEFAULT_TIMING.lease_ms} ms, judged {BOUND} ms after)")
    else:
        # no time is named that the run never had: the lease never began
        assert found.message == (f"n1 leads term 3 at t={now} without having heard from a quorum since it "
                                 f"started: its lease (lease {DEFAULT_TIMING.lease_ms} ms) never began")


def test_the_deadline_is_the_bound_after_the_quorums_last_word():
    assert lease_deadline(view(), PEERS3, {"n2": 500, "n3": 700}, DEFAULT_TIMING) == 700 + BOUND
    assert lease_deadline(view(), PEERS4, {"n2": 500, "n3": 700, "n4": 100}, DEFAULT_TIMING) == 500 + BOUND
    assert lease_deadline(view(Role.FOLLOWER), PEERS3, {"n2": 500}, DEFAULT_TIMING) is None
