"""The spec procedures a reference node calls, gathered in one record.

The reference node never restates a rule: it calls these. A mutant
(``reference/mutants.py``) is the same node with some of them replaced by a
known-bad variant, which is how the suite shows that each invariant can fail.
"""
from __future__ import annotations

from typing import Callable

import attrs

from spec.dledger import candidate, heartbeat, log, vote


@attrs.frozen(slots=True)
class DLedgerProcedures:
    handle_vote: Callable = vote.handle_vote
    handle_heartbeat: Callable = heartbeat.handle_heartbeat
    parse_vote_result: Callable = candidate.parse_vote_result
    decide_heartbeat_round: Callable = heartbeat.decide_heartbeat_round
    follower_timed_out: Callable = heartbeat.follower_timed_out
    # when follower_timed_out first holds (None: never); replaced together with it
    follower_timeout_at: Callable = heartbeat.follower_timeout_at
    handle_push: Callable = log.handle_push
    leader_commit_index: Callable = log.leader_commit_index
    ledger_end_term_after_append: Callable = log.ledger_end_term_after_append
    next_push: Callable = log.next_push
    on_push_response: Callable = log.on_push_response
    client_entry: Callable = log.client_entry
    # Durability of the term/vote file (DLedger writes both together), and of truncations.
    persist_vote: bool = True
    persist_term: bool = True
    persist_truncation: bool = True
    # Whether the elector keeps answering votes while a candidate round is open
    # (#282: it once did not).
    answer_votes_while_campaigning: bool = True


REFERENCE_PROCEDURES = DLedgerProcedures()
