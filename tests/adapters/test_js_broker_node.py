"""An independent controller-mode broker in JavaScript (tests/fixtures/js/broker_node.js: node
kind ``broker``, the ``controller`` scenario, beside rmqha's reference controllers), written
from the documentation, at node level over stdio, with single plausible slips (``--slip
NAME``: confirmOffset over the SyncStateSet's acks, admitting a slave to the SyncStateSet).

As a user runs it: ``rmqha check --scenario controller --adapter broker=stdio:...`` passes a
short campaign, and the same check of a slip fails; each slip's shrunk counterexample
(tests/fixtures/js/broker_slips/SLIP.rmqha, kept from the default check's report) replays with
the violation it names, and its steps pass on the correct node. The fixture's
EQUIVALENT_SLIPS, which the default check did not catch, are listed apart and have none.
"""
from __future__ import annotations

import json

import pytest

from cli.main import main
from tests.adapters.js_fixtures import NEEDS_NODE, ROOT, JsNode

JS = JsNode(ROOT / "tests" / "fixtures" / "js" / "broker_node.js",
            ROOT / "tests" / "fixtures" / "js" / "broker_slips", role="broker=")
NODE, SCRIPTS, SLIPS, adapter = JS.node, JS.scripts, JS.slips, JS.adapter

pytestmark = NEEDS_NODE


def check(tmp_path, slip: str | None, runs: int) -> tuple[int, dict]:
    status = main(["check", "--scenario", "controller", "--adapter", adapter(slip), "--adapter", "controller=reference",
                   "--runs", str(runs), "--no-spark", "--quiet", "--out", str(tmp_path / "results"),
                   "--report", str(tmp_path / "report")])
    return status, json.loads((tmp_path / "report" / "summary.json").read_text())


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    JS.check_every_slip_has_a_counterexample(
        2, "kept from the default check's report")


def test_an_unknown_slip_is_refused():
    JS.check_unknown_slip_refused()


def test_the_correct_broker_passes_a_short_controller_check(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the adapter names the fixture from the repository's root, as a user would
    status, summary = check(tmp_path, None, 10)
    assert status == 0, summary["verdict"]
    assert summary["totals"]["runs"] == 10 and not summary["counterexamples"]


def test_a_slip_fails_the_same_check_with_a_counterexample_that_replays(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    status, summary = check(tmp_path, "confirm-uses-max-ack", 4)
    assert status == 1, summary["verdict"]
    JS.check_counterexample_replays(summary, "step-conformance:compute_master_confirm_offset")


@pytest.mark.parametrize("slip", SLIPS)
def test_each_slip_is_caught_by_its_counterexample(slip):
    JS.check_slip_caught_by_its_counterexample(slip)
