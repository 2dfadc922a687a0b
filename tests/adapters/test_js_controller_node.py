"""An independent RIP-44 controller in JavaScript (tests/fixtures/js/controller_node.js: node
kind ``controller``, the ``controller`` scenario, beside rmqha's reference brokers), written
from the documentation, at node level over stdio, with single plausible slips (``--slip
NAME``: the alter's epoch checks, the SyncStateSet epoch, heartbeats, elections, broker ids,
admin cleans, notifications, the expiry scan).

As a user runs it: ``rmqha check --scenario controller --adapter controller=stdio:...``
passes a short campaign, and the same check of a slip fails; each slip's counterexample
(tests/fixtures/js/controller_slips/SLIP.rmqha: the default check's shrunk one, or, for the
slips the default check did not catch, NOT_CAUGHT_BY_DEFAULT_CHECK, one written by hand)
replays with the violation it names, and its steps pass on the correct node.
"""
from __future__ import annotations

import json
import re

import pytest

from cli.main import main
from tests.adapters.js_fixtures import NEEDS_NODE, ROOT, JsNode

JS = JsNode(ROOT / "tests" / "fixtures" / "js" / "controller_node.js",
            ROOT / "tests" / "fixtures" / "js" / "controller_slips", role="controller=")
NODE, SCRIPTS, SLIPS, adapter = JS.node, JS.scripts, JS.slips, JS.adapter

pytestmark = NEEDS_NODE


def not_caught_by_default_check() -> list[str]:
    """The fixture's NOT_CAUGHT_BY_DEFAULT_CHECK list (slips whose script was written by hand)."""
    block = re.search(r"const NOT_CAUGHT_BY_DEFAULT_CHECK = \[(.*?)\];", NODE.read_text(), re.S)
    return re.findall(r"'([a-z0-9-]+)'", block.group(1)) if block else []


def check(tmp_path, slip: str | None, runs: int) -> tuple[int, dict]:
    status = main(["check", "--scenario", "controller", "--adapter", adapter(slip),
                   "--runs", str(runs), "--no-spark", "--quiet", "--out", str(tmp_path / "results"),
                   "--report", str(tmp_path / "report")])
    return status, json.loads((tmp_path / "report" / "summary.json").read_text())


def test_the_fixture_declares_its_slips_and_each_has_a_counterexample():
    JS.check_every_slip_has_a_counterexample(
        6, "kept from the default check's report, or written by hand for NOT_CAUGHT_BY_DEFAULT_CHECK")
    assert set(not_caught_by_default_check()) <= set(SLIPS), not_caught_by_default_check()
    for slip in not_caught_by_default_check():  # a hand-written script says so
        assert "written by hand" in (SCRIPTS / f"{slip}.rmqha").read_text().splitlines()[0], slip


def test_an_unknown_slip_is_refused():
    JS.check_unknown_slip_refused()


def test_the_correct_controller_passes_a_short_controller_check(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the adapter names the fixture from the repository's root, as a user would
    status, summary = check(tmp_path, None, 10)
    assert status == 0, summary["verdict"]
    assert summary["totals"]["runs"] == 10 and not summary["counterexamples"]


def test_a_slip_fails_the_same_check_with_a_counterexample_that_replays(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    status, summary = check(tmp_path, "alter-keeps-sync-state-set-epoch", 2)
    assert status == 1, summary["verdict"]
    JS.check_counterexample_replays(summary, "step-conformance:apply_event")


@pytest.mark.parametrize("slip", SLIPS)
def test_each_slip_is_caught_by_its_counterexample(slip):
    JS.check_slip_caught_by_its_counterexample(slip)
