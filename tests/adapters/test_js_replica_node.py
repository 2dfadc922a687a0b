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

import subprocess

import pytest

from conformance.campaign import plan_configs, run_one
from tests.adapters.js_fixtures import NEEDS_NODE, ROOT, JsNode

JS = JsNode(ROOT / "tests" / "fixtures" / "js" / "replica_node.js",
            ROOT / "tests" / "fixtures" / "js" / "replica_slips")
NODE, SCRIPTS, SLIPS, adapter = JS.node, JS.scripts, JS.slips, JS.adapter

pytestmark = NEEDS_NODE


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    JS.check_every_slip_has_a_counterexample(
        12, "python benchmarks/slips.py --node replica --scripts tests/fixtures/js/replica_slips")


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
    JS.check_slip_caught_by_its_counterexample(slip)
