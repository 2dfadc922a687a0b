"""Which profile does each procedure of an implementation match?

The handler-level fingerprint feeds the same deterministic batch of inputs to an
implementation's decision procedures and to the spec under every profile, and lists,
per procedure, the profiles whose answers it reproduces exactly. A release whose
profile is unknown is named by its fingerprint (for example 0.3.2, which combines
H-B with G1 logs, shows ``heartbeat_round: dledger-0.4`` and ``log: dledger-0.1/0.2``).
"""
from __future__ import annotations

import random
from typing import Callable

from conformance.errors import UserError
from spec.dledger import candidate, heartbeat, log, vote
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import DEFAULT_TIMING, PROFILES, Profile
from spec.dledger.records import (
    Entry,
    HeartBeatRequest,
    PushEntryRequest,
    PushType,
    Role,
    VoteRequest,
    VoteResponse,
    VoteResult,
)

SAMPLES = 1500
IDS = ("n1", "n2", "n3", "x9")


def _member(rng: random.Random) -> MemberView:
    return MemberView(
        self_id="n1",
        peers=frozenset({"n1", "n2", "n3"}),
        curr_term=rng.randint(-1, 6),
        voted_for=rng.choice((None,) + IDS),
        leader_id=rng.choice((None,) + IDS[:3]),
        role=rng.choice(list(Role)),
        ledger_end_term=rng.randint(-1, 6),
        ledger_end_index=rng.randint(-1, 5),
        taking_leadership=rng.random() < 0.2,
    )


def _vote_inputs(rng):
    return (_member(rng), VoteRequest(rng.randint(-1, 7), rng.choice(IDS), rng.randint(-1, 6), rng.randint(-1, 5)),
            rng.random() < 0.1)


def _parse_inputs(rng):
    counts = candidate.start_vote_counts(rng.randint(0, 5))
    n = rng.choice((1, 2, 3, 4, 5))
    for _ in range(rng.randint(0, n)):
        counts = candidate.count_vote(counts, None if rng.random() < 0.1 else VoteResponse(
            rng.randint(0, 8), rng.choice(list(VoteResult))))
    return counts, n


def _round_inputs(rng):
    n = rng.choice((1, 2, 3, 4, 5))
    c = heartbeat.HeartbeatCounts(rng.randint(0, 5), rng.randint(1, n), rng.randint(1, n), rng.randint(0, n),
                                  rng.random() < 0.2, rng.randint(-1, 8))
    return c, n, 10_000, rng.choice((-1, 2_000, 5_000, 9_000))


def _log(rng, length):
    terms = sorted(rng.randint(1, 4) for _ in range(length))
    return [Entry(i, t, f"e{i}") for i, t in enumerate(terms)]


def _push_inputs(rng):
    member = _member(rng)
    kind = rng.choice(list(PushType))
    flog = _log(rng, rng.randint(0, 5))
    entries = tuple(Entry(len(flog) + i, 5, "x") for i in range(rng.randint(0, 2)))
    request = PushEntryRequest(member.curr_term if rng.random() < 0.7 else rng.randint(-1, 6),
                               member.leader_id or "n2", kind, rng.randint(-1, 6),
                               rng.randint(-1, 6), rng.randint(-1, 4), entries)
    return member, request, flog, rng.randint(-1, 3)


def _commit_inputs(rng):
    flog = _log(rng, rng.randint(1, 6))
    return [rng.randint(-1, len(flog) - 1) for _ in range(3)], flog, rng.randint(1, 5), rng.randint(-1, 2)


# procedure name -> (input generator, call(procedures, profile, inputs), call(spec, profile, inputs))
PROCEDURES: dict[str, tuple[Callable, Callable]] = {
    "handle_vote": (_vote_inputs, lambda p, prof, x: p.handle_vote(x[0], x[1], x[2], prof)),
    "handle_heartbeat": (lambda rng: (_member(rng), HeartBeatRequest(rng.randint(-1, 7), rng.choice(IDS))),
                         lambda p, prof, x: p.handle_heartbeat(x[0], x[1])),
    "parse_vote_result": (_parse_inputs, lambda p, prof, x: p.parse_vote_result(x[0], x[1], prof)),
    "heartbeat_round": (_round_inputs, lambda p, prof, x: p.decide_heartbeat_round(x[0], x[1], x[2], x[3],
                                                                                   DEFAULT_TIMING, prof)),
    "handle_push": (_push_inputs, lambda p, prof, x: p.handle_push(x[0], x[1], x[2], x[3], prof)),
    "commit_rule": (_commit_inputs, lambda p, prof, x: p.leader_commit_index(x[0], x[1], x[2], x[3],
                                                                             prof.log_generation)),
}


def _canonical(decision):
    """Compare decisions by outcome and effects, not by the name of the deciding row."""
    fields = [f for f in ("result", "reply_term", "code", "outcome", "next_vote", "effects", "response")
              if hasattr(decision, f)]
    return tuple(getattr(decision, f) for f in fields) if fields else decision


def fingerprint_procedures(procedures, profile: Profile, samples: int = SAMPLES) -> dict[str, list[str]]:
    """For each procedure, the profiles whose spec answers equal ``procedures``' on every sample."""
    from reference.procedures import REFERENCE_PROCEDURES

    matches: dict[str, list[str]] = {}
    for name, (make, call) in PROCEDURES.items():
        rng = random.Random(f"fingerprint:{name}")
        inputs = [make(rng) for _ in range(samples)]
        got = [_canonical(call(procedures, profile, x)) for x in inputs]
        matches[name] = [
            p.name for p in PROFILES.values()
            if all(_canonical(call(REFERENCE_PROCEDURES, p, x)) == g for x, g in zip(inputs, got))
        ]
    return matches


def render(matches: dict[str, list[str]]) -> str:
    def short(names):
        if not names:
            return "no profile"
        head, *rest = names
        return "/".join([head] + [n.replace("dledger-", "") for n in rest])

    return "; ".join(f"{proc}: {short(names)}" for proc, names in matches.items())


def describe_adapter(adapter: str, scenario: str, profile: str | None) -> dict:
    """Implementation name, version, profile and (for in-process DLedger nodes) fingerprint."""
    if scenario != "dledger":
        from conformance.campaign import get_scenario

        get_scenario(scenario)
        return {"adapter": adapter, "implementation": adapter, "version": None, "profile": profile,
                "fingerprint": None}
    from conformance.targets import dledger_target

    target = dledger_target(adapter, profile, DEFAULT_TIMING)
    node = target.make_node("n1", ("n1", "n2", "n3"), lambda bound: 0, None, 0)
    procedures = getattr(node, "proc", None)
    matches = fingerprint_procedures(procedures, target.profile) if procedures is not None else None
    return {
        "adapter": adapter,
        "implementation": target.implementation,
        "version": target.version,
        "profile": target.profile.name,
        "fingerprint": matches,
        "fingerprint_text": render(matches) if matches is not None else None,
    }


