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
protocol's encoding (``adapters/codec.py``). A transcript is data, never instructions:
replaying one starts nothing.
"""
from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

import attrs

from adapters import codec
from adapters.errors import UserError
from adapters.operations import OPERATIONS

FORMAT = "rmqha-transcript/1"


@attrs.frozen(slots=True)
class Entry:
    op: str
    args: dict
    answer: Any  # the implementation's answer, decoded


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
    profile: str | None
    calls: dict  # op -> how many calls were replayed
    mismatches: tuple[Mismatch, ...]
    paths: dict  # op -> {path label: count} (which rows and timing paths the transcript reaches)

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
            lines = [json.loads(line) for line in f if line.strip()]
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
            entries.append(Entry(op.name, args, codec.decode(raw["answer"], op.result, reg, f"line {i}: answer")))
        except (KeyError, TypeError, codec.CodecError) as exc:
            raise _bad(path, f"line {i}: {exc}") from None
    return header, entries


def replay(path: str | Path, profile: str | None = None) -> Replay:
    """Judge every recorded answer against the spec (under the transcript's profile, or ``profile``)."""
    header, entries = load(path)
    profile = profile or header.get("profile")
    calls: dict[str, int] = defaultdict(int)
    paths: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    mismatches = []
    for e in entries:
        op = OPERATIONS[e.op]
        if op.profiles and profile not in op.profiles:
            raise UserError(f"{path}: {e.op} needs a profile (one of {', '.join(op.profiles)}), "
                            f"the transcript names {profile!r}")
        spec = op.spec(profile, **e.args)
        calls[e.op] += 1
        paths[e.op][path_of(e.op, e.args, spec)] += 1
        got, expected = op.canonical(e.answer), op.canonical(spec)
        if got != expected:
            mismatches.append(Mismatch(e.op, e.args, got, expected))
    return Replay(header, profile, dict(calls), tuple(mismatches), {k: dict(v) for k, v in paths.items()})


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


_PATHS: dict[str, Callable[[dict, Any], str]] = {
    "dledger.heartbeat_round": _heartbeat_path,
    "dledger.candidate_round": _candidate_path,
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
    from conformance.differential import judged_profile

    info = adapter.info
    profile = info.profiles.get("dledger")
    if profile is None:
        raise UserError(f"{adapter.spec}: no profile to judge against; declare one (jvm:dledger=PROFILE:...)")
    agreement, mismatches, kept_lines = {}, [], []
    for name, make in inputs.items():
        op = OPERATIONS[name]
        rng = random.Random(f"{seed}:{name}")
        by_path: dict[str, list] = defaultdict(list)
        agreed = 0
        for _ in range(samples):
            args = make(rng)
            raw_answer = adapter.call(name, {k: codec.encode(v) for k, v in args.items()})
            answer = codec.decode(raw_answer, op.result, codec.registry(op.namespace), "result")
            spec = op.spec(judged_profile(adapter, name), **args)
            if op.canonical(answer) == op.canonical(spec):
                agreed += 1
            else:
                mismatches.append(Mismatch(name, args, op.canonical(answer), op.canonical(spec)))
            by_path[path_of(name, args, spec)].append(
                {"op": name, "args": {k: codec.encode(v) for k, v in args.items()}, "answer": raw_answer})
            if progress is not None:
                progress()
        agreement[name] = {"asked": samples, "agreed": agreed}
        kept_lines.extend(_select(by_path, keep))
    header = {"format": FORMAT, "implementation": info.implementation, "version": info.version,
              "profile": profile, "adapter": adapter.spec, "source": source, "seed": seed,
              "agreement": agreement}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        for line in [header, *kept_lines]:
            f.write(json.dumps(line, separators=(",", ":"), sort_keys=True) + "\n")
    return Recording(header, len(kept_lines), tuple(mismatches))


def _select(by_path: dict[str, list], keep: int) -> Iterable[dict]:
    """Round-robin over the paths, so that rare ones are all kept and common ones fill up."""
    queues = [list(v) for _, v in sorted(by_path.items())]
    out: list[dict] = []
    while len(out) < keep and any(queues):
        for q in queues:
            if q and len(out) < keep:
                out.append(q.pop(0))
    return out
