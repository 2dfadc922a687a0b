"""Recorded transcripts: a real implementation's answers to handler-level calls, judged without it.

``record`` asks an implementation (any adapter: a real jar through ``jvm:dledger``, a
shim over stdio) a large seeded sample of calls, compares every answer with the spec
under the profile the implementation is judged against, and writes a transcript: a
header (implementation, version, profile, how the build was made, the sample size and
how many answers agreed) and a selection of the calls with the real answers, every
path through the spec represented. ``replay`` judges a transcript against the spec as
it is now, with no implementation at hand: CI replays the committed DLedger
transcripts (``tests/transcripts/``), so a change to a rule or to the timing model that
breaks fidelity to the real code fails CI without a jar.

Format (``rmqha-transcript/1``): gzip-compressed JSON lines; the first line is the
header, every other line ``{"op", "args", "answer"}`` with values in the adapter
protocol's encoding (``adapters/codec.py``), or ``{"op", "args", "error"}`` where the
implementation threw. A transcript is data, never instructions: replaying one starts
nothing.

A recorded answer that is not the spec's but reproduces a known upstream departure
(``conformance/departures.py``) is counted under the departure's name, both when
recording and when replaying; only an unexplained difference is a mismatch. The header
names the profile per namespace (``profiles``) where an implementation declares several.
"""
from __future__ import annotations

import gzip
import itertools
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

import attrs

from adapters import codec
from adapters.errors import ImplementationFailed, NotApplicable, UserError, quoted
from adapters.operations import OPERATIONS
from adapters.protocol import Unsupported, parse_json
from conformance.departures import known_departure, known_throw
from conformance.differential import judged_profile
from conformance.handler_check import draw_samples
from conformance.round_inputs import ROUND_INPUTS
from conformance.strategies import ARGUMENTS
from spec.controller.elect_policy import java_hash_set_order
from spec.controller.records import CleanBrokerDataRequest

FORMAT = "rmqha-transcript/1"


@attrs.frozen(slots=True)
class Entry:
    op: str
    args: dict
    answer: Any  # the implementation's answer, decoded (None with an error)
    error: str | None = None  # what the implementation threw instead of answering


@attrs.frozen(slots=True)
class Mismatch:
    op: str
    args: dict
    got: Any
    expected: Any

    def render(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.op}({shown}):\n  recorded: {self.got!r}\n  spec:     {self.expected!r}"


@attrs.frozen(slots=True)
class Replay:
    header: dict
    profile: str  # what the calls were judged against, for the summary line
    calls: dict  # op -> how many calls were replayed
    mismatches: tuple[Mismatch, ...]
    paths: dict  # op -> {path label: count} (which rows and timing paths the transcript reaches)
    departures: dict = attrs.field(factory=dict)  # op -> {departure label: count}: explained differences

    @property
    def agreed(self) -> bool:
        return not self.mismatches and sum(self.calls.values()) > 0


# ------------------------------------------------------------------ reading


def _bad(path: Path, what: str) -> UserError:
    return UserError(f"{path}: not an {FORMAT} transcript ({what})")


def load(path: str | Path) -> tuple[dict, list[Entry]]:
    """The header and the calls of a transcript (bad input: a one-line ``UserError``)."""
    path = Path(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = [parse_json(line.strip()) for line in f if line.strip()]
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"{type(exc).__name__}: {exc}") from None
    if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != FORMAT:
        raise _bad(path, "no header line")
    header, entries = lines[0], []
    for i, raw in enumerate(lines[1:], start=2):
        try:
            op = OPERATIONS[raw["op"]]
            reg = codec.registry(op.namespace)
            args = {p: codec.decode(raw["args"][p], t, reg, f"line {i}: {p}") for p, t in op.params}
            if "error" in raw:
                entries.append(Entry(op.name, args, None, str(raw["error"])))
                continue
            entries.append(Entry(op.name, args, codec.decode(raw["answer"], op.result, reg, f"line {i}: answer")))
        except KeyError as exc:  # a field the line lacks, or an operation nobody knows
            what = (f"unknown operation {exc.args[0]!r}" if isinstance(raw, dict) and raw.get("op") == exc.args[0]
                    else f"no {exc.args[0]!r}")
            raise _bad(path, f"line {i}: {what}") from None
        except (TypeError, codec.CodecError) as exc:
            raise _bad(path, f"line {i}: {exc}") from None
    return header, entries


