"""Where DLedger releases differ, as named data.

A profile names, for each decision procedure, the ordered table of rules it
follows; the procedures (``vote.py``, ``candidate.py``, ``heartbeat.py``, ``log.py``)
look the rows up by name. Nothing in a procedure tests the profile's name.

| profile       | releases                          | vote | parse | hb round | log | initial term |
|---------------|-----------------------------------|------|-------|----------|-----|--------------|
| dledger-0.1   | release-0.1                       | V-A  | P-A   | H-A      | G1  | -1           |
| dledger-0.2   | 0.2.3 … 0.3.1.2 (RocketMQ 4.9.x)  | V-B  | P-B   | H-A      | G1  | 0            |
| dledger-0.4   | 0.4.0, master (RocketMQ 5.x)      | V-B  | P-B   | H-B      | G2  | 0            |
"""
from __future__ import annotations

from typing import Literal

import attrs

# handle_vote check rows (spec/dledger/vote.py), first match wins, else ACCEPT.
VOTE_ORDER_V_B = (
    "unknown_leader",
    "unexpected_leader",
    "expired_ledger_term",
    "small_ledger_end_index",
    "expired_vote_term",
    "already_voted_this_term",
    "term_not_ready",
    "term_small_than_ledger",
    "taking_leadership",
)
# release-0.1 checked terms before logs (PR #48 moved the log checks first).
VOTE_ORDER_V_A = (
    "unknown_leader",
    "unexpected_leader",
    "expired_vote_term",
    "already_voted_this_term",
    "term_not_ready",
    "expired_ledger_term",
    "small_ledger_end_index",
    "term_small_than_ledger",
)

# ParseResult rows (spec/dledger/candidate.py), first match wins, else WAIT_TO_VOTE_NEXT.
PARSE_ORDER_P_B = (
    "known_max_term_bigger",
    "already_has_leader_revote",
    "valid_not_quorum",
    "valid_minus_bigger_not_quorum",
    "accepted_quorum",
    "accepted_plus_not_ready_quorum",
)
PARSE_ORDER_P_A = (
    "known_max_term_bigger",
    "already_has_leader_vote_next",
    "valid_not_quorum",
    "accepted_quorum",
    "accepted_plus_not_ready_quorum",
    "accepted_plus_bigger_quorum",
)

# Leader heartbeat-round rows (spec/dledger/heartbeat.py), first match wins, else KEEP.
HEARTBEAT_ORDER_H_A = (
    "quorum_ack",
    "quorum_with_not_ready",
    "higher_term",
    "inconsistent_leader",
    "lease_expired",
)
# 0.3.2+ looks at the largest term first (fixes #247: a leader with a quorum kept
# ignoring a higher term).
HEARTBEAT_ORDER_H_B = (
    "higher_term",
    "quorum_ack",
    "quorum_with_not_ready",
    "inconsistent_leader",
    "lease_expired",
)

LogGeneration = Literal["G1", "G2"]
TakingLeadershipRule = Literal["none", "0.2.0", "0.2.3"]


@attrs.frozen(slots=True)
class Profile:
    name: str
    releases: str
    vote_order: tuple[str, ...]
    parse_order: tuple[str, ...]
    heartbeat_order: tuple[str, ...]
    log_generation: LogGeneration
    initial_term: int
    # toFollower resets lastParseResult to WAIT_TO_REVOTE (PR #37; absent in 0.1)
    follower_resets_parse_result: bool
    taking_leadership: TakingLeadershipRule
    # release-0.1 added the last round's duration to the next vote time
    vote_interval_adds_last_cost: bool


DLEDGER_0_1 = Profile(
    name="dledger-0.1",
    releases="release-0.1",
    vote_order=VOTE_ORDER_V_A,
    parse_order=PARSE_ORDER_P_A,
    heartbeat_order=HEARTBEAT_ORDER_H_A,
    log_generation="G1",
    initial_term=-1,
    follower_resets_parse_result=False,
    taking_leadership="none",
    vote_interval_adds_last_cost=True,
)
DLEDGER_0_2 = Profile(
    name="dledger-0.2",
    releases="0.2.3 ... 0.3.1.2 (RocketMQ 4.9.x)",
    vote_order=VOTE_ORDER_V_B,
    parse_order=PARSE_ORDER_P_B,
    heartbeat_order=HEARTBEAT_ORDER_H_A,
    log_generation="G1",
    initial_term=0,
    follower_resets_parse_result=True,
    taking_leadership="0.2.3",
    vote_interval_adds_last_cost=False,
)
DLEDGER_0_4 = Profile(
    name="dledger-0.4",
    releases="0.4.0, master (RocketMQ 5.x)",
    vote_order=VOTE_ORDER_V_B,
    parse_order=PARSE_ORDER_P_B,
    heartbeat_order=HEARTBEAT_ORDER_H_B,
    log_generation="G2",
    initial_term=0,
    follower_resets_parse_result=True,
    taking_leadership="0.2.3",
    vote_interval_adds_last_cost=False,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (DLEDGER_0_1, DLEDGER_0_2, DLEDGER_0_4)}
DEFAULT_PROFILE = DLEDGER_0_4


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown DLedger profile {name!r} (known: {', '.join(PROFILES)})") from None


@attrs.frozen(slots=True)
class Timing:
    """DLedgerConfig timing, in milliseconds (defaults are DLedger's)."""

    heartbeat_interval_ms: int = 2000
    max_heartbeat_leak: int = 3
    min_vote_interval_ms: int = 300
    max_vote_interval_ms: int = 1000
    min_take_leadership_vote_interval_ms: int = 30
    max_take_leadership_vote_interval_ms: int = 100
    # a vote round waits 2000 + rand[0, maxVoteIntervalMs) ms for replies
    vote_round_base_wait_ms: int = 2000
    # the leader decides 10 ms after its heartbeat latch opens (voteResultWaitTime)
    heartbeat_result_wait_ms: int = 10
    # the entry pusher gives up on a push after this long and compares again
    push_timeout_ms: int = 1000
    # an idle dispatcher sends COMMIT this often so followers learn the commit index
    commit_push_interval_ms: int = 1000

    @property
    def lease_ms(self) -> int:
        """maxHeartBeatLeak * heartBeatTimeIntervalMs: follower timeout and leader lease."""
        return self.max_heartbeat_leak * self.heartbeat_interval_ms


DEFAULT_TIMING = Timing()
