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
    "wrong_remote",  # DLedgerServer, before the elector (every release)
    "wrong_group",
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
    "wrong_remote",
    "wrong_group",
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

@attrs.frozen(slots=True)
class Timing:
    """Every wait, timeout and random range of the elector, in milliseconds.

    Each profile carries the values of its releases (``Profile.timing``); where they
    come from upstream is ``TIMING_SOURCES`` (and the table in docs/dledger.md). The
    first six are ``DLedgerConfig`` defaults (the same in every release); the rest are
    written into ``DLedgerLeaderElector`` and changed between releases.
    """

    heartbeat_interval_ms: int = 2000
    # the lease: a leader steps down, a follower times out, after this many intervals
    max_heartbeat_leak: int = 3
    min_vote_interval_ms: int = 300
    max_vote_interval_ms: int = 1000
    min_take_leadership_vote_interval_ms: int = 30
    max_take_leadership_vote_interval_ms: int = 100
    # a vote round waits vote_round_base_wait_ms + rand[0, maxVoteIntervalMs) for replies
    vote_round_base_wait_ms: int = 2000
    # 0.3.2+: the heartbeat latch waits heartBeatTimeIntervalMs - this, then the leader
    # sleeps this long (voteResultWaitTime) and decides; before 0.3.2 it is 0 (the latch
    # waits the whole interval and the leader decides at once)
    heartbeat_result_wait_ms: int = 10
    # the StateMaintainer sleeps this long after every maintainState() call
    maintainer_sleep_ms: int = 10
    # a group of one: the leader counts itself (succNum starts at 1) but only a reply
    # counts the heartbeat latch down, so with no peer it waits the latch out every round
    one_node_leader_waits_latch: bool = True
    # the entry pusher gives up on a push after this long and compares again
    push_timeout_ms: int = 1000
    # an idle dispatcher sends COMMIT this often so followers learn the commit index
    commit_push_interval_ms: int = 1000

    @property
    def lease_ms(self) -> int:
        """maxHeartBeatLeak * heartBeatTimeIntervalMs: follower timeout and leader lease."""
        return self.max_heartbeat_leak * self.heartbeat_interval_ms

    @property
    def heartbeat_latch_wait_ms(self) -> int:
        """How long sendHeartbeats waits on its latch before it decides (or sleeps, 0.3.2+)."""
        return self.heartbeat_interval_ms - self.heartbeat_result_wait_ms


TIMING_0_1 = Timing(vote_round_base_wait_ms=3000, heartbeat_result_wait_ms=0)
TIMING_0_2 = Timing(heartbeat_result_wait_ms=0)
TIMING_0_4 = Timing()

# Where each value comes from upstream (openmessaging/dledger, DLedgerLeaderElector unless
# named), by release; docs/dledger.md shows the same table and a test keeps them equal.
# (``vote_interval_adds_last_cost`` is a field of the Profile itself.)
TIMING_SOURCES: dict[str, str] = {
    "heartbeat_interval_ms": "DLedgerConfig.heartBeatTimeIntervalMs = 2000 (release-0.1 .. master)",
    "max_heartbeat_leak": "DLedgerConfig.maxHeartBeatLeak = 3 (release-0.1 .. master)",
    "min_vote_interval_ms": "DLedgerConfig.minVoteIntervalMs = 300 (release-0.1 .. master)",
    "max_vote_interval_ms": "DLedgerConfig.maxVoteIntervalMs = 1000 (release-0.1 .. master)",
    "min_take_leadership_vote_interval_ms": "DLedgerConfig.minTakeLeadershipVoteIntervalMs = 30 (0.2.0 .. master; "
                                            "release-0.1 has no leadership transfer)",
    "max_take_leadership_vote_interval_ms": "DLedgerConfig.maxTakeLeadershipVoteIntervalMs = 100 (0.2.0 .. master)",
    "vote_round_base_wait_ms": "maintainAsCandidate: voteLatch.await(3000 + random.nextInt(maxVoteIntervalMs)) in "
                               "release-0.1, 2000 + ... from 0.2.0",
    "heartbeat_result_wait_ms": "sendHeartbeats: beatLatch.await(heartBeatTimeIntervalMs) up to 0.3.1.2; from 0.3.2 "
                                "beatLatch.await(heartBeatTimeIntervalMs - voteResultWaitTime) then "
                                "Thread.sleep(voteResultWaitTime), voteResultWaitTime = 10",
    "maintainer_sleep_ms": "StateMaintainer.doWork: maintainState(); sleep(10) (release-0.1 .. master)",
    "one_node_leader_waits_latch": "sendHeartbeats: beatLatch.countDown() only in a reply's whenComplete; a group of "
                                   "one sends nothing and waits the whole latch (release-0.1 .. master)",
    "Profile.vote_interval_adds_last_cost": "getNextTimeToRequestVote: now + lastVoteCost + min + rand in release-0.1; "
                                    "without lastVoteCost from 0.2.0",
    "push_timeout_ms": "rmqha's reference log (DLedgerConfig.maxPushTimeOutMs = 1000)",
    "commit_push_interval_ms": "rmqha's reference log (the pusher's idle COMMIT; not an elector value)",
}


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
    # every wait, timeout and random range of the elector in these releases
    timing: Timing = TIMING_0_4


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
    timing=TIMING_0_1,
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
    timing=TIMING_0_2,
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


DEFAULT_TIMING = DEFAULT_PROFILE.timing
