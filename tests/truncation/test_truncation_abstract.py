"""spec/truncation/abstract.py: each component of a replica's abstract state by a table
naming every value, the reference log, the universe the report checks; and the
truncation search (conformance/scenarios/truncation.py ``mutate_truncation_script``):
what an edit keeps, that no failover names a replica that is down, that a searched
campaign of the reference passes."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from conformance.campaign import execute, plan_configs, run_one, script_for
from conformance.faults import MESSAGE_FAULT_MIXES
from conformance.scenarios.registry import get_scenario
from conformance.scenarios.truncation import (
    HEALING_END,
    OPENING,
    _failovers_to_live_replicas,
    _master_at,
    mutate_truncation_script,
)
from conformance.script import Step
from conformance.search import reached, searched
from results.schema import ABSTRACT_STATE
from spec.truncation.abstract import (
    EPOCH_FILE_RELATIONS,
    LOG_RELATIONS,
    MASTER_LINKS,
    SLAVE_LINKS,
    epoch_file_relation,
    every_replica_state,
    group_state,
    link,
    log_relation,
    reference_of,
    replica_state,
    state_of_step,
)
from spec.truncation.epoch_file import EpochEntry, EpochFile
from spec.truncation.messages import ReplicaRole, ReplicaView, SlaveState


def view(node="r2", role=ReplicaRole.SLAVE, log=((0, 1, "a"), (10, 1, "b")), epoch=1, epochs=((1, 0),),
         flushed=None, slave_state=SlaveState.TRANSFER, acks=()) -> ReplicaView:
    max_offset = log[-1][0] + 10 if log else 0
    return ReplicaView(node, role, epoch, max_offset, max_offset if flushed is None else flushed,
                       EpochFile(tuple(EpochEntry(e, s) for e, s in epochs)), tuple(log), 0,
                       slave_state if role is ReplicaRole.SLAVE else None, tuple(acks), None)


REFERENCE = view("r1", ReplicaRole.MASTER, log=((0, 1, "a"), (10, 1, "b"), (20, 2, "c")), epoch=2,
                 epochs=((1, 0), (2, 20)))

LOG_ROWS = [
    # (expected, mine, the reference)
    ("same", view(log=REFERENCE.log), REFERENCE),
    ("prefix", view(), REFERENCE),
    ("prefix", view(log=()), REFERENCE),  # an empty log is a prefix of any other
    ("longer", view(log=REFERENCE.log + ((30, 2, "d"),)), REFERENCE),
    ("fork", view(log=((0, 1, "a"), (10, 1, "b"), (20, 1, "x"))), REFERENCE),  # an old master's unreplicated write
    ("fork", view(log=((0, 1, "a"), (10, 1, "b"), (20, 2, "x"), (30, 2, "y"))), REFERENCE),  # longer, and forked
]


@pytest.mark.parametrize("expected,mine,reference", LOG_ROWS)
def test_log_relation(expected, mine, reference):
    assert log_relation(mine, reference) == expected


def test_every_log_relation_has_a_row():
    assert {row[0] for row in LOG_ROWS} == set(LOG_RELATIONS)


LONGER = view("r1", ReplicaRole.MASTER, epochs=((1, 0), (2, 20), (3, 30)))
SINGLE = view("r1", ReplicaRole.MASTER, epochs=((1, 0),))
EPOCH_FILE_ROWS = [
    # (expected, mine, the reference's)
    ("0", view(epochs=()), REFERENCE),  # never a slave or master of any epoch
    ("same", view(epochs=((1, 0), (2, 20))), REFERENCE),
    ("behind1", view(epochs=((1, 0),)), REFERENCE),  # it has not learnt of epoch 2 yet
    ("behind2+", view(epochs=((1, 0),)), LONGER),
    ("ahead1", view(epochs=((1, 0), (2, 20), (3, 30))), REFERENCE),  # an epoch the reference never saw
    ("ahead2+", view(epochs=((1, 0), (2, 20), (3, 30), (4, 40))), REFERENCE),
    ("fork1", view(epochs=((1, 0), (3, 20))), REFERENCE),  # another master's epoch at 20
    ("fork1", view(epochs=((1, 0), (2, 10))), REFERENCE),  # epoch 2 began elsewhere: start offsets count too
    ("fork2+", view(epochs=((1, 0), (3, 20), (4, 25))), REFERENCE),
    ("fork2+", view(epochs=((1, 0), (3, 20))), LONGER),  # how far: past the common entries, in the longer file
    ("none1", view(epochs=((3, 0),)), SINGLE),  # no first entry in common, one entry each
    ("none2+", view(epochs=((3, 0),)), REFERENCE),
    ("none1", view(epochs=((1, 0),)), view(epochs=())),  # against an empty file: nothing in common
]


@pytest.mark.parametrize("expected,mine,reference", EPOCH_FILE_ROWS)
def test_epoch_file_relation(expected, mine, reference):
    assert epoch_file_relation(mine, reference) == expected


def test_every_epoch_file_relation_has_a_row():
    assert {row[0] for row in EPOCH_FILE_ROWS} == set(EPOCH_FILE_RELATIONS)


LINK_ROWS = [
    ("none", view(role=ReplicaRole.MASTER)),
    ("lag", view(role=ReplicaRole.MASTER, acks=(("r2", 20), ("r3", 10)))),
    ("acked", view(role=ReplicaRole.MASTER, acks=(("r2", 20),))),
    ("-", view(slave_state=None)),
    ("-", view(role=ReplicaRole.NONE)),
    ("r", view(slave_state=SlaveState.READY)),
    ("h", view(slave_state=SlaveState.HANDSHAKE)),
    ("t", view(slave_state=SlaveState.TRANSFER)),
]


@pytest.mark.parametrize("expected,me", LINK_ROWS)
def test_link(expected, me):
    assert link(me) == expected


def test_every_link_has_a_row():
    assert {row[0] for row in LINK_ROWS} == set(MASTER_LINKS) | set(SLAVE_LINKS)


REPLICA_ROWS = [
    ("Md/none/cur/same/same", REFERENCE),
    ("Su/t/old/behind1/prefix", view(flushed=10)),  # epoch 1 of 2, its last 10 bytes not flushed
    ("Sd/h/cur/same/longer", view(log=REFERENCE.log + ((30, 2, "d"),), epoch=2, epochs=((1, 0), (2, 20)),
                               slave_state=SlaveState.HANDSHAKE)),
    ("Nd/-/old/behind1/fork", view(role=ReplicaRole.NONE, log=((0, 1, "a"), (10, 1, "b"), (20, 1, "x")))),
]


@pytest.mark.parametrize("expected,me", REPLICA_ROWS)
def test_replica_state(expected, me):
    assert replica_state(me, REFERENCE, 2) == expected
    assert expected in every_replica_state()


def test_the_reference_log():
    slave = view("r2", log=REFERENCE.log + ((30, 2, "d"),))
    old_master = view("r3", ReplicaRole.MASTER, epoch=1)
    views = {"r1": REFERENCE, "r2": slave, "r3": old_master}
    assert reference_of(views, "r1", 2) is REFERENCE  # the master of the current epoch
    # the master not live, not acting as one, or of an older epoch: the longest live log
    assert reference_of({"r1": None, "r2": slave, "r3": old_master}, "r1", 2) is slave
    assert reference_of(views, "r1", 3) is slave
    assert reference_of(views, None, 2) is slave
    assert reference_of({"r1": None, "r2": None}, "r1", 2) is None


def test_a_step_state_and_a_down_replica():
    states = group_state({"r1": REFERENCE, "r2": view(epoch=2), "r3": None}, "r1", 2)
    assert states == {"r1": "Md/none/cur/same/same", "r2": "Sd/t/cur/behind1/prefix", "r3": None}
    assert state_of_step(states["r2"], "TransferBatch", 1, "lossy") == \
        "Sd/t/cur/behind1/prefix|TransferBatch|masters=1|lossy"
    assert state_of_step(states["r1"], "tick", 3, "cut") == "Md/none/cur/same/same|tick|masters=2|cut"
    assert state_of_step(states["r3"], "tick", 1, "clean") is None
    assert group_state({"r1": None}, "r1", 1) == {"r1": None}


def test_the_universe_is_every_combination_once():
    universe = every_replica_state()
    per_link = 2 * 2 * len(EPOCH_FILE_RELATIONS) * len(LOG_RELATIONS)  # flush x epoch x epoch file x log
    assert len(universe) == len(set(universe)) == per_link * (len(MASTER_LINKS) + len(SLAVE_LINKS) + 1)


# ------------------------------------------------------------------ the search's edits

def test_no_failover_names_a_replica_that_is_down():
    steps = [Step("crash", ("r2",)), Step("failover", ("r2",)), Step("restart", ("r1",)), Step("restart", ("r2",)),
             Step("failover", ("r2",)), Step("crash", ("r1",)), Step("crash", ("r3",)), Step("failover", ("r3",))]
    fixed = _failovers_to_live_replicas(steps, ["r1", "r2", "r3"], random.Random(0))
    assert fixed[1].op == "failover" and fixed[1].args[0] in ("r1", "r3")  # sent to a live one
    assert Step("restart", ("r1",)) not in fixed  # r1 was up: its restart is dropped
    assert fixed[2:4] == [Step("restart", ("r2",)), Step("failover", ("r2",))]
    assert fixed[-1] == Step("failover", ("r2",))  # r1 and r3 down: the one left
    everyone_down = [Step("crash", ("r1",)), Step("crash", ("r2",)), Step("failover", ("r1",))]
    assert _failovers_to_live_replicas(everyone_down, ["r1", "r2"], random.Random(0)) == everyone_down[:2]


def test_the_master_at_a_step():
    assert _master_at([Step("run", ("50",)), Step("failover", ("r2",)), Step("write", ("1",))]) == "r2"
    assert _master_at([Step("run", ("50",))]) is None


@given(seed=st.integers(0, 2**31), edits=st.integers(1, 6))
def test_an_edit_keeps_the_opening_and_the_healing_end(seed, edits):
    config = next(plan_configs("t", 1, seed % 1000, "truncation", group_sizes=(2, 3),
                               fault_mixes=("mixed", "crash", "partition")))
    original = script = script_for(config)
    rng = random.Random(seed)
    for _ in range(edits):
        script = mutate_truncation_script(script, config, rng, MESSAGE_FAULT_MIXES)
    steps = list(script.steps)
    assert steps[:OPENING] == list(original.steps[:OPENING])
    assert steps[-HEALING_END:] == list(original.steps[-HEALING_END:])
    down: set[str] = set()
    for step in steps:
        if step.op == "crash":
            down.add(step.args[0])
        elif step.op == "restart":
            assert step.args[0] in down, steps
            down.discard(step.args[0])
        elif step.op == "restart-all":
            down.clear()
        elif step.op == "failover":
            assert step.args[0] not in down, steps


def test_an_isolated_master_comes_back_with_a_longer_log_of_an_older_epoch():
    """The ``isolate`` edit's window, run on its own: the old master takes a write nobody
    else gets, the others fail over, and on healing its handshake truncates that write."""
    config = next(plan_configs("t", 1, 0, "truncation", group_sizes=(2,), fault_mixes=("mixed",)))
    script = script_for(config).with_steps((
        Step("run", ("50",)), Step("failover", ("r1",)), Step("write", ("2",)), Step("run", ("500",)),
        Step("partition", ("r1",)), Step("write", ("1",)), Step("run", ("300",)), Step("failover", ("r2",)),
        Step("write", ("1",)), Step("run", ("800",)), Step("heal"), Step("run", ("3000",))))
    ex = execute(script, "reference", record_trace=False)
    assert not ex.error and not ex.cluster.violations
    states = {outcome.split("|")[0] for (proc, outcome) in ex.cluster.coverage if proc == ABSTRACT_STATE}
    # the old master, a slave now: its file lacks epoch 2, its log holds its own write where the
    # new master wrote another; then the handshake truncates it and it copies the rest
    assert {"Sd/r/cur/behind1/fork", "Sd/t/cur/same/same"} <= states, sorted(states)
    assert ex.cluster.coverage[("slave_handshake", "TRUNCATE_AND_TRANSFER")] >= 1


def test_a_truncation_campaign_searches():
    """(Replaying a mutated run from its lineage: tests/scenarios/test_search.py, for every scenario.)"""
    configs = list(plan_configs("t", 30, 0, "truncation", group_sizes=(2, 3), fault_mixes=("mixed", "crash")))
    results = list(searched(configs, run_one, policy=get_scenario("truncation").search_policy))
    assert any(r.config.origin for r in results), "no run mutated a corpus script"
    assert all(r.verdict == "pass" for r in results), [r.first_violation for r in results]
    assert all(reached(r) for r in results)


def test_a_producer_with_a_stale_route_writes_to_the_replica_it_names():
    """``write COUNT N``: a slave refuses the write; the master's writes are acknowledged
    as before."""
    config = next(plan_configs("t", 1, 0, "truncation", group_sizes=(3,), fault_mixes=("mixed",)))
    script = script_for(config).with_steps((
        Step("run", ("50",)), Step("failover", ("r1",)), Step("write", ("2",)), Step("run", ("500",)),
        Step("write", ("1", "r2")), Step("run", ("100",)), Step("write", ("1", "r1")),
        Step("run", ("500",)), Step("expect", ("acknowledged", "3"))))
    ex = execute(script, "reference", record_trace=False)
    assert not ex.error and not ex.cluster.violations
    assert ex.cluster.coverage[("client_write", "NOT_MASTER")] == 1
    assert ex.cluster.coverage[("client_write", "APPENDED")] == 3
