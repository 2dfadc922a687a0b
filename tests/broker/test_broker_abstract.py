"""spec/broker/abstract.py: each component of a broker's abstract state by a table naming
every value, the set shapes and master liveness, and the universe the report checks."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from spec.broker.abstract import (
    LOG_RELATIONS,
    BrokerState,
    broker_state,
    every_broker_state,
    log_relation,
    step_state,
)
from spec.broker.records import BrokerRoleState, LogEntry, Role
from spec.controller.records import SyncStateInfo


def log(*ids: str) -> tuple[LogEntry, ...]:
    return tuple(LogEntry(m, 10 * i, 10 * i + 10, queue_offset=i) for i, m in enumerate(ids))


def broker(broker_id=1, role=Role.SLAVE, epoch=1, fenced=False, entries=()) -> BrokerState:
    return BrokerState(BrokerRoleState(broker_id, role, epoch, fenced=fenced), tuple(entries))


SYNC = SyncStateInfo(master_broker_id=1, master_epoch=2, sync_state_set=frozenset({1, 2}),
                     sync_state_set_epoch=3)

LOG_ROWS = [
    ("same", log("a", "b"), log("a", "b")),
    ("prefix", log("a"), log("a", "b")),
    ("longer", log("a", "b", "c"), log("a", "b")),
    ("fork", log("a", "x"), log("a", "b")),
]


@pytest.mark.parametrize("expected,mine,reference", LOG_ROWS)
def test_log_relation(expected, mine, reference):
    assert log_relation(mine, reference) == expected


def test_every_log_relation_has_a_row():
    assert {row[0] for row in LOG_ROWS} == set(LOG_RELATIONS)


MASTER = broker(1, Role.MASTER, 2, entries=log("a", "b"))
BROKER_ROWS = [
    # (expected, the broker, the controller's SyncStateInfo)
    ("Mw+=/same", MASTER, SYNC),
    ("Sw+</prefix", broker(2, Role.SLAVE, 1, entries=log("a")), SYNC),
    ("Nf.>/fork", broker(3, Role.NONE, 5, fenced=True, entries=log("x")), SYNC),  # a stale controller's epoch
    ("Mf??/longer", broker(1, Role.MASTER, 2, fenced=True, entries=log("a", "b", "c")), None),
]


@pytest.mark.parametrize("expected,me,sync", BROKER_ROWS)
def test_broker_state(expected, me, sync):
    assert broker_state(me, sync, MASTER) == expected
    assert expected in every_broker_state()


def test_set_shapes_and_master_liveness():
    live = {"b1": MASTER, "b2": broker(2, entries=log("a")), "b3": None}
    state = step_state("b2", "tick", live, SYNC, 1, "clean")
    assert state == "Sw+</prefix|tick|set=all|master=live|active=1|clean"
    only_master = SyncStateInfo(1, 2, frozenset({1}), 4)
    assert "|set=master|" in step_state("b1", "tick", live, only_master, 1, "cut")
    some = SyncStateInfo(1, 2, frozenset({1, 3}), 4)
    assert "|set=some|" in step_state("b1", "tick", live, some, 2, "lossy")
    dead_master = {"b1": None, "b2": broker(2, entries=log("a"))}
    state = step_state("c1", "AlterSyncStateSetRequest", dead_master, SYNC, 0, "clean")
    assert state == "ctl|AlterSyncStateSetRequest|set=all|master=down|active=0|clean"
    assert "|set=none|master=none|" in step_state("b2", "tick", dead_master, None, 1, "clean")
    assert step_state("b1", "tick", dead_master, SYNC, 1, "clean") is None  # a down broker takes no step
    assert step_state("c1", "tick", {"b1": None}, SYNC, 1, "clean") is None  # nothing live to relate to


roles = st.sampled_from(list(Role))
brokers = st.builds(broker, broker_id=st.integers(1, 4), role=roles, epoch=st.integers(0, 3), fenced=st.booleans(),
                    entries=st.lists(st.sampled_from("abx"), max_size=3).map(lambda ids: log(*ids)))
syncs = st.none() | st.builds(lambda m, e, s: SyncStateInfo(m, e, frozenset(s), 1),
                              st.none() | st.integers(1, 4), st.integers(0, 3), st.sets(st.integers(1, 4), max_size=3))


@given(st.dictionaries(st.sampled_from(["b1", "b2", "b3"]), st.none() | brokers, min_size=1), syncs)
def test_every_step_state_is_in_the_universe(group, sync):
    universe = set(every_broker_state())
    for name, b in group.items():
        state = step_state(name, "tick", group, sync, 1, "clean")
        if b is None or state is None:
            continue
        assert state.split("|")[0] in universe
