"""``produce_answered`` (spec/invariants/controller.py): a write sent to the master of a
healthy set that stays healthy, the broker up in the same role and masterEpoch, is answered
within the bound. The outcomes by name, the mutant only this property catches, and a
broker in another language that never answers (before this property: CONFORMANT)."""
import shutil

import pytest

from conformance.campaign import execute, plan_configs
from conformance.scenarios.controller import ANSWER_BOUND_MS
from conformance.scenarios.registry import get_scenario
from spec.invariants.controller import produce_answered
from tests.liveness_cases import fails_only, js_without

CASES = [
    ("waiting less than the bound", ANSWER_BOUND_MS - 1, False),
    ("waiting exactly the bound", ANSWER_BOUND_MS, True),
    ("waiting long past it", 10 * ANSWER_BOUND_MS, True),
]


@pytest.mark.parametrize("name, waited, violated", CASES, ids=[c[0] for c in CASES])
def test_each_outcome(name, waited, violated):
    found = produce_answered("m1", "b2", waited, ANSWER_BOUND_MS)
    assert bool(found) == violated
    assert all((v.invariant, v.subject) == ("produce_answered", "b2") and "m1" in v.detail for v in found)


def test_the_mutant_that_never_answers_is_caught_by_this_property_alone():
    fails_only("produce_answered", "controller", "mutant:write-never-answered", 8)


def test_the_reference_answers_every_write_in_generated_runs():
    scenario = get_scenario("controller")
    for config in plan_configs("t", 12, 0, "controller", ("reference",), None, scenario.group_sizes,
                               ("mixed", "crash", "partition", "lossy"), 30_000):
        ex = execute(scenario.generate(config), "reference", record_trace=False)
        assert not [r for r in ex.violations if r.violation.property == "produce_answered"], config.seed


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not on PATH")
def test_a_broker_that_never_answers_a_write_is_caught_in_its_first_run(tmp_path):
    """The independent JS broker with its PUT_OK answer taken out: nothing it sends is
    wrong, and every other property held."""
    mute = js_without(tmp_path, "broker_node.js",
                      "this.send(w.client, { '@type': 'ProduceResult', msg_id: mid, status: 'PUT_OK' });")
    fails_only("produce_answered", "controller", f"broker=stdio:node {mute}", 1)
