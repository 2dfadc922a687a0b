"""Handler level, differentially: the same arguments to an implementation and to the spec.

``compare(adapter, operation, args)`` asks the implementation (through any transport)
and the spec (under the profile the implementation declares, or a given one) the same
question and returns the disagreement, if any, in the parts that matter for
conformance (``Operation.canonical``: outcome, reply and effects, never the name of
the spec's internal table row). A disagreement that reproduces a known upstream
departure names it (``conformance/departures.py``): departures are data, reported as
such, never a generic disagreement. The pytest differential tests and ``rmqha
fingerprint`` are both built on it.
"""
from __future__ import annotations

from typing import Any

import attrs

from adapters.errors import ImplementationFailed
from adapters.operations import OPERATIONS, namespace_profile
from adapters.transports import ProtocolAdapter
from conformance.departures import Departure, known_departure, known_throw


def render_call(operation: str, args: dict) -> str:
    """A handler-level call as Python, e.g. ``truncation.append(epoch_file=EpochFile(...), ...)``."""
    return f"{operation}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


@attrs.frozen(slots=True)
class Disagreement:
    operation: str
    profile: str | None
    args: dict
    got: Any
    expected: Any
    # the known upstream departure the implementation's answer reproduces (None: unexplained)
    departure: Departure | None = None

    @property
    def explained(self) -> bool:
        return self.departure is not None

    def render(self) -> str:
        under = f" under {self.profile}" if self.profile else ""
        known = (f"\n  known departure: {self.departure.label()}: {self.departure.description}"
                 if self.departure else "")
        return (f"{render_call(self.operation, self.args)}:\n  implementation: {self.got!r}\n"
                f"  spec{under}:    {self.expected!r}{known}")


def judged_profile(adapter: ProtocolAdapter, operation: str) -> str | None:
    """The profile ``operation`` is judged under: the one the implementation declares."""
    return namespace_profile(operation, adapter.info.profiles)


def spec_answer(operation: str, profile: str | None, args: dict) -> Any:
    op = OPERATIONS[operation]
    return op.canonical(op.spec(profile, **args))


def implementation_answer(adapter: ProtocolAdapter, operation: str, args: dict) -> Any:
    """The implementation's canonical answer (``AdapterError``/``Unsupported`` propagate)."""
    return OPERATIONS[operation].canonical(adapter.invoke(operation, args))


def compare(adapter: ProtocolAdapter, operation: str, args: dict, profile: str | None = None) -> Disagreement | None:
    """None when the answers agree; else the disagreement, naming the known upstream
    departure it reproduces if there is one (``conformance/departures.py``)."""
    profile = profile if profile is not None else judged_profile(adapter, operation)
    expected = spec_answer(operation, profile, args)
    try:
        got = implementation_answer(adapter, operation, args)
    except ImplementationFailed as exc:
        departure = known_throw(operation, args)
        if departure is None:
            raise
        return Disagreement(operation, profile, args, f"threw: {exc}", expected, departure)
    if got == expected:
        return None
    return Disagreement(operation, profile, args, got, expected, known_departure(operation, profile, args, got))
