"""Handler-level check: every operation an implementation declares, judged against the spec.

``rmqha check`` runs it for an implementation that runs no nodes (the real classes behind
``jvm:rocketmq``, a handler-only shim): each declared operation gets a deterministic
sample of arguments from the same strategies as the differential tests
(``conformance/strategies.py``), and every answer is compared with the spec under the
profile the implementation is judged against. An answer that reproduces a known upstream
departure is counted under the departure's name (``conformance/departures.py``); any
other difference is a disagreement. The verdict of an operation: ``agrees``,
``agrees but for known departures``, ``disagrees``, ``error`` (the implementation
failed), or ``not applicable`` (it answered ``unsupported`` to every input).
"""
from __future__ import annotations

import functools
from collections import Counter
from typing import Callable, Optional

import attrs
from hypothesis import HealthCheck, Phase, given, settings

from adapters import colocated_with
from adapters.errors import AdapterError
from adapters.protocol import Unsupported
from conformance import draw_cache
from conformance.differential import Disagreement, compare, judged_profile, render_call
from conformance.strategies import ARGUMENTS, strata

DEFAULT_SAMPLES = 200


@functools.lru_cache(maxsize=256)
def draw_samples(operation: str, count: int) -> tuple[dict, ...]:
    """About ``count`` arguments of ``operation``, the same on every run: split across the
    operation's strata (each aim of its generator: every row, every comparison's edge) as the
    differential tests split them, at least one from each. (Kept: every judge in a process
    asks the same questions, drawn once; and on disk, ``conformance/draw_cache.py``.)"""
    cached = draw_cache.load(operation, count)
    if cached is not None:
        return cached
    drawn = _draw(operation, count)
    draw_cache.store(operation, count, drawn)
    return drawn


def _draw(operation: str, count: int) -> tuple[dict, ...]:
    drawn: list[dict] = []
    aims = strata(operation)
    for strategy in aims.values():
        @settings(max_examples=max(1, count // len(aims)), derandomize=True, database=None, deadline=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(strategy)
        def collect(args):
            drawn.append(args)

        collect()
    return tuple(drawn)


@attrs.frozen(slots=True)
class OperationVerdict:
    operation: str
    profile: Optional[str]
    judged: int
    agreed: int
    departures: dict  # departure label -> answers that reproduce it
    disagreements: tuple[Disagreement, ...]
    unsupported: int
    error: Optional[str] = None
    failed_input: Optional[str] = None  # the call the implementation failed on, as Python

    @property
    def verdict(self) -> str:
        if self.error:
            return "error"
        if not self.judged:
            return "not applicable"
        if self.disagreements:
            return "disagrees"
        return "agrees but for known departures" if self.departures else "agrees"

    def to_json(self) -> dict:
        return {"operation": self.operation, "profile": self.profile, "verdict": self.verdict,
                "judged": self.judged, "agreed": self.agreed, "known_departures": dict(self.departures),
                "disagreements": len(self.disagreements), "unsupported": self.unsupported, "error": self.error,
                "failed_input": self.failed_input,
                "first_disagreement": self.disagreements[0].render() if self.disagreements else None}


def check_handlers(adapter, samples: int = DEFAULT_SAMPLES, progress: Callable[[], None] | None = None,
                   operations=None) -> list[OperationVerdict]:
    """One verdict per operation the adapter declares (in name order; only ``operations`` if given)."""
    with colocated_with(adapter):
        return _check_handlers(adapter, samples, progress, operations)


def _check_handlers(adapter, samples, progress, operations) -> list[OperationVerdict]:
    verdicts = []
    wanted = set(ARGUMENTS) if operations is None else set(operations)
    for name in sorted(adapter.info.operations & wanted):
        profile = judged_profile(adapter, name)
        judged = agreed = unsupported = 0
        departures: Counter = Counter()
        disagreements: list[Disagreement] = []
        error = failed_input = None
        for args in draw_samples(name, samples):
            try:
                found = compare(adapter, name, args)
            except Unsupported:
                unsupported += 1
                continue
            except AdapterError as exc:
                error = str(exc)
                failed_input = render_call(name, args)
                break
            judged += 1
            if found is None:
                agreed += 1
            elif found.explained:
                departures[found.departure.label()] += 1
            else:
                disagreements.append(found)
        verdicts.append(OperationVerdict(name, profile, judged, agreed, dict(departures), tuple(disagreements),
                                         unsupported, error, failed_input))
        if progress is not None:
            progress()
    return verdicts


def verdict(verdicts: list[OperationVerdict]) -> str:
    """The implementation's verdict, in the words of a campaign report: ``errors`` if it failed
    anywhere, ``not conformant`` on a disagreement, ``not applicable`` if nothing was judged."""
    if any(v.verdict == "error" for v in verdicts):
        return "errors"
    if any(v.verdict == "disagrees" for v in verdicts):
        return "not conformant"
    return "conformant" if any(v.judged for v in verdicts) else "not applicable"


def render(info, verdicts: list[OperationVerdict]) -> str:
    """Markdown: the implementation, a table of verdicts, the known departures, the first disagreements."""
    lines = [f"# Handler-level conformance: {info.spec}", "",
             f"{info.implementation} {info.version}; "
             + ("; ".join(info.judged_against(f) for f in sorted(info.profiles)) or "no profile") + ".", "",
             "| operation | verdict | judged | agree | known departures | disagreements | unsupported |",
             "|---|---|---|---|---|---|---|"]
    for v in verdicts:
        known = "; ".join(f"{label} ×{n}" for label, n in sorted(v.departures.items())) or "–"
        lines.append(f"| {v.operation} | {v.verdict} | {v.judged} | {v.agreed} | {known} | {len(v.disagreements)} "
                     f"| {v.unsupported} |")
    for v in verdicts:
        if v.error:
            lines += ["", f"## {v.operation}: error", "", v.error]
            if v.failed_input:
                lines += ["", "on the call:", "", "```", v.failed_input, "```"]
        elif v.disagreements:
            lines += ["", f"## {v.operation}: first disagreement", "", "```", v.disagreements[0].render(), "```"]
    return "\n".join(lines) + "\n"


def summary(info, verdicts: list[OperationVerdict]) -> dict:
    """The JSON summary (``handler-level.json``): the implementation and each operation's verdict."""
    return {"adapter": info.spec, "implementation": info.implementation, "version": info.version,
            "profiles": info.profiles, "operations": [v.to_json() for v in verdicts]}
