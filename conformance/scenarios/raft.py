"""The ``raft`` scenario: any Raft implementation's nodes in the simulator, judged by
the generic Raft invariants (``spec/invariants/raft.py``) after every step.

It runs the same scripts as the ``dledger`` scenario (the same steps: ``append``,
``append-leader``, ``crash-leader``, ``isolate-leader``, ``await-leader``, the
``expect`` forms, and every generic fault step) against nodes of the ``raft`` kind,
whose messages rmqha routes without reading them. ``pysyncobj`` runs PySyncObj
there; ``reference`` and ``mutant:NAME`` run rmqha's DLedger node seen as a Raft node.
"""
from __future__ import annotations

import attrs

from conformance.scenarios.dledger import DLedgerCluster, generate_dledger_script
from conformance.script import Script
from conformance.targets import RaftTarget, raft_target
from results.runresult import RunConfig
from spec.invariants import raft as inv
from spec.raft.records import ClientCommand, RaftView


class RaftCluster(DLedgerCluster):
    scenario = "raft"
    invariants = inv
    finding_name = None  # Raft is judged strictly: a committed entry lost is a violation
    client_request = ClientCommand
    # any Raft, over whatever it speaks: datagrams, which may reach a node's next life
    # (PySyncObj over UDP; one that holds connections models them, pysyncobj:tcp), unless
    # its hello says its nodes are DLedger nodes (TCP, as in the dledger scenario)
    connections = False

    def __init__(self, script: Script, target: RaftTarget, record_trace: bool = True):
        self.connections = target.connections
        super().__init__(script, target, record_trace=record_trace)

    def new_history(self):
        return inv.RaftHistory()

    def new_steps(self):
        return None  # a generic Raft node's messages are opaque: its steps are judged by the view rules

    def initial_term(self) -> int:
        return 0

    def liveness_bound_ms(self) -> int:
        return self.target.liveness_bound_ms

    def node_crashed(self, node_id: str) -> None:
        inv.forget_volatile(self.history, node_id)

    def judge_lease(self, node_id: str) -> None:
        """Raft has no leader lease (check-quorum is optional): nothing to judge."""

    def judge(self, view: RaftView, incoming, ready) -> None:
        for violation in inv.check_node(self.history, view):
            self.violate(violation)
        inv.record(self.history, view)


def build_raft(script: Script, adapter: str, record_trace: bool = True):
    return RaftCluster(script, raft_target(adapter), record_trace)


def generate_raft_script(config: RunConfig) -> Script:
    """The DLedger fault schedules (their steps are generic Raft steps), for a ``raft`` group."""
    return attrs.evolve(generate_dledger_script(config), scenario="raft")
