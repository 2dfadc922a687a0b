"""Every scenario script under tests/scenarios/ is a regression test.

A script states what must happen with ``expect`` lines. Scripts that name a mutant
adapter are counterexamples: they must still reproduce their violation with that
mutant, and the same schedule must violate nothing on the reference node — which
shows the violation comes from the bug, not from the schedule.
"""
from pathlib import Path

import pytest

from conformance.campaign import execute
from conformance.script import read_script
from spec.steps import broker as broker_steps
from spec.steps import controller as controller_steps

HERE = Path(__file__).parent
SCRIPTS = sorted(p for p in HERE.rglob("*.rmqha"))


def expected_violations(script):
    return {s.args[1] for s in script.steps if s.op == "expect" and s.args[:1] == ("violation",)}


@pytest.mark.parametrize("path", SCRIPTS, ids=[str(p.relative_to(HERE)) for p in SCRIPTS])
def test_scenario_script(path, adapter):
    script = read_script(str(path))
    run_with = script.adapter or adapter
    ex = execute(script, run_with, record_trace=False)  # ExpectationFailed fails the test
    assert ex.error is None
    seen = {r.violation.property for r in ex.violations}
    assert seen <= expected_violations(script), f"unexpected violations: {seen - expected_violations(script)}"


MUTANT_SCRIPTS = [p for p in SCRIPTS if (read_script(str(p)).adapter or "").startswith("mutant:")]


@pytest.mark.parametrize("path", MUTANT_SCRIPTS, ids=[p.name for p in MUTANT_SCRIPTS])
def test_counterexample_schedule_is_harmless_on_the_reference(path):
    script = read_script(str(path))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    ex = execute(script, "reference", record_trace=False)
    assert ex.error is None
    assert [r.violation.message for r in ex.violations] == []


@pytest.mark.parametrize("scenario", ["dledger", "truncation", "classic"])
def test_every_invariant_has_a_mutant_counterexample(scenario):
    from conformance.scenarios.registry import get_scenario

    covered = set()
    for p in MUTANT_SCRIPTS:
        script = read_script(str(p))
        if script.scenario == scenario:
            covered |= expected_violations(script)
    assert set(get_scenario(scenario).properties) <= covered


def test_every_controller_step_property_has_a_mutant_counterexample():
    """Each step-conformance property of the controller scenario (spec/steps/controller.py,
    spec/steps/broker.py) has a mutant whose committed counterexample violates it."""
    covered = set()
    for p in MUTANT_SCRIPTS:
        script = read_script(str(p))
        if script.scenario == "controller":
            covered |= expected_violations(script)
    assert set(controller_steps.PROPERTIES) | set(broker_steps.PROPERTIES) <= covered


# Behaviour scripts (expect lines, no invariant involved) that a behaviour mutant fails.
BEHAVIOUR_KILLS = [
    ("dledger/first-round-after-timeout-at-old-term.rmqha", "pr37-no-parse-reset"),
    ("dledger/isolated-node-keeps-its-term.rmqha", "issue282-vote-blocked-while-candidate"),
]


@pytest.mark.parametrize("name,mutant", BEHAVIOUR_KILLS, ids=[m for _, m in BEHAVIOUR_KILLS])
def test_behaviour_script_kills_mutant(name, mutant):
    from conformance.scenarios.base import ExpectationFailed

    script = read_script(str(HERE / name))
    with pytest.raises(ExpectationFailed):
        execute(script, f"mutant:{mutant}", record_trace=False)
