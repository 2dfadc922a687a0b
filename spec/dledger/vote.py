"""handle_vote: how a node answers a VoteRequest (DLedgerLeaderElector.handleVote).

The checks are rows of a table, evaluated in the profile's order; the first row that
matches decides. V-B (0.2+) checks the logs before the terms; V-A (release-0.1)
checks the terms first and has no taking-leadership row.

| row                       | condition                                                   | result                        | reply term | effects |
|---------------------------|-------------------------------------------------------------|-------------------------------|------------|---------|
| wrong_remote              | not self and req.remoteId != me (DLedgerServer)             | UNKNOWN, code UNKNOWN_MEMBER  | req.term   |         |
| wrong_group               | not self and req.group != my group (DLedgerServer)          | UNKNOWN, code UNKNOWN_GROUP   | req.term   |         |
| unknown_leader            | candidate not a peer                                        | REJECT_UNKNOWN_LEADER         | C          |         |
| unexpected_leader         | not self and candidate == me                                | REJECT_UNEXPECTED_LEADER      | C          |         |
| expired_ledger_term       | req.ledgerEndTerm < lt                                      | REJECT_EXPIRED_LEDGER_TERM    | C          |         |
| small_ledger_end_index    | req.ledgerEndTerm == lt and req.ledgerEndIndex < li         | REJECT_SMALL_LEDGER_END_INDEX | C          |         |
| expired_vote_term         | req.term < C                                                | REJECT_EXPIRED_VOTE_TERM      | C          |         |
| already_voted_this_term   | req.term == C, V not in {null, candidate}: L set / L null    | REJECT_ALREADY_HAS_LEADER / REJECT_ALREADY_VOTED | C |   |
| term_not_ready            | req.term > C                                                | REJECT_TERM_NOT_READY         | C (old)    | toCandidate(req.term); needIncreaseTermImmediately |
| term_small_than_ledger    | req.term < lt                                               | REJECT_TERM_SMALL_THAN_LEDGER | lt         |         |
| taking_leadership         | not self, taking, req.ledgerEndTerm == lt, li >= req.index  | REJECT_TAKING_LEADERSHIP      | C          |         |
| (otherwise)               |                                                             | ACCEPT                        | C          | V := candidate; persist |

handle_vote never changes currTerm. Voting again for the same candidate in the same
term is allowed even when a leader is known.
"""
from __future__ import annotations

from typing import Callable

import attrs

from spec.dledger.effects import INCREASE_TERM_IMMEDIATELY, BecomeCandidate, SetVotedFor
from spec.dledger.member_state import MemberView, addressed_to_another, of_another_group
from spec.dledger.profiles import DEFAULT_PROFILE, Profile
from spec.dledger.records import ResponseCode, VoteRequest, VoteResult


@attrs.frozen(slots=True)
class VoteDecision:
    result: VoteResult
    reply_term: int
    effects: tuple = ()
    row: str = "accept"  # the table row that decided
    code: ResponseCode = ResponseCode.SUCCESS  # not SUCCESS only when DLedgerServer rejected the request


def _reject(result: VoteResult, row: str, term: int) -> VoteDecision:
    return VoteDecision(result, term, (), row)


def wrong_remote(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if not self_vote and addressed_to_another(v, r.remote_id):
        return VoteDecision(VoteResult.UNKNOWN, r.term, (), "wrong_remote", ResponseCode.UNKNOWN_MEMBER)
    return None


def wrong_group(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if not self_vote and of_another_group(v, r.group):
        return VoteDecision(VoteResult.UNKNOWN, r.term, (), "wrong_group", ResponseCode.UNKNOWN_GROUP)
    return None


def unknown_leader(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.candidate not in v.peers:
        return _reject(VoteResult.REJECT_UNKNOWN_LEADER, "unknown_leader", v.curr_term)
    return None


def unexpected_leader(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if not self_vote and r.candidate == v.self_id:
        return _reject(VoteResult.REJECT_UNEXPECTED_LEADER, "unexpected_leader", v.curr_term)
    return None


def expired_ledger_term(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.ledger_end_term < v.ledger_end_term:
        return _reject(VoteResult.REJECT_EXPIRED_LEDGER_TERM, "expired_ledger_term", v.curr_term)
    return None


def small_ledger_end_index(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.ledger_end_term == v.ledger_end_term and r.ledger_end_index < v.ledger_end_index:
        return _reject(
            VoteResult.REJECT_SMALL_LEDGER_END_INDEX, "small_ledger_end_index", v.curr_term
        )
    return None


def expired_vote_term(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.term < v.curr_term:
        return _reject(VoteResult.REJECT_EXPIRED_VOTE_TERM, "expired_vote_term", v.curr_term)
    return None


def already_voted_this_term(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.term == v.curr_term and v.voted_for is not None and v.voted_for != r.candidate:
        if v.leader_id is not None:
            return _reject(
                VoteResult.REJECT_ALREADY_HAS_LEADER, "already_voted_this_term", v.curr_term
            )
        return _reject(VoteResult.REJECT_ALREADY_VOTED, "already_voted_this_term", v.curr_term)
    return None


def term_not_ready(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.term > v.curr_term:
        # Step down to candidate at the larger term; the node's own candidate round
        # moves currTerm (nextTerm) before it may vote in that term.
        return VoteDecision(
            VoteResult.REJECT_TERM_NOT_READY,
            v.curr_term,
            (BecomeCandidate(r.term), INCREASE_TERM_IMMEDIATELY),
            "term_not_ready",
        )
    return None


def term_small_than_ledger(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if r.term < v.ledger_end_term:
        # The reply carries the ledger's term so the candidate learns how far to jump.
        return _reject(
            VoteResult.REJECT_TERM_SMALL_THAN_LEDGER, "term_small_than_ledger", v.ledger_end_term
        )
    return None


def taking_leadership(v: MemberView, r: VoteRequest, self_vote: bool) -> VoteDecision | None:
    if (
        not self_vote
        and v.taking_leadership
        and r.ledger_end_term == v.ledger_end_term
        and v.ledger_end_index >= r.ledger_end_index
    ):
        return _reject(VoteResult.REJECT_TAKING_LEADERSHIP, "taking_leadership", v.curr_term)
    return None


VoteCheck = Callable[[MemberView, VoteRequest, bool], "VoteDecision | None"]

VOTE_CHECKS: dict[str, VoteCheck] = {
    f.__name__: f
    for f in (
        wrong_remote,
        wrong_group,
        unknown_leader,
        unexpected_leader,
        expired_ledger_term,
        small_ledger_end_index,
        expired_vote_term,
        already_voted_this_term,
        term_not_ready,
        term_small_than_ledger,
        taking_leadership,
    )
}


def accept(v: MemberView, r: VoteRequest) -> VoteDecision:
    return VoteDecision(VoteResult.ACCEPT, v.curr_term, (SetVotedFor(r.candidate),), "accept")


def handle_vote(
    voter: MemberView,
    request: VoteRequest,
    self_vote: bool = False,
    profile: Profile = DEFAULT_PROFILE,
) -> VoteDecision:
    """Answer ``request`` as ``voter`` would. ``self_vote``: the candidate asking itself."""
    for name in profile.vote_order:
        decision = VOTE_CHECKS[name](voter, request, self_vote)
        if decision is not None:
            return decision
    return accept(voter, request)


# Every outcome handle_vote can produce (for coverage reports).
VOTE_OUTCOMES = tuple(r.value for r in VoteResult)  # UNKNOWN: rejected by DLedgerServer
