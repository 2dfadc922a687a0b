"""``slave_catches_up`` (spec/invariants/controller.py): on a healthy set, once the master's
log and a broker's own state have both stood still for the bound, that broker is the
master's slave in its masterEpoch and holds its log. Every outcome by name, a property over
logs, and the mutant only this property catches."""
import pytest
from hypothesis import given, strategies as st

from tests.liveness_cases import fails_only
from spec.broker.messages import BrokerNodeView
from spec.broker.records import BrokerRoleState, LogEntry, Role
from spec.invariants.controller import slave_catches_up
from spec.truncation.epoch_file import EpochEntry, EpochFile

EPOCHS = EpochFile((EpochEntry(3, 0),))
MASTER_STATE = BrokerRoleState(1, Role.MASTER, 3, 1, "b1", fenced=False, registered=True)


def entries(*ids):
    return tuple(LogEntry(i, 10 * k, 10 * k + 10) for k, i in enumerate(ids))


def view(node, state, log):
    end = log[-1].end if log else 0
    return BrokerNodeView(node, state, None, end, end, 0, 0, EPOCHS, log)


def slave_state(master_id=1, epoch=3, role=Role.SLAVE, broker_id=2):
    return BrokerRoleState(broker_id, role, epoch, master_id, "b1", fenced=True, registered=True)


MASTER = view("b1", MASTER_STATE, entries("m1", "m2"))

CASES = [
    ("caught up: the master's slave with its log", view("b2", slave_state(), entries("m1", "m2")), False),
    ("behind", view("b2", slave_state(), entries("m1")), True),
    ("never replicated", view("b2", slave_state(), ()), True),
    ("as long, another message", view("b2", slave_state(), entries("m1", "x")), True),
    ("ahead of the master", view("b2", slave_state(), entries("m1", "m2", "m3")), True),
    ("the log, but a slave of an older masterEpoch", view("b2", slave_state(epoch=2), entries("m1", "m2")), True),
    ("the log, but following another master id", view("b2", slave_state(master_id=17), entries("m1", "m2")), True),
    ("no role yet (never registered)", view("b2", BrokerRoleState(None), ()), True),
    ("a second master of an older epoch, same log",
     view("b2", BrokerRoleState(2, Role.MASTER, 2, 2, "b2", fenced=False), entries("m1", "m2")), True),
]


@pytest.mark.parametrize("name, slave, violated", CASES, ids=[c[0] for c in CASES])
def test_each_outcome(name, slave, violated):
    found = slave_catches_up(slave, MASTER, 10_000)
    assert bool(found) == violated, found
    assert all(v.invariant == "slave_catches_up" and v.subject == "b2" for v in found)


LEARNS = 20_000  # the harness's: a metadata poll per controller and one more (3 controllers, 5 s)


@pytest.mark.parametrize("name, slave, quiet_ms, violated", [
    ("the log, an older masterEpoch, one ms before the time to learn its role",
     view("b2", slave_state(epoch=2), entries("m1", "m2")), LEARNS - 1, False),
    ("the same at the time to learn it", view("b2", slave_state(epoch=2), entries("m1", "m2")), LEARNS, True),
    ("the same one ms after", view("b2", slave_state(epoch=2), entries("m1", "m2")), LEARNS + 1, True),
    ("the log, following another master id, before the time",
     view("b2", slave_state(master_id=17), entries("m1", "m2")), LEARNS - 1, False),
    ("behind: the time to learn a role is no time to catch up",
     view("b2", slave_state(epoch=2), entries("m1")), LEARNS - 1, True),
    ("not a slave: a second master with the log", view("b2", BrokerRoleState(2, Role.MASTER, 2, 2, "b2", fenced=False),
                                                        entries("m1", "m2")), LEARNS - 1, True),
])
def test_a_slave_with_the_log_is_given_the_time_to_learn_its_role(name, slave, quiet_ms, violated):
    """Found by the reference (seed 117 of a controller search): after a partition healed,
    a slave holding the whole log asked two controllers that were not active, 5 s apart,
    and kept masterEpoch 1 for 12 s while the master was in 5."""
    assert bool(slave_catches_up(slave, MASTER, quiet_ms, LEARNS)) == violated


@given(mine=st.lists(st.sampled_from("abc"), max_size=4), theirs=st.lists(st.sampled_from("abc"), max_size=4))
def test_a_following_slave_is_judged_by_its_log_alone(mine, theirs):
    master = view("b1", MASTER_STATE, entries(*theirs))
    slave = view("b2", slave_state(), entries(*mine))
    assert bool(slave_catches_up(slave, master, 10_000)) == (mine != theirs)


def test_the_mutant_that_stops_replicating_is_caught_by_this_property_alone():
    """``batch-within-confirm-offset`` sends nothing unsafe: its set just stops replicating.
    The first generated run that fails it fails this property and no other."""
    fails_only("slave_catches_up", "controller", "mutant:batch-within-confirm-offset", 8)
