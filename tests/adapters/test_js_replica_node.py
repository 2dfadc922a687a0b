"""An independent broker replica in JavaScript (tests/fixtures/js/replica_node.js: node kind
``replica``, the ``truncation`` scenario), at node level over stdio, with single plausible
slips (``--slip NAME``: the kind a port makes in the handshake's comparison and cut, role
changes, transfer batches, confirmOffset or durability).

The correct node passes generated truncation runs (groups of 2 and 3); each slip is caught
by the counterexample the default ``rmqha check --scenario truncation`` found and shrank for
it (tests/fixtures/js/replica_slips/SLIP.rmqha, written by ``python benchmarks/slips.py
--node replica --scripts tests/fixtures/js/replica_slips``): replayed as a user replays it,
against the slip, it shows the violation it names; against the correct node, the same
script passes. Every slip the fixture's SLIPS table declares has such a script (the
fixture's EQUIVALENT_SLIPS, which no run of the scenario can tell from the correct node,
are listed apart and have none).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.campaign import execute, plan_configs, run_one
from conformance.script import read_script

ROOT = Path(__file__).parents[2]
NODE = ROOT / "tests" / "fixtures" / "js" / "replica_node.js"
SCRIPTS = ROOT / "tests" / "fixtures" / "js" / "replica_slips"
SLIPS = re.findall(r"^\s+'([a-z0-9-]+)': '", NODE.read_text(), re.M)

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def adapter(slip: str | None = None) -> str:
    return f"stdio:node {NODE.relative_to(ROOT)}" + (f" --slip {slip}" if slip else "")


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    assert len(SLIPS) >= 12, SLIPS
    missing = [s for s in SLIPS if not (SCRIPTS / f"{s}.rmqha").is_file()]
    assert not missing, (f"no counterexample script for {missing} "
                         f"(python benchmarks/slips.py --node replica --scripts {SCRIPTS.relative_to(ROOT)})")
    extra = sorted(p.stem for p in SCRIPTS.glob("*.rmqha") if p.stem not in SLIPS)
    assert not extra, f"scripts for slips the fixture does not declare: {extra}"


def test_an_unknown_slip_is_refused():
    done = subprocess.run(["node", str(NODE), "--slip", "no-such-slip"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=30)
    assert done.returncode != 0 and "unknown slip no-such-slip" in done.stderr, (done.returncode, done.stderr)


def test_the_correct_node_passes_generated_runs():
    for config in plan_configs("js-replica", 4, 0, "truncation", (adapter(),), None, (2, 3)):
        result = run_one(config)
        assert result.verdict == "pass", (config.seed, config.group_size, result.first_violation, result.error)


@pytest.mark.parametrize("slip", SLIPS)
def test_each_slip_is_caught_by_its_counterexample(slip):
    path = SCRIPTS / f"{slip}.rmqha"
    if not path.is_file():
        pytest.fail(f"no counterexample for {slip}")
    # as a user replays it: the script names the violation it expects
    done = subprocess.run([sys.executable, "-m", "cli.main", "replay", str(path), "--adapter", adapter(slip)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    # the same steps against the correct node: nothing violated
    script = read_script(str(path))
    plain = script.with_steps(s for s in script.steps if s.op != "expect")
    run = execute(plain, adapter(), record_trace=False)
    assert run.error is None and not run.violations, (run.error, [r.violation.message for r in run.violations[:3]])
