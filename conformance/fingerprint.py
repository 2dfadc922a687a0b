"""Which profile does each procedure of an implementation match?

The handler-level fingerprint feeds the same deterministic batch of inputs to an
implementation's decision procedures (through its adapter) and to the spec under
every profile, and lists, per procedure, the profiles whose answers it reproduces. A release whose
profile is unknown is named by its fingerprint (for example 0.3.2, which combines
H-B with G1 logs, shows ``heartbeat_round: dledger-0.4`` and ``log: dledger-0.1/0.2``).

Every profile-dependent operation is probed (DLedger's, the controller's calls, the classic
group's), with the differential tests' boundary-biased strata (DLedger's also with seeded
cases of their own). An operation no profile changes cannot name a profile: it is judged
against the spec and reported as "no profile variation" with its verdict
(``variation_free``), never as a match.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Optional

import attrs

from adapters import colocated_with, resolve
from adapters.errors import AdapterError, ImplementationFailed
from adapters.operations import OPERATIONS
from adapters.protocol import Unsupported
from conformance import round_inputs
from conformance.departures import known_departure, known_throw
from conformance.scenarios.registry import get_scenario
from conformance.handler_check import OperationVerdict, check_handlers, draw_samples
from conformance.targets import raft_nodes_are_dledger, resolve_targets, role_specs
from spec.controller.rules import UnsupportedRequest
from spec.dledger import candidate, heartbeat
from spec.invariants.dledger import NOT_PROMISED_AS_RAFT
from spec.dledger.member_state import MemberView
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

SAMPLES = 400
TIME_ONLY_HEARTBEAT = "dledger.heartbeat_round/time"
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


# operation -> deterministic argument generator (seeded, so every run asks the same)
INPUTS: dict[str, Callable] = {
    "dledger.handle_vote": lambda rng: dict(zip(("member", "request", "self_vote"), _vote_inputs(rng))),
    "dledger.handle_heartbeat": lambda rng: {"member": _member(rng),
                                             "request": HeartBeatRequest(rng.randint(-1, 7), rng.choice(IDS))},
    "dledger.parse_vote_result": lambda rng: dict(zip(("counts", "peer_size"), _parse_inputs(rng))),
    "dledger.decide_heartbeat_round": lambda rng: dict(zip(
        ("counts", "peer_size", "now", "last_succ_heartbeat_time"), _round_inputs(rng))),
    "dledger.handle_push": lambda rng: dict(zip(("member", "request", "log", "committed_index"), _push_inputs(rng))),
    "dledger.leader_commit_index": lambda rng: dict(zip(
        ("match_indexes", "log", "curr_term", "committed_index"), _commit_inputs(rng))),
}

def _time_only_heartbeat_round(rng):
    """A heartbeat round with no higher term in any reply: H-A and H-B agree on the rows, so
    whatever differs between releases is time (0.3.2+ waits 10 ms less and sleeps 10 ms)."""
    args = round_inputs.heartbeat_round_args(rng)
    term = args["member"].curr_term
    replies = tuple(attrs.evolve(r, response=attrs.evolve(r.response, term=min(r.response.term, term)))
                    if r.response is not None else r for r in args["replies"])
    return {**args, "replies": replies}


INPUTS.update(round_inputs.ROUND_INPUTS)
INPUTS[TIME_ONLY_HEARTBEAT] = _time_only_heartbeat_round
# a probe asks one operation with inputs of its own
PROBE_OPERATION = {TIME_ONLY_HEARTBEAT: "dledger.heartbeat_round"}

SHORT = {
    "dledger.handle_vote": "handle_vote",
    "dledger.handle_heartbeat": "handle_heartbeat",
    "dledger.parse_vote_result": "vote parse",
    "dledger.decide_heartbeat_round": "heartbeat round",
    "dledger.handle_push": "log push",
    "dledger.leader_commit_index": "commit rule",
    "dledger.heartbeat_round": "heartbeat round in time",
    TIME_ONLY_HEARTBEAT: "heartbeat timing alone",
    "dledger.candidate_round": "candidate round in time",
    "controller.handle": "controller calls",
}


# Every other operation whose answer depends on the profile (the controller's calls, the
# classic group's profile-dependent procedures) is probed with the differential tests'
# boundary-biased strata; so are the DLedger ones, on top of their seeded cases.
PROFILED = tuple(sorted(name for name, op in OPERATIONS.items() if op.profiles and name not in INPUTS))
# operations whose answer no profile changes: judged against the spec (one answer per input),
# reported as such, never as a profile match
VARIATION_FREE = tuple(sorted(name for name, op in OPERATIONS.items() if not op.profiles))


def probes() -> tuple[str, ...]:
    """Every probe the fingerprint takes, in the order it reports them."""
    return tuple(INPUTS) + PROFILED


def _samples(name: str, count: int) -> list[dict]:
    """The probe's inputs: its seeded cases (DLedger) and the operation's strata."""
    operation = PROBE_OPERATION.get(name, name)
    drawn = []
    if name in INPUTS:
        rng = random.Random(f"fingerprint:{name}")
        drawn = [INPUTS[name](rng) for _ in range(count)]
    if name not in PROBE_OPERATION:
        drawn += list(draw_samples(operation, count))
    return drawn


def _spec_answer(op, profile: str, args: dict):
    try:
        return op.canonical(op.spec(profile, **args))
    except UnsupportedRequest:  # a call this profile's release does not have
        return UnsupportedRequest


def fingerprint(adapter, samples: int = SAMPLES, progress=None,
                departures: Optional[dict[str, Counter]] = None) -> dict[str, list[str] | None]:
    """Probe -> the profiles whose spec answers the adapter reproduces on every sample judged.

    ``None`` for an operation the adapter does not implement, or answers ``unsupported`` for
    every input (not applicable: no sample judged). An answer that reproduces a known upstream
    departure (``conformance/departures.py``: upstream's own behaviour, or where it throws) keeps
    the profile it departs from, as ``rmqha check`` counts it; ``departures``, if given, gets
    probe -> how often each departure was seen.
    """
    with colocated_with(adapter):
        return _fingerprint(adapter, samples, progress, departures)


def _fingerprint(adapter, samples, progress, departures) -> dict[str, list[str] | None]:
    matches: dict[str, list[str] | None] = {}
    for name in probes():
        operation = PROBE_OPERATION.get(name, name)
        if operation not in adapter.info.operations:
            matches[name] = None
            continue
        op = OPERATIONS[operation]
        candidates, judged = list(op.profiles), 0
        for args in _samples(name, samples):
            try:
                answer = adapter.invoke(operation, args)
            except Unsupported:  # outside what the implementation drives
                continue
            except ImplementationFailed:
                thrown = known_throw(operation, args)
                if thrown is None:
                    raise
                judged += 1
                if departures is not None:
                    departures.setdefault(name, Counter())[thrown.label()] += 1
                continue
            judged += 1
            got = op.canonical(answer)
            kept, seen = [], None
            for p in candidates:
                if _spec_answer(op, p, args) == got:
                    kept.append(p)
                elif (departure := known_departure(operation, p, args, got)) is not None:
                    kept.append(p)
                    seen = seen or departure
            if seen is not None and departures is not None:
                departures.setdefault(name, Counter())[seen.label()] += 1
            candidates = kept
            if not candidates:
                break
        matches[name] = candidates if judged else None
        if progress is not None:
            progress()
    return matches


def variation_free(adapter, samples: int = SAMPLES, progress=None) -> list[OperationVerdict]:
    """The operations no profile changes that the adapter offers: each judged against the
    spec on the differential tests' strata (agrees, agrees but for known departures,
    disagrees, error, not applicable)."""
    return check_handlers(adapter, samples, progress, operations=VARIATION_FREE)


def render(matches: dict) -> str:
    def short(names):
        if names is None:
            return "not applicable"
        if not names:
            return "no profile"
        head, *rest = names
        return "/".join([head] + [n.replace("dledger-", "") for n in rest])

    # DLedger's probes all (a DLedger table) if the implementation answers any, the others where it does
    dledger = any(names is not None for op, names in matches.items() if op in INPUTS)
    return "; ".join(f"{SHORT.get(op, op)}: {short(names)}" for op, names in matches.items()
                     if names is not None or (dledger and op in INPUTS))


def describe_adapter(adapter: str, scenario: str, profile: str | None) -> dict:
    """Implementation name, version, profile and handler-level fingerprint of an adapter.

    A fingerprint that cannot be taken (the implementation fails at handler level) is
    recorded as such; the campaign still runs and reports the failures per run.
    """
    get_scenario(scenario)
    if scenario not in ("dledger", "raft"):
        # The handler-level fingerprint is DLedger's (and a raft group's node kind): the other
        # stacks (truncation, controller, classic, ...) record who runs each role.
        t = resolve_targets(scenario, adapter, profile)
        return {"adapter": adapter, "implementation": t.implementation, "version": t.version,
                "profile": profile, "fingerprint": None, "fingerprint_text": None}

    adapter = role_specs(scenario, adapter)[scenario]

    connected = resolve(adapter)
    info = connected.info
    try:
        matches = fingerprint(connected)
        text = render(matches)
    except AdapterError as exc:
        matches, text = None, f"not taken: {exc}"
    declared = info.profiles.get("dledger") if scenario == "dledger" else None
    return {
        "adapter": adapter,
        "implementation": info.implementation,
        "version": info.version,
        "profile": profile or declared,
        "fingerprint": matches,
        "fingerprint_text": text,
        "known_differences": raft_known_differences(info.profiles) if scenario == "raft" else [],
    }


def raft_known_differences(profiles: dict) -> list[str]:
    """The Raft invariants an implementation's ``raft`` nodes are known not to promise:
    those of DLedger (``NOT_PROMISED_AS_RAFT``) when its hello says they are DLedger nodes
    seen as Raft nodes (``"profiles": {"raft": "dledger-0.4"}``); none for a generic Raft."""
    return list(NOT_PROMISED_AS_RAFT) if raft_nodes_are_dledger(profiles) else []
