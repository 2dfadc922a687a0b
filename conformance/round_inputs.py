"""Arguments for the round operations (``dledger.heartbeat_round``, ``dledger.candidate_round``).

One generator per operation, driven by a ``random.Random``: the differential tests wrap
them as Hypothesis strategies (``st.randoms``), the fingerprint and the transcript
recorder call them with seeded generators, so every judge asks the same kind of
question. They aim at the boundaries of time as much as at the decision tables:
replies arrive in clusters (ties, a few ms apart, around the 10 ms sleep of 0.3.2+),
near the latch timeouts and past them; the leader's timestamps sit around the send
interval and the lease; groups of one to five nodes (a group of one is a case of its
own); the random values take their extremes.
"""
from __future__ import annotations

import random

from spec.dledger.candidate import VOTE_INTERVAL, VOTE_WAIT, draw_bound
from spec.dledger.member_state import NEVER, MemberView
from spec.dledger.profiles import DEFAULT_TIMING
from spec.dledger.records import HeartBeatResponse, ParseResult, ResponseCode, Role, VoteResponse, VoteResult
from spec.dledger.rounds import CandidateState, HeartbeatReply, LeaderTimes, RoundDraws, VoteReply

# A maintainer run "now", far from 0 so that -1 ("never") is long ago, as on a wall clock.
NOW = 1_000_000
T = DEFAULT_TIMING
HB, LEASE = T.heartbeat_interval_ms, T.lease_ms
# the times a round may end at after it started: latch timeouts (0.3.2+, before) and vote rounds
_HB_EDGES = (0, HB - 20, HB - 10, HB - 1, HB, HB + 1, HB + 10)
_VOTE_EDGES = (0, 2000, 2999, 3000, 3999, 4000)
_HB_CODES = (ResponseCode.SUCCESS,) * 5 + (ResponseCode.EXPIRED_TERM, ResponseCode.EXPIRED_TERM,
                                           ResponseCode.INCONSISTENT_LEADER, ResponseCode.TERM_NOT_READY,
                                           ResponseCode.TERM_NOT_READY, ResponseCode.UNKNOWN_MEMBER,
                                           ResponseCode.UNEXPECTED_MEMBER)
# every result a voter can answer (REJECT_TAKING_LEADERSHIP counts like REJECT_ALREADY_VOTED and
# does not exist in release-0.1, so it is left out of the replies)
_VOTE_RESULTS = tuple(r for r in VoteResult if r is not VoteResult.REJECT_TAKING_LEADERSHIP)


def _peers(rng: random.Random) -> frozenset[str]:
    n = rng.choice((1, 2, 3, 3, 3, 4, 5, 5))
    return frozenset(f"n{i}" for i in range(1, n + 1))


def _arrivals(rng: random.Random, peers: list[str], edges: tuple[int, ...], span: int) -> list[tuple[str, int]]:
    """Who answers, and when: clustered around one instant, or spread, or at an edge."""
    centre = rng.choice(edges) if rng.random() < 0.4 else rng.randrange(0, span)
    out = []
    for p in peers:
        if rng.random() < 0.12:
            continue  # never answers in this round
        style = rng.random()
        if style < 0.5:
            at = centre + rng.randint(-12, 12)
        elif style < 0.7:
            at = centre + rng.choice((0, 0, 10, -10, 1, -1))
        else:
            at = rng.randrange(0, span)
        out.append((p, max(0, at)))
    rng.shuffle(out)
    return out


def heartbeat_round_args(rng: random.Random) -> dict:
    peers = _peers(rng)
    term = rng.randint(0, 6)
    member = MemberView("n1", peers, term, rng.choice((None, "n1")), "n1", Role.LEADER,
                        rng.randint(-1, term), rng.randint(-1, 5))
    send = rng.random()
    last_send = NEVER if send < 0.2 else NOW - HB + rng.randint(-2, 2) if send < 0.4 else NOW - rng.randint(0, 3 * HB)
    # lease boundaries: the decision comes at the latch timeout (NOW + HB) or when the latch opens
    succ = rng.random()
    if succ < 0.15:
        last_succ = NEVER
    elif succ < 0.55:
        last_succ = NOW + rng.choice(_HB_EDGES) + rng.randint(-12, 12) - LEASE
    else:
        last_succ = NOW - rng.randint(0, 2 * LEASE)
    replies = []
    for peer, at in _arrivals(rng, sorted(peers - {"n1"}), _HB_EDGES, HB + 200):
        if rng.random() < 0.08:
            replies.append(HeartbeatReply(peer, at, None))
            continue
        code = rng.choice(_HB_CODES)
        reply_term = rng.randint(term - 1, term + 2) if code is ResponseCode.EXPIRED_TERM else -1
        replies.append(HeartbeatReply(peer, at, HeartBeatResponse(reply_term, code)))
    return {"member": member, "now": NOW, "times": LeaderTimes(last_send, last_succ), "replies": tuple(replies)}


def candidate_round_args(rng: random.Random) -> dict:
    peers = _peers(rng)
    term = rng.randint(-1, 6)
    role = Role.CANDIDATE if rng.random() < 0.95 else rng.choice((Role.FOLLOWER, Role.LEADER))
    member = MemberView("n1", peers, term, rng.choice((None, None, "n1", "n2")), None, role,
                        rng.randint(-1, max(term, -1) + 1), rng.randint(-1, 5))
    nxt = rng.random()
    next_time = -1 if nxt < 0.3 else NOW + rng.randint(-2, 2) if nxt < 0.6 else NOW + rng.randint(-3000, 3000)
    preferred = rng.random() < 0.15
    state = CandidateState(
        next_time, rng.random() < 0.2, rng.choice(list(ParseResult)), rng.choice((0, 0, rng.randint(0, 4000))),
        rng.choice((-1, -1, rng.randint(-1, term + 3))), preferred,
        rng.choice((-1, term, term + 1)) if preferred else -1)
    replies = []
    for peer, at in _arrivals(rng, sorted(peers - {"n1"}), _VOTE_EDGES, 4200):
        if rng.random() < 0.08:
            replies.append(VoteReply(peer, at, None))
            continue
        result = rng.choice(_VOTE_RESULTS + (VoteResult.ACCEPT,) * 4)
        replies.append(VoteReply(peer, at, VoteResponse(rng.randint(term - 1, term + 3), result)))
    interval_bound = draw_bound(VOTE_INTERVAL, T, taking_leadership=preferred)
    draws = RoundDraws(_edge_or_any(rng, draw_bound(VOTE_WAIT, T)), _edge_or_any(rng, interval_bound))
    return {"member": member, "now": NOW, "state": state, "replies": tuple(replies), "draws": draws}


def _edge_or_any(rng: random.Random, bound: int) -> int:
    return rng.choice((0, bound - 1)) if rng.random() < 0.3 else rng.randrange(bound)


ROUND_INPUTS = {
    "dledger.heartbeat_round": heartbeat_round_args,
    "dledger.candidate_round": candidate_round_args,
}
