"""A generic Raft observation: what any Raft-family implementation exposes.

rmqha's DLedger spec is the precise model of DLedger; this package is deliberately
thin. It describes what can be *observed* of any Raft node (term, vote, role, leader,
log, commit index) so that the generic Raft invariants (``spec/invariants/raft.py``)
can judge third-party implementations such as PySyncObj at node level.
"""
