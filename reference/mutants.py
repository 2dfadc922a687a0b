"""Known-bad variants of the reference DLedger node ("mutants").

A check that no mutant can fail is not a check: each invariant in
``spec/invariants/dledger.py`` and each step-conformance procedure in
``spec/steps/dledger.py`` has at least one mutant here that violates it, and a
counterexample script under tests/scenarios/dledger/ shows it. Most mutants are real
upstream bugs; each is the reference node with one spec procedure (or one profile row)
replaced, so the mutation is exactly the bug and nothing else. Run one with ``--adapter mutant:NAME``.
"""
from __future__ import annotations

from typing import Callable

import attrs

from reference.procedures import REFERENCE_PROCEDURES, DLedgerProcedures
from spec.dledger import effects as fx
from spec.dledger.candidate import NextVote, ParseDecision, parse_vote_result
from spec.dledger.heartbeat import handle_heartbeat
from spec.dledger.log import (
    Dispatcher,
    DispatcherState,
    client_entry,
    handle_push,
    leader_commit_index,
    next_push,
    on_push_response,
)
from spec.dledger.member_state import NEVER, elapsed
from spec.dledger.profiles import DEFAULT_TIMING, HEARTBEAT_ORDER_H_A, PARSE_ORDER_P_B, VOTE_ORDER_V_A, Profile
from spec.dledger.records import Entry, ParseResult
from spec.dledger.vote import handle_vote
from spec.mutants import MutantInfo


@attrs.frozen(slots=True)
class Mutant(MutantInfo):
    breaks: tuple[str, ...] = ()  # every invariant (or behaviour) it is expected to violate
    procedures: Callable[[DLedgerProcedures], DLedgerProcedures] = lambda p: p
    profile: Callable[[Profile], Profile] = lambda p: p

    def apply(self, profile: Profile) -> tuple[Profile, DLedgerProcedures]:
        return self.profile(profile), self.procedures(REFERENCE_PROCEDURES)


def _follower_commit_unclamped(member, request, log, committed_index, profile):
    # #278: the follower took the leader's commit index without min(·, ledgerEnd).
    d = handle_push(member, request, log, committed_index, profile)
    effects = tuple(e for e in d.effects if not isinstance(e, fx.AdvanceCommitIndex))
    if d.response.code.name == "SUCCESS" and request.commit_index > committed_index:
        effects += (fx.AdvanceCommitIndex(request.commit_index),)
    return attrs.evolve(d, effects=effects)


def _no_clamp_after_truncate(member, request, log, committed_index, profile):
    # #316: truncation left committedIndex above the new ledger end.
    d = handle_push(member, request, log, committed_index, profile)
    return attrs.evolve(d, effects=tuple(e for e in d.effects if not isinstance(e, fx.ClampCommitIndex)))


def _compare_ignores_term(member, request, log, committed_index, profile):
    # A follower that compares by index only: any entry at prev_index "matches", so it
    # keeps a conflicting prefix and appends the leader's entries after it.
    if request.type.name == "COMPARE" and 0 <= request.prev_index < len(log):
        request = attrs.evolve(request, prev_term=log[request.prev_index].term)
    return handle_push(member, request, log, committed_index, profile)


def _entry_of_next_term(member, log, body):
    # An off-by-one in the entry's term: the entry claims a term nobody has reached.
    entry = client_entry(member, log, body)
    return None if entry is None else Entry(entry.index, entry.term + 1, body)


def _g1_commit_rule(match_indexes, log, curr_term, committed_index, generation):
    # Raft's figure 8: commit the quorum watermark even when it is of an older term.
    return leader_commit_index(match_indexes, log, curr_term, committed_index, "G1")


def _append_keeps_next_index(d, request, response, generation):
    # A successful APPEND raises the follower's match index but not its write index: the
    # next push repeats what the follower holds (match >= next), is refused, and the
    # compare that follows sets the match index back below what was matched.
    after = on_push_response(d, request, response, generation)
    if request.type.name == "APPEND" and d.state is DispatcherState.APPEND and after.state is DispatcherState.APPEND:
        return attrs.evolve(after, next_index=d.next_index)
    return after


