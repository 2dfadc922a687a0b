"""Which profile does each procedure of an implementation match?

The handler-level fingerprint feeds the same deterministic batch of inputs to an
implementation's decision procedures and to the spec under every profile, and lists,
per procedure, the profiles whose answers it reproduces exactly. A release whose
profile is unknown is named by its fingerprint (for example 0.3.2, which combines
H-B with G1 logs, shows ``heartbeat_round: dledger-0.4`` and ``log: dledger-0.1/0.2``).
"""
from __future__ import annotations

import random
from typing import Any, Callable

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


def _args(*names):
    return lambda x: dict(zip(names, x))


# fingerprint name -> (input generator, the protocol operation, inputs -> its arguments)
PROCEDURES: dict[str, tuple[Callable, str, Callable]] = {
    "handle_vote": (_vote_inputs, "dledger.handle_vote", _args("member", "request", "self_vote")),
    "handle_heartbeat": (lambda rng: (_member(rng), HeartBeatRequest(rng.randint(-1, 7), rng.choice(IDS))),
                         "dledger.handle_heartbeat", _args("member", "request")),
    "parse_vote_result": (_parse_inputs, "dledger.parse_vote_result", _args("counts", "peer_size")),
    "heartbeat_round": (_round_inputs, "dledger.decide_heartbeat_round",
                        _args("counts", "peer_size", "now", "last_succ_heartbeat_time")),
    "handle_push": (_push_inputs, "dledger.handle_push",
                    lambda x: {"member": x[0], "request": x[1], "log": tuple(x[2]), "committed_index": x[3]}),
    "commit_rule": (_commit_inputs, "dledger.leader_commit_index",
                    lambda x: {"match_indexes": tuple(x[0]), "log": tuple(x[1]), "curr_term": x[2],
                               "committed_index": x[3]}),
}

Answer = Callable[[str, dict], Any]  # (operation, arguments) -> the canonical answer


def fingerprint(answer: Answer, samples: int = SAMPLES) -> dict[str, list[str] | None]:
    """For each procedure, the profiles whose spec answers equal ``answer``'s on every sample.

    ``None`` marks a procedure the implementation does not offer (not applicable).
    """
    from adapters.protocol import Unsupported
    from conformance.differential import spec_answer

    matches: dict[str, list[str] | None] = {}
    for name, (make, operation, to_args) in PROCEDURES.items():
        rng = random.Random(f"fingerprint:{name}")
        inputs = [to_args(make(rng)) for _ in range(samples)]
        try:
            got = [answer(operation, args) for args in inputs]
        except Unsupported:
            matches[name] = None
            continue
        matches[name] = [p for p in PROFILES
                         if all(spec_answer(operation, p, args) == g for args, g in zip(inputs, got))]
    return matches


def fingerprint_procedures(procedures, profile: Profile, samples: int = SAMPLES) -> dict[str, list[str]]:
    """The fingerprint of in-process decision procedures (the reference's or a mutant's) under ``profile``."""
    from adapters.operations import OPERATIONS, PROCEDURE_CALLS

    def answer(operation: str, args: dict):
        return OPERATIONS[operation].canonical(PROCEDURE_CALLS[operation](procedures, profile, args))

    return fingerprint(answer, samples)


def fingerprint_adapter(adapter, samples: int = SAMPLES) -> dict[str, list[str] | None]:
    """The fingerprint of any implementation, asked through the adapter protocol."""
    from adapters.protocol import Unsupported
    from conformance.differential import implementation_answer

    def answer(operation: str, args: dict):
        if not adapter.info.supports(operation):
            raise Unsupported(operation)
        return implementation_answer(adapter, operation, args)

    return fingerprint(answer, samples)


def render(matches: dict[str, list[str] | None]) -> str:
    def short(names):
        if names is None:
            return "not applicable"
        if not names:
            return "no profile"
        head, *rest = names
        return "/".join([head] + [n.replace("dledger-", "") for n in rest])

    return "; ".join(f"{proc}: {short(names)}" for proc, names in matches.items())


def describe_adapter(adapter: str, scenario: str, profile: str | None) -> dict:
    """Implementation name, version, profile and handler-level fingerprint of ``adapter``."""
    if scenario == "dledger":
        from conformance.targets import dledger_target

        target = dledger_target(adapter, profile, DEFAULT_TIMING)
        name, version, profile = target.implementation, target.version, target.profile.name
        if adapter == "reference" or adapter.startswith("mutant:"):
            node = target.make_node("n1", ("n1", "n2", "n3"), lambda bound: 0, None, 0)
            matches = fingerprint_procedures(node.proc, target.profile)
        else:
            matches = _foreign_fingerprint(adapter)
    else:
        from conformance.campaign import get_scenario

        get_scenario(scenario)
        if scenario == "raft":
            from adapters import resolve

            info = resolve(adapter).info
            name, version = info.implementation, info.version
        else:
            name, version = adapter, None
        matches = None
    return {
        "adapter": adapter,
        "implementation": name,
        "version": version,
        "profile": profile,
        "fingerprint": matches,
        "fingerprint_text": render(matches) if matches is not None else None,
    }


def _foreign_fingerprint(adapter: str) -> dict | None:
    from adapters import resolve

    connected = resolve(adapter)
    if not any(connected.info.supports(op) for _, op, _ in PROCEDURES.values()):
        return None
    return fingerprint_adapter(connected)
