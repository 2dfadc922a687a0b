"""``slave-catches-up`` (spec/invariants/truncation.py): after a failover on a healthy set,
each slave holds its master's log once the master has been quiet for the bound. Every
outcome by name, a property over logs, and the scenario: the reference never violates
it, a replica that never hand-shakes does in its first run."""
from __future__ import annotations

import shutil

import pytest
from hypothesis import given, strategies as st

from conformance.campaign import execute, plan_configs
from conformance.faults import MESSAGE_FAULT_MIXES
from conformance.scenarios.registry import get_scenario
from spec.invariants.truncation import check_slave_caught_up, check_writes_acknowledged
from spec.truncation.epoch_file import EpochEntry, EpochFile
from spec.truncation.messages import ReplicaRole, ReplicaView, SlaveState
from tests.liveness_cases import fails_only, js_without


def view(node, log, role=ReplicaRole.SLAVE, handshake=None) -> ReplicaView:
    max_offset = log[-1][0] + 10 if log else 0
    return ReplicaView(node, role, 2, max_offset, max_offset, EpochFile((EpochEntry(1, 0),)), tuple(log), 0,
                       SlaveState.TRANSFER if role is ReplicaRole.SLAVE else None, (), handshake)


MASTER = view("r1", ((0, 1, "a"), (10, 1, "b")), ReplicaRole.MASTER)

CASES = [
    ("caught up: the master's log", view("r2", MASTER.log), False),
    ("behind: a prefix of it", view("r2", MASTER.log[:1]), True),
    ("never replicated: empty", view("r2", ()), True),
    ("as long, another message at an offset", view("r2", ((0, 1, "a"), (10, 1, "x"))), True),
    ("ahead: a longer log", view("r2", MASTER.log + ((20, 1, "c"),)), True),
    ("excused: no consistent point with this master (an operator must wipe it)",
     view("r2", ((0, 1, "z"),), handshake=("r1", -1, "NO_CONSISTENT_POINT", 20)), False),
    ("not excused: no consistent point with an earlier master",
     view("r2", ((0, 1, "z"),), handshake=("r3", -1, "NO_CONSISTENT_POINT", 20)), True),
    ("a slave that has not taken its role yet", view("r2", (), role=ReplicaRole.NONE), True),
]


@pytest.mark.parametrize("name, slave, violated", CASES, ids=[c[0] for c in CASES])
def test_each_outcome(name, slave, violated):
    found = check_slave_caught_up(slave, MASTER, 2_000)
    assert (found is not None) == violated, found
    assert found is None or (found.property, found.node) == ("slave-catches-up", "r2")


ids = st.sampled_from("abcd")


@given(mine=st.lists(ids, max_size=4), theirs=st.lists(ids, max_size=4))
def test_violation_exactly_when_the_logs_differ(mine, theirs):
    slave = view("r2", tuple((10 * i, 1, x) for i, x in enumerate(mine)))
    master = view("r1", tuple((10 * i, 1, x) for i, x in enumerate(theirs)), ReplicaRole.MASTER)
    assert (check_slave_caught_up(slave, master, 2_000) is not None) == (mine != theirs)


def test_the_reference_catches_up_in_generated_runs():
    scenario = get_scenario("truncation")
    for config in plan_configs("t", 40, 0, "truncation", ("reference",), None, scenario.group_sizes,
                               tuple(MESSAGE_FAULT_MIXES), 30_000):
        ex = execute(scenario.generate(config), "reference", record_trace=False)
        assert not [r for r in ex.violations if r.violation.property == "slave-catches-up"], config.seed


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not on PATH")
def test_a_replica_that_never_hand_shakes_is_caught_in_its_first_run(tmp_path):
    """The independent JS replica with its slave's handshake taken out: it sends nothing
    wrong, so before slave-catches-up the default check said CONFORMANT."""
    lazy = js_without(tmp_path, "replica_node.js",
                      "if (this.role === 'SLAVE' && this.slaveState === 'READY' && now >= this.retryAt) {",
                      "if (false) {")
    fails_only("slave-catches-up", "truncation", f"stdio:node {lazy}", 1)


# ---------------------------------------------------------------- write-acknowledged

ACK_CASES = [
    ("every write acknowledged", ("a", "b"), {"a": 0, "b": 10}, False),
    ("one not acknowledged", ("a", "b"), {"a": 0}, True),
    ("a write the master does not hold (refused, or cut) is not asked about", ("a", "z"), {"a": 0}, False),
    ("nothing written since the failover", (), {}, False),
]


@pytest.mark.parametrize("name, written, acknowledged, violated", ACK_CASES, ids=[c[0] for c in ACK_CASES])
def test_each_acknowledgement_outcome(name, written, acknowledged, violated):
    found = check_writes_acknowledged(MASTER, written, acknowledged)
    assert (found is not None) == violated, found
    assert found is None or (found.property, found.node) == ("write-acknowledged", "r1")


def test_a_mutant_whose_confirm_offset_stays_put_is_caught_by_liveness_alone():
    fails_only("write-acknowledged", "truncation", "mutant:confirm-stays-put", 60)


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not on PATH")
def test_a_master_that_never_acknowledges_is_caught(tmp_path):
    """The independent JS replica with its WriteAcknowledged taken out: before
    write-acknowledged the default check said CONFORMANT."""
    mute = js_without(tmp_path, "replica_node.js", "this.send(w.client, { '@type': 'WriteAcknowledged', id: mid });")
    fails_only("write-acknowledged", "truncation", f"stdio:node {mute}", 20)
