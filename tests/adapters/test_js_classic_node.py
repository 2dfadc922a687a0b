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
import subprocess

import pytest

from conformance.campaign import plan_configs, run_one
from tests.adapters.js_fixtures import NEEDS_NODE, ROOT, JsNode

JS = JsNode(ROOT / "tests" / "fixtures" / "js" / "classic_node.js",
            ROOT / "tests" / "fixtures" / "js" / "classic_slips")
NODE, SCRIPTS, SLIPS, adapter = JS.node, JS.scripts, JS.slips, JS.adapter

pytestmark = NEEDS_NODE


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    JS.check_every_slip_has_a_counterexample(
        3, "python benchmarks/slips.py --node classic --scripts tests/fixtures/js/classic_slips")


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
    JS.check_slip_caught_by_its_counterexample(slip)
