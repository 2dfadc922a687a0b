"""spec/classic/abstract.py: each component of a classic broker's abstract state by a table
naming every value, the reference log, the universe the report checks; and the classic
search (conformance/scenarios/classic.py ``mutate_classic_script``): what an edit keeps,
that a mutated run replays from its lineage, and that no edit wipes a master."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from conformance.campaign import plan_configs, run_one, script_for
from conformance.faults import MESSAGE_FAULT_MIXES
from conformance.scenarios.classic import HEALING_END, _masters_never_wiped, mutate_classic_script
from conformance.scenarios.registry import get_scenario
from conformance.script import Step
from conformance.search import searched
from spec.classic.abstract import (
    LOG_RELATIONS,
    MASTER_LINKS,
    SLAVE_LINKS,
    broker_state,
    every_broker_state,
    group_state,
    link,
    log_relation,
    reference_of,
    state_of_step,
)
from spec.classic.records import BrokerRole
from spec.classic.wire import ClassicView, ClientConnectionView, MasterConnectionView


def view(node="b1", role=BrokerRole.SLAVE, data=b"abcd", min_offset=0, flushed=None, connections=(), client=None,
         master="b1") -> ClassicView:
    return ClassicView(node, role, None if role.is_master else master, min_offset, min_offset + len(data),
                       min_offset + len(data) if flushed is None else flushed, data, 0, tuple(connections), client)


REFERENCE = view("b1", BrokerRole.SYNC_MASTER, b"abcdef")
CLEANED = view("b1", BrokerRole.SYNC_MASTER, b"xyz", min_offset=4)  # its files before offset 4 deleted

LOG_ROWS = [
    # (expected, mine, the reference)
    ("same", view(data=b"abcdef"), REFERENCE),
    ("prefix", view(data=b"abc"), REFERENCE),
    ("longer", view(data=b"abcdefgh"), REFERENCE),
    ("fork", view(data=b"abXd"), REFERENCE),
    ("fork", view(data=b"Xdefgh", min_offset=2), REFERENCE),  # compared where both hold bytes
    ("prefix", view(data=b"cd", min_offset=2), REFERENCE),  # its first files cleaned: the rest agrees
    ("gap", view(data=b"ab"), CLEANED),  # it ends before the reference's first offset
    ("prefix", view(data=b"abcd"), CLEANED),  # it ends where the reference begins: nothing to compare
]


@pytest.mark.parametrize("expected,mine,reference", LOG_ROWS)
def test_log_relation(expected, mine, reference):
    assert log_relation(mine, reference) == expected


def test_every_log_relation_has_a_row():
    assert {row[0] for row in LOG_ROWS} == set(LOG_RELATIONS)


def conn(ack: int) -> MasterConnectionView:
    return MasterConnectionView("c", "b2", ack, ack, ack)


LINK_ROWS = [
    ("none", view(role=BrokerRole.SYNC_MASTER)),
    ("lag", view(role=BrokerRole.SYNC_MASTER, connections=(conn(4), conn(2)))),
    ("acked", view(role=BrokerRole.ASYNC_MASTER, connections=(conn(4),))),
    ("-", view()),
    ("h", view(client=ClientConnectionView("c", False, -1))),
    ("=", view(client=ClientConnectionView("c", True, 4))),
    ("<", view(client=ClientConnectionView("c", True, 3))),
]


@pytest.mark.parametrize("expected,me", LINK_ROWS)
def test_link(expected, me):
    assert link(me) == expected


def test_every_link_has_a_row():
    assert {row[0] for row in LINK_ROWS} == set(MASTER_LINKS) | set(SLAVE_LINKS)


BROKER_ROWS = [
    ("sd/none/same", REFERENCE),
    ("au/lag/prefix", view(role=BrokerRole.ASYNC_MASTER, data=b"abc", flushed=1, connections=(conn(0),))),
    ("Sd/=/longer", view(data=b"abcdefg", client=ClientConnectionView("c", True, 7))),
    ("Su/h/fork", view(data=b"abX", flushed=2, client=ClientConnectionView("c", False, -1))),
]


@pytest.mark.parametrize("expected,me", BROKER_ROWS)
def test_broker_state(expected, me):
    assert broker_state(me, REFERENCE) == expected
    assert expected in every_broker_state()


def test_the_reference_log():
    slave = view("b2", data=b"abcdefgh")
    old_master = view("b3", BrokerRole.ASYNC_MASTER, b"abcdefg")
    assert reference_of({"b1": REFERENCE, "b2": slave, "b3": old_master}, "b1") is REFERENCE  # the configured master
    # the configured master down (or not yet acting as one): the longest live master's log
    assert reference_of({"b1": None, "b2": slave, "b3": old_master}, "b1") is old_master
    assert reference_of({"b1": view("b1", data=b"a"), "b2": slave}, "b1") is slave  # no master: the longest
    assert reference_of({"b1": None, "b2": None}, "b1") is None


def test_a_step_state_and_a_down_broker():
    states = group_state({"b1": REFERENCE, "b2": view("b2", data=b"abc"), "b3": None}, "b1")
    assert states == {"b1": "sd/none/same", "b2": "Sd/-/prefix", "b3": None}
    assert state_of_step(states["b2"], "HAStream", 1, "lossy") == "Sd/-/prefix|HAStream|masters=1|lossy"
    assert state_of_step(states["b1"], "tick", 3, "cut") == "sd/none/same|tick|masters=2|cut"
    assert state_of_step(states["b3"], "tick", 1, "clean") is None
    assert group_state({"b1": None}, "b1") == {"b1": None}


def test_the_universe_is_every_combination_once():
    universe = every_broker_state()
    assert len(universe) == len(set(universe)) == 2 * 2 * 3 * 5 + 2 * 4 * 5


# ------------------------------------------------------------------ the search's edits

def test_no_edit_wipes_the_broker_acting_as_master():
    phase = [Step("wipe", ("b2",)), Step("failover", ("b2",)), Step("wipe", ("b2",)), Step("wipe", ("b1",))]
    assert _masters_never_wiped(phase, "b1") == [
        Step("wipe", ("b2",)), Step("failover", ("b2",)), Step("crash", ("b2",)), Step("restart", ("b2",)),
        Step("wipe", ("b1",))]


@given(seed=st.integers(0, 2**31), edits=st.integers(1, 6))
def test_an_edit_keeps_the_opening_and_the_healing_end(seed, edits):
    config = next(plan_configs("t", 1, seed % 1000, "classic", group_sizes=(3, 2), fault_mixes=("mixed", "crash")))
    script = script_for(config)
    rng = random.Random(seed)
    for _ in range(edits):
        script = mutate_classic_script(script, config, rng, MESSAGE_FAULT_MIXES)
    steps = list(script.steps)
    assert steps[0] == Step("run", ("6000",)) and tuple(steps[-len(HEALING_END):]) == HEALING_END
    master = script.nodes[0]
    for step in steps:
        master = step.args[0] if step.op == "failover" else master
        assert not (step.op == "wipe" and step.args[0] == master), steps


def test_a_classic_campaign_searches():
    """(Replaying a mutated run from its lineage: tests/scenarios/test_search.py, for every scenario.)"""
    configs = list(plan_configs("t", 30, 0, "classic", group_sizes=(3, 2), fault_mixes=("mixed", "partition")))
    results = list(searched(configs, run_one, policy=get_scenario("classic").search_policy))
    assert any(r.config.origin for r in results), "no run mutated a corpus script"
    assert all(r.verdict == "pass" for r in results), [r.first_violation for r in results]
