"""What an implementation's raft messages travel over, as its hello says (``transport``).

A generic Raft gets datagrams, which may reach a node's next life; one that says
``"transport": {"raft": "tcp"}`` gets connections, as DLedger nodes seen as Raft nodes do
(docs/adapter-protocol.md, "Which life a message reaches"). The fixture is rmqha's
reference offered as a generic Raft: its nodes number their requests from scratch in
each life, so over datagrams an answer to a node's earlier life is matched to a new
request, and the run of tests/scenarios/raft/dledger-nodes-answer-to-an-earlier-life-never-arrives.rmqha
loses a committed entry.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.campaign import execute
from conformance.scenarios.registry import get_scenario
from results.runresult import RunConfig

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "tests/scenarios/raft/dledger-nodes-answer-to-an-earlier-life-never-arrives.rmqha"


@pytest.mark.parametrize("adapter,connections", [
    ("python:tests.fixtures.raft_transport:tcp", True),
    ("python:tests.fixtures.raft_transport:udp", False),
    ("python:tests.fixtures.raft_transport:undeclared", False),  # a generic Raft: datagrams
    ("reference", True),  # DLedger nodes seen as Raft nodes (profiles: raft dledger-0.4)
])
def test_the_hello_says_what_raft_messages_travel_over(adapter, connections):
    script = get_scenario("raft").generate(RunConfig("c", 1, adapter, "raft", None, 3, "none", 1_000))
    assert execute(script, adapter, record_trace=False).cluster.sim.connections is connections


@pytest.mark.parametrize("transport,exit_code,says", [
    ("tcp", 0, "no property violated"),
    ("udp", 1, "VIOLATED: leader-completeness"),
    ("none", 1, "VIOLATED: leader-completeness"),
])
def test_a_generic_raft_over_tcp_is_not_given_answers_to_a_nodes_earlier_life(transport, exit_code, says):
    # as a user replays the script against their implementation over stdio
    adapter = f"stdio:{sys.executable} -m tests.fixtures.raft_transport --transport {transport}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "cli.main", "replay", SCRIPT, "--adapter", adapter],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == exit_code, done.stdout + done.stderr
    assert says in done.stdout