def _watermark_off_by_one(match_indexes, log, curr_term, committed_index, generation):
    # The quorum watermark is the (n-1)/2-th highest match instead of the n/2-th: right
    # in odd groups, one replica short of a quorum in even ones (2 of 4).
    ordered = sorted(match_indexes, reverse=True)
    watermark = ordered[(len(ordered) - 1) // 2]
    return leader_commit_index([watermark] * len(ordered), log, curr_term, committed_index, generation)


def _heartbeat_no_expired_term(member, request):
    # The expired-term check is missing: a heartbeat of an older term is judged as if it
    # were of the current one, so a deposed leader may be acknowledged.
    if request.term < member.curr_term:
        return handle_heartbeat(attrs.evolve(member, curr_term=request.term), request)
    return handle_heartbeat(member, request)


def _not_ready_counts_as_vote(counts, peer_size, profile):
    # REJECT_TERM_NOT_READY counted as a vote: accepted + not-ready reaching a quorum passes.
    d = parse_vote_result(counts, peer_size, profile)
    if d.result is ParseResult.REVOTE_IMMEDIATELY:
        return ParseDecision(ParseResult.PASSED, NextVote.UNCHANGED, (fx.BecomeLeader(counts.term),), d.row)
    return d


def _follower_times_out_early(now, last_leader_heartbeat_time, timing=DEFAULT_TIMING):
    # One missed heartbeat interval instead of maxHeartBeatLeak of them.
    return elapsed(now, last_leader_heartbeat_time) > timing.heartbeat_interval_ms


def _follower_timeout_at_early(last_leader_heartbeat_time, timing=DEFAULT_TIMING):
    # When _follower_times_out_early first holds (its deadline, for the scheduler).
    if last_leader_heartbeat_time == NEVER:
        return NEVER
    return last_leader_heartbeat_time + timing.heartbeat_interval_ms + 1


def _append_without_compare(d, log, term, leader, commit_index, generation, seq):
    # The dispatcher skips COMPARE: it appends from where it believes the follower ends.
    if d.state is DispatcherState.COMPARE and log:
        d = Dispatcher(DispatcherState.APPEND, len(log) if d.next_index < 0 else d.next_index, d.match_index)
    return next_push(d, log, term, leader, commit_index, generation, seq)


def _any_node_appends(member, log, body):
    # No leader check: a follower or candidate appends a client's entry to its own log.
    return Entry(len(log), member.curr_term, body)


def _ignores_vote_rows(*rows: str) -> Callable:
    def variant(voter, request, self_vote=False, profile=None):
        p = attrs.evolve(profile, vote_order=tuple(r for r in profile.vote_order if r not in rows))
        return handle_vote(voter, request, self_vote, p)

    return variant


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "vote-not-durable",
            None,
            "votedFor is not written to the term/vote file: after a restart a node votes again in the same term",
            "step-conformance:persist",
            ("step-conformance:persist", "one-vote-per-term", "election-safety"),
            procedures=lambda p: attrs.evolve(p, persist_vote=False),
        ),
        Mutant(
            "term-not-durable",
            "dledger #85",
            "neither currTerm nor votedFor survives a restart (the term rolls back, cf. #85)",
            "step-conformance:persist",
            ("step-conformance:persist", "term-monotonic", "one-vote-per-term"),
            procedures=lambda p: attrs.evolve(p, persist_term=False),
        ),
        Mutant(
            "double-vote",
            None,
            "handle_vote forgets the already-voted row: a node grants every candidate of its term",
            "step-conformance:handle_vote",
            ("step-conformance:handle_vote", "election-safety", "one-vote-per-term"),
            procedures=lambda p: attrs.evolve(p, handle_vote=_ignores_vote_rows("already_voted_this_term")),
        ),
        Mutant(
            "no-log-check",
            None,
            "handle_vote skips the ledger comparison: an out-of-date candidate can win",
            "step-conformance:handle_vote",
            ("step-conformance:handle_vote", "vote-log-up-to-date", "leader-completeness", "committed-prefix"),
            procedures=lambda p: attrs.evolve(
                p, handle_vote=_ignores_vote_rows("expired_ledger_term", "small_ledger_end_index")
            ),
        ),
        Mutant(
            "pr48-term-before-log",
            "dledger PR #48",
            "PR #48: the term checks come before the log checks (V-A order in a 0.2+ node)",
            "step-conformance:handle_vote",
            ("step-conformance:handle_vote", "fingerprint",),
            profile=lambda p: attrs.evolve(p, vote_order=VOTE_ORDER_V_A),
        ),
        Mutant(
            "pr25-has-leader-votes-next",
            "dledger PR #25",
            "PR #25: ALREADY_HAS_LEADER parsed as WAIT_TO_VOTE_NEXT (term inflation under asymmetric partition)",
            "step-conformance:candidate_action",
            ("step-conformance:candidate_action", "fingerprint", "term inflation"),
            profile=lambda p: attrs.evolve(
                p,
                parse_order=tuple(
                    "already_has_leader_vote_next" if r == "already_has_leader_revote" else r for r in PARSE_ORDER_P_B
                ),
            ),
        ),
        Mutant(
            "pr37-no-parse-reset",
            "dledger PR #37",
            "PR #37: toFollower does not reset lastParseResult, so the round after a timeout raises the term",
            "step-conformance:candidate_action",
            ("step-conformance:candidate_action", "first round after a follower timeout is at the old term",),
            profile=lambda p: attrs.evolve(p, follower_resets_parse_result=False),
        ),
        Mutant(
            "issue247-ignore-higher-term",
            "dledger #247",
            "#247: a leader with a heartbeat quorum ignores a higher term (H-A order in a 0.4 node)",
            "step-conformance:decide_heartbeat_round",
            ("step-conformance:decide_heartbeat_round", "fingerprint",),
            profile=lambda p: attrs.evolve(p, heartbeat_order=HEARTBEAT_ORDER_H_A),
        ),
        Mutant(
            "issue52-end-term-from-curr-term",
            "dledger #52",
            "#52: a follower sets ledgerEndTerm from its currTerm instead of the entry's term",
            "step-conformance:handle_push",
            ("step-conformance:handle_push", "ledger-end-term",),
            procedures=lambda p: attrs.evolve(p, ledger_end_term_after_append=lambda entry, curr_term: curr_term),
        ),
        Mutant(
            "issue278-commit-unclamped",
            "dledger #278",
            "#278: a follower's committedIndex follows the leader's beyond its own ledger end",
            "step-conformance:handle_push",
            ("step-conformance:handle_push", "applied-committed-end",),
            procedures=lambda p: attrs.evolve(p, handle_push=_follower_commit_unclamped),
        ),
        Mutant(
            "issue316-no-clamp-after-truncate",
            "dledger #316",
            "#316: truncation leaves committedIndex above ledgerEnd",
            "step-conformance:handle_push",
            ("step-conformance:handle_push", "applied-committed-end",),
            procedures=lambda p: attrs.evolve(p, handle_push=_no_clamp_after_truncate),
        ),
        Mutant(
            "compare-ignores-term",
            None,
            "a follower's COMPARE matches by index alone: it keeps a conflicting prefix (Raft's log matching)",
            "step-conformance:handle_push",
            ("step-conformance:handle_push", "log-matching", "committed-prefix"),
            procedures=lambda p: attrs.evolve(p, handle_push=_compare_ignores_term),
        ),
        Mutant(
            "g1-commit-rule",
            None,
            "G2 log with G1's commit rule: an old-term entry commits by counting (Raft figure 8)",
            "step-conformance:leader_commit_index",
            ("step-conformance:leader_commit_index", "leader-commit-rule", "leader-completeness", "committed-prefix"),
            procedures=lambda p: attrs.evolve(p, leader_commit_index=_g1_commit_rule),
        ),
        Mutant(
            "issue282-vote-blocked-while-candidate",
            "dledger #282",
            "#282: vote requests are not answered while the node's own vote round is open",
            "step-conformance:handle_vote",
            ("step-conformance:handle_vote", "liveness",),
            procedures=lambda p: attrs.evolve(p, answer_votes_while_campaigning=False),
        ),
        Mutant(
            "heartbeat-no-expired-term",
            None,
            "handle_heartbeat skips the expired-term check: a deposed leader's heartbeat is acknowledged",
            "step-conformance:handle_heartbeat",
            ("step-conformance:handle_heartbeat",),
            procedures=lambda p: attrs.evolve(p, handle_heartbeat=_heartbeat_no_expired_term),
        ),
        Mutant(
            "not-ready-counts-as-vote",
            None,
            "a REJECT_TERM_NOT_READY reply counts as a vote: a candidate leads without a quorum of votes",
            "step-conformance:parse_vote_result",
            ("step-conformance:parse_vote_result", "election-safety"),
            procedures=lambda p: attrs.evolve(p, parse_vote_result=_not_ready_counts_as_vote),
        ),
        Mutant(
            "follower-times-out-early",
            None,
            "a follower steps down after one heartbeat interval without a heartbeat, not after the lease",
            "step-conformance:follower_timed_out",
            ("step-conformance:follower_timed_out",),
            procedures=lambda p: attrs.evolve(p, follower_timed_out=_follower_times_out_early,
                                              follower_timeout_at=_follower_timeout_at_early),
        ),
        Mutant(
            "append-without-compare",
            None,
            "the leader's dispatcher appends without comparing first: a follower's log is extended unchecked",
            "step-conformance:next_push",
            ("step-conformance:next_push",),
            procedures=lambda p: attrs.evolve(p, next_push=_append_without_compare),
        ),
        Mutant(
            "follower-appends-client-entry",
            None,
            "a node that does not lead appends a client's entry to its own log",
            "step-conformance:client_append",
            ("step-conformance:client_append",),
            procedures=lambda p: attrs.evolve(p, client_entry=_any_node_appends),
        ),
        Mutant(
            "follower-never-times-out",
            None,
            "followers never time out: after the leader dies nobody campaigns",
            "liveness",
            ("liveness",),
            procedures=lambda p: attrs.evolve(p, follower_timed_out=lambda now, last, timing=None: False,
                                              follower_timeout_at=lambda last, timing=None: None),
        ),
        Mutant(
            "lease-never-expires",
            None,
            "a leader cut off from its quorum never steps down: the heartbeat round has no lease row",
            "leader-lease",
            ("leader-lease", "step-conformance:decide_heartbeat_round"),
            profile=lambda p: attrs.evolve(
                p, heartbeat_order=tuple(r for r in p.heartbeat_order if r != "lease_expired")),
        ),
        Mutant(
            "client-entry-next-term",
            None,
            "the leader labels a client's entry with the term after its current one (an off-by-one)",
            "log-terms",
            ("log-terms", "step-conformance:client_append"),
            procedures=lambda p: attrs.evolve(p, client_entry=_entry_of_next_term),
        ),
        Mutant(
            "append-keeps-next-index",
            None,
            "a successful APPEND raises the follower's match index but not its write index (match >= next), "
            "and the compare after the refused repeat sets the match index back",
            "follower-progress",
            ("follower-progress", "step-conformance:next_push"),
            procedures=lambda p: attrs.evolve(p, on_push_response=_append_keeps_next_index),
        ),
        Mutant(
            "watermark-off-by-one",
            None,
            "the leader's commit watermark is the (n-1)/2-th highest match instead of the n/2-th: "
            "in a group of 4 it commits what 2 nodes hold",
            "leader-commit-rule",
            ("leader-commit-rule", "step-conformance:leader_commit_index"),
            procedures=lambda p: attrs.evolve(p, leader_commit_index=_watermark_off_by_one),
        ),
        Mutant(
            "truncation-not-durable",
            None,
            "a truncation changes the log in memory only: a crash right after it brings the entries back",
            "restart-durable",
            ("restart-durable", "step-conformance:persist"),
            procedures=lambda p: attrs.evolve(p, persist_truncation=False),
        ),
    )
}


def get_mutant(name: str) -> Mutant:
    try:
        return MUTANTS[name]
    except KeyError:
        raise KeyError(f"unknown mutant {name!r} (known: {', '.join(sorted(MUTANTS))})") from None
