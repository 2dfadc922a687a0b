"""MemberState: the node's view of itself, and the rules of its role changes.

``MemberView`` is the read-only snapshot every DLedger decision procedure takes.
The role-change guards are DLedger's (``changeToLeader`` / ``changeToFollower``
require currTerm == term, ``changeToCandidate`` requires term >= currTerm); the
node applies the effects of a decision only through these functions.
"""
from __future__ import annotations

import attrs

from spec.dledger.profiles import Profile
from spec.dledger.records import DEFAULT_GROUP, NO_INDEX, NO_TERM, ParseResult, Role

# "Never" for the elector's timestamps (lastLeaderHeartBeatTime, lastSendHeartBeatTime,
# lastSuccHeartBeatTime): DLedger initialises them to -1 and measures elapsed time
# against wall-clock milliseconds, so "never" is always longer ago than any interval.
NEVER = -1


def elapsed(now: int, since: int) -> float:
    """DLedgerUtils.elapsed with ``NEVER`` meaning infinitely long ago."""
    return float("inf") if since == NEVER else now - since


@attrs.frozen(slots=True)
class MemberView:
    self_id: str
    peers: frozenset[str]  # every peer id, self included
    curr_term: int
    voted_for: str | None = None
    leader_id: str | None = None
    role: Role = Role.CANDIDATE
    ledger_end_term: int = NO_TERM
    ledger_end_index: int = NO_INDEX
    taking_leadership: bool = False
    group: str = DEFAULT_GROUP

    @property
    def peer_size(self) -> int:
        return len(self.peers)


# DLedgerServer checks every vote and heartbeat request before its elector sees it (all
# releases): the request's remoteId must be this node (else UNKNOWN_MEMBER), then its
# group this node's (else UNKNOWN_GROUP). A candidate's own vote skips the server.


def addressed_to_another(member: MemberView, remote_id: str | None) -> bool:
    return remote_id is not None and remote_id != member.self_id


def of_another_group(member: MemberView, group: str) -> bool:
    return group != member.group


def may_become_leader(curr_term: int, term: int) -> bool:
    return curr_term == term


def may_become_follower(curr_term: int, term: int) -> bool:
    return curr_term == term


def parse_result_after_becoming_follower(last: ParseResult, profile: Profile) -> ParseResult:
    """changeToFollower resets lastParseResult to WAIT_TO_REVOTE (since PR #37), so the
    first vote round after a follower times out is at the current term; release-0.1
    keeps the last round's result (profile ``follower_resets_parse_result``)."""
    return ParseResult.WAIT_TO_REVOTE if profile.follower_resets_parse_result else last


def may_become_candidate(curr_term: int, term: int) -> bool:
    return term >= curr_term


def known_max_term_after_candidate(known_max_term: int, term: int) -> int:
    """changeToCandidate raises knownMaxTermInGroup (it is never reset)."""
    return term if term > known_max_term else known_max_term


def next_term(curr_term: int, known_max_term: int) -> int:
    """MemberState.nextTerm(): jump to the largest known term, else increment.

    The caller also clears currVoteFor and persists (currTerm, currVoteFor).
    """
    return known_max_term if known_max_term > curr_term else curr_term + 1


def _taking_since_0_2_3(self_id, preferred, term_to_take, curr_term) -> bool:
    return bool(preferred) and term_to_take == curr_term and self_id in preferred


def _taking_0_2_0(self_id, preferred, term_to_take, curr_term) -> bool:
    return self_id in preferred or term_to_take == curr_term


def _never_taking(self_id, preferred, term_to_take, curr_term) -> bool:
    return False


TAKING_LEADERSHIP_RULES = {"0.2.3": _taking_since_0_2_3, "0.2.0": _taking_0_2_0, "none": _never_taking}


def is_taking_leadership(
    profile: Profile,
    self_id: str,
    preferred_leader_ids: frozenset[str],
    term_to_take_leadership: int,
    curr_term: int,
) -> bool:
    """Whether a leadership transferee is campaigning for the term it was handed.

    From 0.2.3: preferred leaders configured, the transfer term is now, and self is
    among them. 0.2.0–0.2.2 (rule "0.2.0"): self is the preferred leader, or the
    transfer term is now. Absent in release-0.1 (rule "none").
    """
    rule = TAKING_LEADERSHIP_RULES[profile.taking_leadership]
    return rule(self_id, preferred_leader_ids, term_to_take_leadership, curr_term)
