"""An independent classic master/slave broker in JavaScript (tests/fixtures/js/classic_node.js:
node kind ``classic``, the ``classic`` scenario), at node level over stdio, written from the
documentation (docs/classic-ha.md, docs/adapter-protocol.md), with single plausible slips
(``--slip NAME`` or ``RMQHA_CLASSIC_SLIP=NAME``: a SYNC_MASTER's wait, the first transfer
offset, the slave's progress report).

The correct node passes generated classic runs (groups of 2 and 3, every fault mix); a
slip fails a generated run of its own; and each slip is caught by the counterexample the
default ``rmqha check --scenario classic`` found and shrank for it
(tests/fixtures/js/classic_slips/SLIP.rmqha, written by ``python benchmarks/slips.py --node
classic --scripts tests/fixtures/js/classic_slips``): replayed as a user replays it, against
the slip, it shows the violation it names; against the correct node, the same steps pass.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.campaign import execute, plan_configs, run_one
from conformance.script import read_script

ROOT = Path(__file__).parents[2]
NODE = ROOT / "tests" / "fixtures" / "js" / "classic_node.js"
SCRIPTS = ROOT / "tests" / "fixtures" / "js" / "classic_slips"
SLIPS = re.findall(r"^\s+'([a-z0-9-]+)': '", NODE.read_text(), re.M)

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def adapter(slip: str | None = None) -> str:
    return f"stdio:node {NODE.relative_to(ROOT)}" + (f" --slip {slip}" if slip else "")


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    assert len(SLIPS) >= 3, SLIPS
    missing = [s for s in SLIPS if not (SCRIPTS / f"{s}.rmqha").is_file()]
    assert not missing, (f"no counterexample script for {missing} "
                         f"(python benchmarks/slips.py --node classic --scripts {SCRIPTS.relative_to(ROOT)})")
    extra = sorted(p.stem for p in SCRIPTS.glob("*.rmqha") if p.stem not in SLIPS)
    assert not extra, f"scripts for slips the fixture does not declare: {extra}"


def test_an_unknown_slip_is_refused():
    env = {**os.environ, "RMQHA_CLASSIC_SLIP": "no-such-slip"}
    done = subprocess.run(["node", str(NODE)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=30, env=env)
    assert done.returncode != 0 and "unknown slip no-such-slip" in done.stderr, (done.returncode, done.stderr)


def test_the_correct_node_passes_generated_runs():
    # seeds 0-5 rotate the fault mixes (mixed, crash, partition, lossy, none) over groups of 3 and 2
    for config in plan_configs("js-classic", 6, 0, "classic", (adapter(),), None, (3, 2),
                               ("mixed", "crash", "partition", "lossy", "none")):
        result = run_one(config)
        assert result.verdict == "pass", (config.seed, config.group_size, config.fault_mix,
                                          result.first_violation, result.error)


def test_a_slip_fails_a_generated_run():
    config = next(plan_configs("js-classic", 1, 0, "classic", (adapter("ack-at-message-start"),), None, (3,)))
    result = run_one(config)
    assert result.verdict == "fail" and result.first_violation in (
        "step-conformance:transfer_status", "put-ok-held-by-slave"), (result.verdict, result.first_violation)


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
