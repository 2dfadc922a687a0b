"""``no_masterless_healthy_set``: a set whose nodes have all been up on a clean network for
the bound has a master, unless the rules leave it none (spec/invariants/controller.py).
Every outcome by name, then a property: the predicate says "violation" exactly when some
live broker holds an id the elect policy may choose, or the set is unknown while a live
broker has no id yet, or no controller is active."""
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller_cases import NAME, metadata
from spec.controller.records import DEFAULT_CONFIG, ControllerMetadata
from spec.invariants.controller import no_masterless_healthy_set



def unclean_config():
    return attrs.evolve(DEFAULT_CONFIG, enable_elect_unclean_master=True)


CASES = [
    # (name, metadata, live brokers' ids, unclean, violated?)
    ("no active controller", None, [1, 2], False, True),
    ("unknown set, a live broker without an id (never registered: it should apply for one)",
     ControllerMetadata({}), [None, None, None], False, True),
    ("unknown set, one broker without an id among brokers with ids", ControllerMetadata({}), [1, None], False, True),
    ("unknown set, every live broker holds an id (after an admin clean: they only register, refused)",
     ControllerMetadata({}), [4, 1, 3], False, False),
    ("known set, an in-sync member alive", metadata(master=None, members={1, 2}), [1, 2, 3], False, True),
    ("known set, its only in-sync member replaced by a machine with a new id",
     metadata(ids=(1, 2, 3), master=None, members={1}), [4, 2, 3], False, False),
    ("the same with unclean election on: every registered replica is electable",
     metadata(ids=(1, 2, 3), master=None, members={1}), [4, 2, 3], True, True),
    ("known set before a first SyncStateSet: every registered replica is electable",
     metadata(ids=(1, 2), master=None, members=set(), master_epoch=0, ss_epoch=0), [1, 2], False, True),
    ("an in-sync id held by a live broker that the set no longer registers is not electable",
     metadata(ids=(2, 3), master=None, members={1}), [1, 5], False, False),
    ("ids >= 16: an in-sync member 17 alive", metadata(ids=(1, 17), master=None, members={17}), [17, 1], False, True),
]


@pytest.mark.parametrize("name, meta, held, unclean, violated", CASES, ids=[c[0] for c in CASES])
def test_each_outcome(name, meta, held, unclean, violated):
    config = unclean_config() if unclean else DEFAULT_CONFIG
    found = no_masterless_healthy_set(NAME, meta, held, config)
    assert bool(found) == violated, found
    assert all(v.invariant == "no_masterless_healthy_set" and v.subject == NAME for v in found)


@given(ids=st.sets(st.integers(1, 40), min_size=1, max_size=5), data=st.data())
def test_violation_exactly_when_an_electable_broker_lives(ids, data):
    ids = sorted(ids)
    members = data.draw(st.sets(st.sampled_from(ids)))
    held = data.draw(st.lists(st.one_of(st.none(), st.integers(1, 40)), min_size=1, max_size=4))
    unclean = data.draw(st.booleans())
    meta = metadata(ids=ids, master=None, members=members)
    found = no_masterless_healthy_set(NAME, meta, held, unclean_config() if unclean else DEFAULT_CONFIG)
    pool = set(ids) if unclean or not members else members
    assert bool(found) == any(b in pool for b in held if b is not None)


@pytest.mark.parametrize("name, holder_epoch, violated", [
    # the recorded master 2 (masterEpoch 4) is held by a live broker whose own masterEpoch is:
    ("above the recorded one (kept from before an admin clean restarted the set): it ignores "
     "the controller's role changes as stale", 5, False),
    ("the recorded one: it should act as master", 4, True),
    ("below the recorded one: it should take the newer role", 3, True),
])
def test_a_recorded_master_held_with_a_higher_epoch(name, holder_epoch, violated):
    meta = metadata(ids=(1, 2, 3), master=2, members={1, 2}, master_epoch=4, ss_epoch=6)
    found = no_masterless_healthy_set(NAME, meta, [2, 1, 3], DEFAULT_CONFIG, {2: holder_epoch, 1: 4, 3: 4})
    assert bool(found) == violated, found


def test_a_slave_with_a_higher_epoch_does_not_exempt_the_set():
    """Only the recorded master's holder: a slave that kept a higher epoch leaves the set
    judged (its master is another broker, which should act)."""
    meta = metadata(ids=(1, 2, 3), master=2, members={1, 2}, master_epoch=4, ss_epoch=6)
    assert no_masterless_healthy_set(NAME, meta, [2, 1, 3], DEFAULT_CONFIG, {2: 4, 1: 9, 3: 9})