def replay(path: str | Path, profile: str | None = None) -> Replay:
    """Judge every recorded answer against the spec (under the transcript's profile, or ``profile``).
    A transcript without calls judges nothing: bad input, never a verdict."""
    header, entries = load(path)
    if not entries:
        raise UserError(f"{path}: no recorded calls: nothing was judged")
    profiles = _known_profiles(path, header, profile)
    calls: dict[str, int] = defaultdict(int)
    paths: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    departures: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    mismatches = []
    used: dict[str, None] = {}  # the profiles calls were judged against (an ordered set)
    for e in entries:
        op = OPERATIONS[e.op]
        judged = (profile or profiles.get(op.namespace) or header.get("profile")) if op.profiles else None
        if op.profiles and judged is None:
            # no default: a transcript is judged against the profile its implementation was
            # recorded under, and a guess would make a verdict of what was never declared
            raise UserError(f"{path}: the header names no {op.namespace} profile, which {e.op} needs "
                            f"(known: {', '.join(op.profiles)}); name one with --profile")
        if op.profiles and judged not in op.profiles:
            named = f"--profile names {quoted(profile)}" if profile else f"the transcript names {quoted(judged)}"
            raise UserError(f"{path}: {e.op} needs a {op.namespace} profile (one of {', '.join(op.profiles)}), "
                            f"{named}")
        if judged is not None:
            used[judged] = None
        spec = op.spec(judged, **e.args)
        calls[e.op] += 1
        paths[e.op][path_of(e.op, e.args, spec)] += 1
        expected = op.canonical(spec)
        if e.error is not None:
            departure = known_throw(e.op, e.args)
            got = f"threw: {e.error}"
        else:
            got = op.canonical(e.answer)
            departure = None if got == expected else known_departure(e.op, judged, e.args, got)
        if departure is not None:
            departures[e.op][departure.label()] += 1
        elif got != expected:
            mismatches.append(Mismatch(e.op, e.args, got, expected))
    judged_against = (", ".join(used) or profile or header.get("profile")
                      or "no profile (no recorded call depends on one)")
    return Replay(header, judged_against, dict(calls), tuple(mismatches),
                  {k: dict(v) for k, v in paths.items()}, {k: dict(v) for k, v in departures.items()})


def _known_profiles(path: str | Path, header: dict, profile: str | None) -> dict:
    """The header's profiles per family. ``profile`` (the user's, which replaces them) or else
    each the header names must be one rmqha knows: bad input naming it and the known ones,
    never a verdict "judged against" a profile rmqha does not have."""
    families: dict[str, dict] = defaultdict(dict)  # family -> its profiles (an ordered set)
    for op in OPERATIONS.values():
        families[op.namespace].update(dict.fromkeys(op.profiles))
    every = tuple(dict.fromkeys(p for names in families.values() for p in names))
    if profile is not None and profile not in every:
        raise UserError(f"unknown profile {quoted(profile)} (known: {', '.join(every)})")
    profiles = header.get("profiles") or {}
    if not isinstance(profiles, dict) or not all(isinstance(v, str) for v in profiles.values()):
        raise _bad(Path(path), f"header field 'profiles' is {quoted(profiles)}, not an object of profile names")
    named = [(f"{family} profile", name, families[family]) for family, name in sorted(profiles.items())
             if families.get(family)]  # a family no operation depends on (raft) names no profile rmqha judges
    if header.get("profile") is not None:
        named.append(("profile", header["profile"], every))
    for what, name, known in named:
        if profile is None and name not in known:
            raise UserError(f"{path}: the header names {what} {quoted(name)}, which rmqha does not know "
                            f"(known: {', '.join(known)})")
    return profiles


# ------------------------------------------------------------------ which path a call takes


def path_of(op: str, args: dict, spec_result: Any) -> str:
    """A short label of the rows and the timing path the spec takes for one call."""
    label = _PATHS.get(op)
    return label(args, spec_result) if label else type(spec_result).__name__


def _heartbeat_path(args: dict, r) -> str:
    if not r.sent:
        return "not sent"
    waited = r.returns_at - args["now"]
    # every release's round lasts at most one interval (2000 ms by default): the latch timed out
    wait = "one-node" if args["member"].peer_size == 1 else "timed out" if waited >= 2000 else "latch opened"
    return f"{r.outcome.value} ({wait})"


