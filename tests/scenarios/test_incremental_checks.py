"""The monitors judge only what each activation can have changed; judging every live node
after every activation (``SimCluster.full_check``) reports nothing more and nothing less.

Compared: the distinct violations (property, message) with the step and time
each was first reported, on every scenario script and on generated runs of the reference
and of every mutant of each scenario.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conformance.campaign import execute, plan_configs
from conformance.scenarios.base import SimCluster
from conformance.scenarios.registry import get_scenario
from conformance.script import read_script

ROOT = Path(__file__).resolve().parents[2]
# PySyncObj's scripts are left out: the raft monitor is the dledger one (covered by the
# raft mutant scripts), and PySyncObj is slow
SCRIPTS = sorted(p for p in (ROOT / "tests" / "scenarios").rglob("*.rmqha") if "pysyncobj" not in p.name)


def reported(script, adapter=None, full=False) -> dict:
    SimCluster.full_check = full
    try:
        ex = execute(script, adapter, record_trace=False)
    finally:
        SimCluster.full_check = False
    first: dict = {}
    for r in ex.violations:
        v = r.violation
        first.setdefault((v.property, v.message), (r.step, r.time))
    return first


@pytest.mark.parametrize("path", SCRIPTS, ids=[str(p.relative_to(ROOT / "tests" / "scenarios")) for p in SCRIPTS])
def test_scripts_report_what_the_full_check_reports(path):
    script = read_script(str(path))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    assert reported(script, script.adapter) == reported(script, script.adapter, full=True)


def mutant_runs():
    runs = []
    for name, sizes in (("dledger", (3, 5)), ("truncation", (2, 3)), ("controller", (3, 2)), ("classic", (3, 2))):
        scenario = get_scenario(name)
        adapters = ("reference",) + tuple(f"mutant:{m.name}" for m in scenario.mutants)
        for config in plan_configs("incremental", 1, 0, scenario=name, adapters=adapters, group_sizes=sizes):
            runs.append(pytest.param(scenario.generate(config), config.adapter, id=f"{name}-{config.adapter}"))
    return runs


@pytest.mark.parametrize("script,adapter", mutant_runs())
def test_generated_runs_report_what_the_full_check_reports(script, adapter):
    assert reported(script, adapter) == reported(script, adapter, full=True)
