"""Known-bad variants of the reference DLedger node ("mutants").

A check that no mutant can fail is not a check: each invariant in
``spec/invariants/dledger.py`` has at least one mutant here that violates it, and
tests/dledger/test_mutants.py shows it. Most mutants are real upstream bugs; each is
the reference node with one spec procedure (or one profile row) replaced, so the
mutation is exactly the bug and nothing else. Run one with ``--adapter mutant:NAME``.
"""
from __future__ import annotations

from typing import Callable

import attrs

from reference.procedures import REFERENCE_PROCEDURES, DLedgerProcedures
from spec.dledger import effects as fx
from spec.dledger.log import handle_push, leader_commit_index
from spec.dledger.records import Entry
from spec.dledger.profiles import HEARTBEAT_ORDER_H_A, PARSE_ORDER_P_B, VOTE_ORDER_V_A, Profile
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


def _entry_of_next_term(log, curr_term, body):
    # An off-by-one in the entry's term: the entry claims a term nobody has reached.
    return Entry(len(log), curr_term + 1, body)


def _g1_commit_rule(match_indexes, log, curr_term, committed_index, generation):
    # Raft's figure 8: commit the quorum watermark even when it is of an older term.
    return leader_commit_index(match_indexes, log, curr_term, committed_index, "G1")


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
            "one-vote-per-term",
            ("one-vote-per-term", "election-safety"),
            procedures=lambda p: attrs.evolve(p, persist_vote=False),
        ),
        Mutant(
            "term-not-durable",
            "dledger #85",
            "neither currTerm nor votedFor survives a restart (the term rolls back, cf. #85)",
            "term-monotonic",
            ("term-monotonic", "one-vote-per-term"),
            procedures=lambda p: attrs.evolve(p, persist_term=False),
        ),
        Mutant(
            "double-vote",
            None,
            "handle_vote forgets the already-voted row: a node grants every candidate of its term",
            "election-safety",
            ("election-safety", "one-vote-per-term"),
            procedures=lambda p: attrs.evolve(p, handle_vote=_ignores_vote_rows("already_voted_this_term")),
        ),
        Mutant(
            "no-log-check",
            None,
            "handle_vote skips the ledger comparison: an out-of-date candidate can win",
            "vote-log-up-to-date",
            ("vote-log-up-to-date", "leader-completeness", "committed-prefix"),
            procedures=lambda p: attrs.evolve(
                p, handle_vote=_ignores_vote_rows("expired_ledger_term", "small_ledger_end_index")
            ),
        ),
        Mutant(
            "pr48-term-before-log",
            "dledger PR #48",
            "PR #48: the term checks come before the log checks (V-A order in a 0.2+ node)",
            None,
            ("fingerprint",),
            profile=lambda p: attrs.evolve(p, vote_order=VOTE_ORDER_V_A),
        ),
        Mutant(
            "pr25-has-leader-votes-next",
            "dledger PR #25",
            "PR #25: ALREADY_HAS_LEADER parsed as WAIT_TO_VOTE_NEXT (term inflation under asymmetric partition)",
            None,
            ("fingerprint", "term inflation"),
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
            None,
            ("first round after a follower timeout is at the old term",),
            profile=lambda p: attrs.evolve(p, follower_resets_parse_result=False),
        ),
        Mutant(
            "issue247-ignore-higher-term",
            "dledger #247",
            "#247: a leader with a heartbeat quorum ignores a higher term (H-A order in a 0.4 node)",
            None,
            ("fingerprint",),
            profile=lambda p: attrs.evolve(p, heartbeat_order=HEARTBEAT_ORDER_H_A),
        ),
        Mutant(
            "issue52-end-term-from-curr-term",
            "dledger #52",
            "#52: a follower sets ledgerEndTerm from its currTerm instead of the entry's term",
            "ledger-end-term",
            ("ledger-end-term",),
            procedures=lambda p: attrs.evolve(p, ledger_end_term_after_append=lambda entry, curr_term: curr_term),
        ),
        Mutant(
            "issue278-commit-unclamped",
            "dledger #278",
            "#278: a follower's committedIndex follows the leader's beyond its own ledger end",
            "applied-committed-end",
            ("applied-committed-end",),
            procedures=lambda p: attrs.evolve(p, handle_push=_follower_commit_unclamped),
        ),
        Mutant(
            "issue316-no-clamp-after-truncate",
            "dledger #316",
            "#316: truncation leaves committedIndex above ledgerEnd",
            "applied-committed-end",
            ("applied-committed-end",),
            procedures=lambda p: attrs.evolve(p, handle_push=_no_clamp_after_truncate),
        ),
        Mutant(
            "compare-ignores-term",
            None,
            "a follower's COMPARE matches by index alone: it keeps a conflicting prefix (Raft's log matching)",
            "committed-prefix",
            ("log-matching", "committed-prefix"),
            procedures=lambda p: attrs.evolve(p, handle_push=_compare_ignores_term),
        ),
        Mutant(
            "g1-commit-rule",
            None,
            "G2 log with G1's commit rule: an old-term entry commits by counting (Raft figure 8)",
            "leader-completeness",
            ("leader-completeness", "committed-prefix"),
            procedures=lambda p: attrs.evolve(p, leader_commit_index=_g1_commit_rule),
        ),
        Mutant(
            "issue282-vote-blocked-while-candidate",
            "dledger #282",
            "#282: vote requests are not answered while the node's own vote round is open",
            "liveness",
            ("liveness",),
            procedures=lambda p: attrs.evolve(p, answer_votes_while_campaigning=False),
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
            ("leader-lease",),
            profile=lambda p: attrs.evolve(
                p, heartbeat_order=tuple(r for r in p.heartbeat_order if r != "lease_expired")),
        ),
        Mutant(
            "client-entry-next-term",
            None,
            "the leader labels a client's entry with the term after its current one (an off-by-one)",
            "log-terms",
            ("log-terms",),
            procedures=lambda p: attrs.evolve(p, leader_entry=_entry_of_next_term),
        ),
        Mutant(
            "truncation-not-durable",
            None,
            "a truncation changes the log in memory only: a crash right after it brings the entries back",
            "restart-durable",
            ("restart-durable",),
            procedures=lambda p: attrs.evolve(p, persist_truncation=False),
        ),
    )
}


def get_mutant(name: str) -> Mutant:
    try:
        return MUTANTS[name]
    except KeyError:
        raise KeyError(f"unknown mutant {name!r} (known: {', '.join(sorted(MUTANTS))})") from None