def _candidate_path(args: dict, r) -> str:
    if r.parse is None:
        return (r.action.value if r.action else "not a candidate")
    waited = r.returns_at - args["now"]
    # every release waits at least 2000 ms for votes unless the latch opens
    how = "one-node" if args["member"].peer_size == 1 else "timed out" if waited >= 2000 else "latch opened"
    return f"{r.action.value} {r.parse.value} ({how})"


def _controller_path(args: dict, r) -> str:
    request = args["request"]
    label = f"{type(request).__name__} {r.check}" + (f" {r.detail}" if r.detail else "")
    if isinstance(request, CleanBrokerDataRequest):
        label += (" forced" if request.clean_living_broker else "") + (" ids" if request.broker_ids_to_clean else "")
    if r.detail.endswith("best_candidate"):
        label += _election_label(args, r)
    if r.check in ("member_not_registered", "member_not_alive"):
        members = request.new_sync_state_set
        label += " (HashSet order)" if java_hash_set_order(members) != sorted(members) else ""
    return label


def _election_label(args: dict, r) -> str:
    """What decided a policy election: offsets 2^31 apart, a priority, the HashSet order among equals."""
    found, live = args["metadata"].get(args["request"].broker_name), args["liveness"]
    pool = found.sync_state.sync_state_set if "sync_state_set" in r.detail else found.replicas.all_brokers()
    infos = [i for i in (live.live_info(found.cluster_name, args["request"].broker_name, b) for b in pool
                         if live.is_alive(found.cluster_name, args["request"].broker_name, b)) if i is not None]
    if not infos:
        return ""
    keys = {i.broker_id: (i.epoch, i.max_offset, i.election_priority) for i in infos}
    best = keys.get(r.response.master_broker_id)
    offsets = [k[1] for k in keys.values()]
    label = " far offsets" if max(offsets) - min(offsets) >= 2**31 else ""
    tied = [b for b, k in keys.items() if k == best]
    if len(tied) > 1:  # equals: the first in HashSet order, which is not the smallest id from 16 on
        label += " tie" + (" not the smallest id" if r.response.master_broker_id != min(tied) else "")
    elif [k for k in keys.values() if k[:2] == best[:2] and k != best]:
        label += " by priority"
    return label


def _epoch_file_change(args: dict, r) -> str:
    before = args["epoch_file"]
    if r == before:
        return "unchanged"
    return f"{len(before.entries) - len(r.entries)} dropped" + (", open" if r.last_end is None else ", closed")


_PATHS: dict[str, Callable[[dict, Any], str]] = {
    "dledger.heartbeat_round": _heartbeat_path,
    "dledger.candidate_round": _candidate_path,
    "controller.handle": _controller_path,
    "controller.apply_event": lambda a, r: type(a["event"]).__name__ + (" (no change)" if r == a["metadata"] else ""),
    "controller.on_broker_heartbeat": lambda a, r: ("refresh" if a["heartbeat"].identity in a["table"].entries
                                                    else "first heartbeat")
    + (" with a confirmOffset" if a["heartbeat"].confirm_offset > 0 else ""),
    "controller.is_broker_active": lambda a, r: "active" if r else "not active",
    "controller.scan_not_active_broker": lambda a, r: f"{len(r[1])} expired",
    "truncation.find_consistent_point": lambda a, r: "no point" if r == -1 else "point",
    "truncation.append": lambda a, r: r[1].value,
    **{op: _epoch_file_change for op in ("truncation.truncate_suffix_by_offset", "truncation.truncate_suffix_by_epoch",
                                         "truncation.truncate_prefix_by_offset", "truncation.set_last_end")},
    **{op: (lambda a, r: "none" if r is None else "found")
       for op in ("truncation.find_entry_by_offset", "truncation.find_entry_by_epoch", "truncation.next_entry")},
}


# ------------------------------------------------------------------ recording


@attrs.frozen(slots=True)
class Recording:
    header: dict
    kept: int
    mismatches: tuple[Mismatch, ...]


