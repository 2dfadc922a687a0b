"""Fault mixes: which nemeses a generated run may use, by the names campaigns take.

A campaign rotates its fault mixes by seed (``conformance.campaign.plan_configs``); each
scenario's generator draws its faults from the mix of its run.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from conformance.errors import UserError

# Faults of an implementation's own connections (``reset A B``, ``half-open A B``): for
# nodes that hold connections (their hello lists ``link_faults``, e.g. ``pysyncobj:tcp``;
# adapters/simulated_tcp.py). Not in the default rotation: nodes that only exchange
# messages have no connection to fault (the steps are not applicable to them).
LINK_FAULTS: tuple[str, ...] = ("reset", "half-open")

FAULT_MIXES: dict[str, tuple[str, ...]] = {
    "none": (),
    "crash": ("crash", "crash-leader"),
    "partition": ("partition", "block", "isolate-leader"),
    "lossy": ("lossy",),
    "mixed": ("crash", "crash-leader", "partition", "block", "isolate-leader", "lossy"),
    "transport": ("crash", "crash-leader", "lossy") + LINK_FAULTS,
}
# the mixes of scenarios whose generators write no connection faults (truncation,
# controller, classic): asking them for "transport" is an unknown fault mix
MESSAGE_FAULT_MIXES: dict[str, tuple[str, ...]] = {
    name: faults for name, faults in FAULT_MIXES.items() if not set(faults) & set(LINK_FAULTS)}

# what campaigns and mutation testing rotate through when no --fault-mix is given
DEFAULT_FAULT_MIXES: tuple[str, ...] = ("mixed", "crash", "partition", "lossy", "none")


def faults_of(mix: str, mixes: Mapping[str, tuple[str, ...]] = FAULT_MIXES) -> tuple[str, ...]:
    """The nemeses of ``mix``; an unknown mix is one line naming the known ones."""
    if mix not in mixes:
        raise UserError(f"unknown fault mix {mix!r} (known: {', '.join(mixes)})")
    return mixes[mix]


def check_fault_mixes(mixes: Iterable[str]) -> None:
    """Refuse an unknown fault mix with one line naming the known ones."""
    for mix in mixes:
        faults_of(mix)
