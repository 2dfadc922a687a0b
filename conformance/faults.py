"""Fault mixes: which nemeses a generated run may use, by the names campaigns take.

A campaign rotates its fault mixes by seed (``conformance.campaign.plan_configs``); each
scenario's generator draws its faults from the mix of its run.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from conformance.errors import UserError

FAULT_MIXES: dict[str, tuple[str, ...]] = {
    "none": (),
    "crash": ("crash", "crash-leader"),
    "partition": ("partition", "block", "isolate-leader"),
    "lossy": ("lossy",),
    "mixed": ("crash", "crash-leader", "partition", "block", "isolate-leader", "lossy"),
}

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
