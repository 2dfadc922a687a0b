"""An independent DLedger node in JavaScript (tests/fixtures/js/dledger_node.js), at node
level over stdio, with single plausible slips (``--slip NAME``).

The correct node passes generated campaign runs; each slip is caught by the
counterexample the default ``rmqha check`` found and shrank for it
(tests/fixtures/js/slips/SLIP.rmqha, written by ``python benchmarks/slips.py
--scripts tests/fixtures/js/slips``): replayed as a user replays it, against the slip,
it shows the violation it names; against the correct node, the same script passes.
Every slip the fixture declares has such a script. The node gives its ``next_deadline``;
its runs are checked to be those of the same node ticked every 10 ms.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conformance.campaign import execute, plan_configs, run_one
from conformance.script import read_script
from tests.adapters.js_fixtures import NEEDS_NODE, ROOT, JsNode
from reference.node_api import TICK_MS
from tests.reference.test_deadlines import audited_run, generated as generated_runs, trace

JS = JsNode(ROOT / "tests" / "fixtures" / "js" / "dledger_node.js",
            ROOT / "tests" / "fixtures" / "js" / "slips", absolute=True)
NODE, SCRIPTS, SLIPS, adapter = JS.node, JS.scripts, JS.slips, JS.adapter

pytestmark = NEEDS_NODE


def generated(slip: str | None, seed: int, runs: int = 1):
    """Generated runs from ``seed`` on, group sizes 3-5 and every fault mix in turn."""
    return generated_runs("dledger", runs, (adapter(slip),), (3, 4, 5), ("mixed", "crash", "partition", "lossy"), seed)


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    JS.check_every_slip_has_a_counterexample(
        12, "python benchmarks/slips.py --scripts tests/fixtures/js/slips")


def test_the_correct_node_passes_generated_runs():
    for config in plan_configs("js", 4, 0, "dledger", (adapter(),), None, (3, 4, 5)):
        result = run_one(config)
        assert result.verdict == "pass", (config.seed, result.first_violation, result.error)


@pytest.mark.parametrize("slip", SLIPS)
def test_each_slip_is_caught_by_its_counterexample(slip):
    JS.check_slip_caught_by_its_counterexample(slip)


@pytest.mark.parametrize("script", sorted((ROOT / "tests" / "fixtures" / "js" / "correct").glob("*.rmqha")),
                         ids=lambda p: p.stem)
def test_the_correct_node_passes_what_once_flagged_it(script):
    """Scripts on which the correct node was once judged wrong (a false positive, fixed
    in the checker): it passes them."""
    ex = execute(read_script(str(script)), adapter())
    assert ex.error is None and not ex.violations, [r.violation.message for r in ex.violations]


def test_the_duplicated_truncate_script_drops_an_acknowledged_entry():
    """tests/fixtures/js/correct/duplicated-truncate-after-ack.rmqha keeps exercising what
    it guards: a follower truncates on a TRUNCATE delivered after it acknowledged an
    APPEND past that TRUNCATE's cut, in the same term."""
    ex = execute(read_script(str(ROOT / "tests" / "fixtures" / "js" / "correct" / "duplicated-truncate-after-ack.rmqha")),
                 adapter())
    acked: dict[tuple[str, int], int] = {}  # (follower, term) -> highest end it acknowledged to an APPEND
    dropped = []
    for line in ex.cluster.trace_jsonl().splitlines():
        e = json.loads(line)
        body = e.get("body") or {}
        if e["kind"] == "send" and e.get("msg") == "PushEntryResponse" and body.get("code") == "SUCCESS" \
                and body.get("type") == "APPEND":
            key = (e["src"], body["term"])
            acked[key] = max(acked.get(key, -1), body["end_index"])
        if e["kind"] == "deliver" and e.get("msg") == "PushEntryRequest" and body.get("type") == "TRUNCATE" \
                and body["prev_index"] <= acked.get((e["dst"], body["term"]), -1):
            dropped.append((e["time"], e["dst"]))
    assert dropped, "the script no longer delivers a TRUNCATE behind an acknowledged entry"


def test_a_report_says_the_node_does_not_report_spec_outcomes(tmp_path):
    """The node reports no spec outcomes (its answers carry none): the report says so, and
    does not list every outcome as never hit; its abstract states are there all the same."""
    done = subprocess.run([sys.executable, "-m", "cli.main", "check", "--scenario", "dledger", "--adapter", adapter(),
                           "--no-spark", "--quiet", "--runs", "3", "--out", str(tmp_path / "results"),
                           "--report", str(tmp_path / "report")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "report" / "report.md").read_text()
    assert "This implementation does not report which spec outcomes it exercised." in report
    assert "Never hit:" not in report
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["never_hit"] == [] and summary["abstract_states"][0]["states"] > 0
    assert "give no `next_deadline`" not in report  # it gives its deadlines


def test_a_report_says_a_node_without_deadlines_is_ticked_every_10_ms(tmp_path):
    """The same node run with ``--no-deadlines`` (it then leaves ``next_deadline`` out, as
    many a user's node does): the report says so and what answering it buys."""
    spec = adapter() + " --no-deadlines"
    done = subprocess.run([sys.executable, "-m", "cli.main", "check", "--scenario", "dledger", "--adapter", spec,
                           "--no-spark", "--quiet", "--runs", "2", "--out", str(tmp_path / "results"),
                           "--report", str(tmp_path / "report")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"`{spec}`: 100% of its nodes' answers give no `next_deadline`" in report, report


@pytest.mark.parametrize("slip", [None] + SLIPS, ids=lambda s: s or "correct")
def test_the_node_gives_deadlines_and_runs_as_when_ticked_every_10_ms(slip):
    """The node answers ``next_deadline`` (docs/adapter-protocol.md): a run skips its idle
    ticks and is still the run of a node ticked every 10 ms, byte for byte, with the same
    violations at the same steps (each slip's and the correct node's, one generated run
    each, the seeds spread over group sizes and fault mixes)."""
    seed = 5 * ([None] + SLIPS).index(slip)  # group sizes and fault mixes rotate with the seed
    for script, name in generated(slip, seed):
        assert trace(script, name) == trace(script, name, deadlines=False), (slip, seed)


@pytest.mark.parametrize("slip", [None, "lease-never-expires", "vote-persisted-late"], ids=lambda s: s or "correct")
def test_no_tick_before_the_node_s_deadline_does_anything(slip):
    """Ticked at every grid time, each tick before the deadline the node gave is idle:
    nothing sent or persisted, no new state, the same deadline. A deadline is never late."""
    for script, name in generated(slip, 40, runs=2):
        assert audited_run(script, name).sim.ticks > 0


def test_a_run_with_deadlines_wakes_the_nodes_a_fraction_of_the_grid_times():
    script, name = generated(None, 0)[0]
    sim = execute(script, name, record_trace=False).cluster.sim
    grid_ticks = len(script.nodes) * sim.now // TICK_MS
    assert sim.ticks < grid_ticks / 3, (sim.ticks, grid_ticks)
