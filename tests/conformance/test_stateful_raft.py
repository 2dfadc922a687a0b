"""Stateful property tests of a generic Raft group against ``--adapter``.

The same rules as the DLedger machine (crash, restart, partition, block, heal, lossy
network, client appends), judged by the generic Raft invariants. ``reference`` runs
rmqha's DLedger node as a Raft node; ``pysyncobj`` runs PySyncObj. An implementation
without ``raft`` nodes is not applicable.
"""
import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.stateful import machine_for
from tests.budgets import share
from tests.conformance.conftest import require_nodes

BOUNDED = share(25 / 60, stateful_step_count=30, deadline=None)  # 25 examples under the ci profile


def test_raft_group_keeps_every_invariant(adapter, implementation, node_kinds):
    require_nodes(node_kinds, "raft", implementation)
    run_state_machine_as_test(machine_for(adapter, "raft", "raft"), settings=BOUNDED)


def test_stateful_raft_search_kills_a_double_vote():
    hunt = share(0.25, BOUNDED, report_multiple_bugs=False, stateful_step_count=10,
                 phases=[Phase.generate])
    with pytest.raises(AssertionError, match="election-safety|one-vote-per-term"):
        run_state_machine_as_test(machine_for("mutant:double-vote", "raft", "raft"), settings=hunt)
