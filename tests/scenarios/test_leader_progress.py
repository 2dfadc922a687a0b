"""A leader's progress per follower (next and match index) in the views: judged where an
implementation exposes it, "not observed" (n/a, never a pass) where it does not.

The invariants themselves are tested row by row in tests/raft/test_raft_invariants.py;
their mutants (append-keeps-next-index, watermark-off-by-one) by the scenario scripts.
"""
import shutil
from pathlib import Path

import pytest

from adapters import codec
from conformance.campaign import execute, plan_configs, run_one
from conformance.script import parse_script
from reference.dledger_node import DLedgerNode
from spec.dledger.records import DLedgerView, PeerProgress, Role
from spec.invariants.raft import PROGRESS_PROPERTIES

JS_NODE = Path(__file__).parents[2] / "tests" / "fixtures" / "js" / "dledger_node.js"
REPLICATE = """
scenario dledger
nodes n1 n2 n3
seed 1
start-spread 500
await-leader
append-leader a
append-leader b
run 2000
"""


def verdicts(adapter: str) -> dict[str, str]:
    (config,) = plan_configs("progress", 1, 0, "dledger", (adapter,))
    return {p.name: p.verdict for p in run_one(config).properties if p.name in PROGRESS_PROPERTIES}


def test_the_reference_leader_shows_each_followers_write_index_and_water_mark():
    ex = execute(parse_script(REPLICATE), "reference", record_trace=False)
    assert ex.error is None and not ex.violations
    views = ex.cluster.views()
    (leader,) = [v for v in views if v.role is Role.LEADER]
    assert leader.progress == tuple(PeerProgress(p, 2, 1) for p in ("n1", "n2", "n3") if p != leader.node_id)
    assert all(v.progress is None for v in views if v is not leader)
    assert verdicts("reference") == dict.fromkeys(PROGRESS_PROPERTIES, "pass")


def test_an_implementation_that_does_not_expose_it_is_reported_not_observed(monkeypatch):
    monkeypatch.setattr(DLedgerNode, "_progress", lambda self: None)
    assert verdicts("reference") == dict.fromkeys(PROGRESS_PROPERTIES, "not_applicable")


def test_the_view_field_is_optional_on_the_wire():
    reg = codec.registry("dledger")
    plain = {"@type": "DLedgerView", "node_id": "n1", "role": "LEADER", "curr_term": 1, "voted_for": "n1",
             "leader_id": "n1", "ledger_end_index": 0, "ledger_end_term": 1, "committed_index": 0,
             "applied_index": 0, "log": [{"@type": "Entry", "index": 0, "term": 1, "body": "a"}]}
    assert codec.decode(plain, DLedgerView, reg).progress is None
    shown = {**plain, "progress": [{"@type": "PeerProgress", "peer": "n2", "write_index": 1, "water_mark": 0}]}
    view = codec.decode(shown, DLedgerView, reg)
    assert view.progress == (PeerProgress("n2", 1, 0),)
    assert codec.encode(view) == shown


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_foreign_node_exposes_it_over_stdio():
    adapter = f"stdio:node {JS_NODE}"
    ex = execute(parse_script(REPLICATE), adapter, record_trace=False)
    assert ex.error is None and not ex.violations
    (leader,) = [v for v in ex.cluster.views() if v.role is Role.LEADER]
    assert [(p.write_index, p.water_mark) for p in leader.progress] == [(2, 1), (2, 1)]
    assert ex.cluster.not_applicable() == set()