def record(adapter, inputs: dict[str, Callable[[random.Random], dict]], samples: int, keep: int,
           out: str | Path, source: str = "", seed: str = "rmqha-transcript", progress=None) -> Recording:
    """Ask ``adapter`` ``samples`` seeded calls of each operation of ``inputs``; write ``keep`` of each.

    The kept calls cover every path (``path_of``) the sample reached, then fill up in
    the order they were asked. Every asked call is compared with the spec; the header
    says how many agreed.
    """
    info = adapter.info
    profiled = [n for n in inputs if OPERATIONS[n].profiles]
    missing = sorted({OPERATIONS[n].namespace for n in profiled} - set(info.profiles))
    if missing:
        raise UserError(f"{adapter.spec}: no {missing[0]} profile to judge against; declare one "
                        f"(e.g. jvm:dledger=PROFILE:... or jvm:rocketmq=PROFILE:...)")
    agreement, mismatches, kept_lines = {}, [], []
    for name, make in inputs.items():
        op = OPERATIONS[name]
        profile = judged_profile(adapter, name)
        rng = random.Random(f"{seed}:{name}")
        by_path: dict[str, list] = defaultdict(list)
        agreed = judged = 0
        departed: dict[str, int] = defaultdict(int)
        for _ in range(samples):
            args = make(rng)
            encoded = {k: codec.encode(v) for k, v in args.items()}
            spec = op.spec(profile, **args)
            line: dict = {"op": name, "args": encoded}
            try:
                raw_answer = adapter.call(name, encoded)
            except Unsupported:
                continue  # an input the implementation is not driven with: nothing to record
            except ImplementationFailed as exc:
                departure, got = known_throw(name, args), f"threw: {exc}"
                line["error"] = str(exc)
            else:
                got = op.canonical(adapter.decode_result(name, raw_answer))
                departure = None if got == op.canonical(spec) else known_departure(name, profile, args, got)
                line["answer"] = raw_answer
            judged += 1
            if got == op.canonical(spec):
                agreed += 1
            elif departure is not None:
                departed[departure.label()] += 1
            else:
                mismatches.append(Mismatch(name, args, got, op.canonical(spec)))
            where = path_of(name, args, spec) + (f" [{departure.name}]" if departure is not None else "")
            by_path[where].append(line)
            if progress is not None:
                progress()
        agreement[name] = {"asked": judged, "agreed": agreed, **({"departures": dict(departed)} if departed else {})}
        kept_lines.extend(_select(by_path, keep))
    if not any(a["asked"] for a in agreement.values()):
        # an empty transcript would replay as a file with nothing in it, not as what it is:
        # an implementation that judged nothing (so none is written)
        raise NotApplicable(f"{adapter.spec} answered 'unsupported' to every call ({samples} each) of "
                            f"{', '.join(inputs)}: nothing judged, no transcript written")
    header = {"format": FORMAT, "implementation": info.implementation, "version": info.version,
              "profile": info.profiles.get("dledger") or next(iter(info.profiles.values()), None),
              "profiles": dict(info.profiles), "adapter": adapter.spec, "source": source, "seed": seed,
              "agreement": agreement}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        for line in [header, *kept_lines]:
            f.write(json.dumps(line, separators=(",", ":"), sort_keys=True) + "\n")
    return Recording(header, len(kept_lines), tuple(mismatches))


def inputs_for(operations: Iterable[str], samples: int) -> dict[str, Callable[[random.Random], dict]]:
    """Argument generators per operation: the round operations' own (``round_inputs``), else
    ``samples`` arguments drawn from the differential tests' strategy, asked in order."""
    out = {}
    for name in operations:
        if name in ROUND_INPUTS:
            out[name] = ROUND_INPUTS[name]
        elif name in ARGUMENTS:
            drawn = itertools.cycle(draw_samples(name, samples))
            out[name] = lambda rng, drawn=drawn: next(drawn)
        else:
            raise UserError(f"--operation {name}: not a handler-level operation (see docs/adapter-protocol.md)")
    return out


def _select(by_path: dict[str, list], keep: int) -> Iterable[dict]:
    """Round-robin over the paths, rarest first, so that rare ones are all kept and common ones fill up."""
    queues = [list(v) for _, v in sorted(by_path.items(), key=lambda kv: (len(kv[1]), kv[0]))]
    out: list[dict] = []
    while len(out) < keep and any(queues):
        for q in queues:
            if q and len(out) < keep:
                out.append(q.pop(0))
    return out
