"""Edits the search's scenario mutations share (conformance/search.py): where an edit
applies in a run's fault phase, and the networks a stretch of it is put under."""
from __future__ import annotations

import random
from typing import Callable

from conformance.script import Step


def lossy_net(rng: random.Random) -> Step:
    """A lossy network for a window of the search's mutations: drops and duplicates."""
    return Step("net", ("1..60", f"drop={rng.choice(('0.02', '0.1', '0.3'))}", f"dup={rng.choice(('0.05', '0.3'))}"))


def stretch_of(rng: random.Random, length: int) -> tuple[int, int]:
    """Where an edit of the search applies in a fault phase of ``length`` steps: half the
    time the whole phase, else a stretch of up to a dozen steps."""
    if rng.random() < 0.5:
        return 0, length
    start = rng.randint(0, length)
    return start, rng.randint(start, min(length, start + 12))


def after_waits(stretch: list[Step], insert: Callable[[], list[Step]]) -> list[Step]:
    """``stretch`` with ``insert()``'s steps after each of its waits."""
    out = []
    for step in stretch:
        out.append(step)
        if step.op == "run":
            out += insert()
    return out


def probed(stretch: list[Step], brokers) -> list[Step]:
    """``stretch`` with a write of one message to each broker after each of its waits."""
    return after_waits(stretch, lambda: [Step("write", ("1", b)) for b in brokers])


def overlay(stretch: list[Step], on: Step, off: Step) -> list[Step]:
    """``stretch`` under the network ``on`` (a lossy net, a partition), ``off`` after it:
    set again after each of the stretch's own ``off`` steps (its heals or ``net default``),
    so that the whole stretch runs under it (the stretch's other faults add to it)."""
    out = [on]
    for step in stretch:
        out.append(step)
        if (step.op, step.args) == (off.op, off.args):
            out.append(on)
    return out + [off]


def overlay_stretch(rng: random.Random, phase: list[Step], partition: Callable[[], Step]) -> None:
    """Put a stretch of ``phase`` (``stretch_of``) under a lossy network or, half the time,
    the partition ``partition()`` draws (``overlay``), in place."""
    start, stop = stretch_of(rng, len(phase))
    if rng.random() < 0.5:
        on, off = lossy_net(rng), Step("net", ("default",))
    else:
        on, off = partition(), Step("heal")
    phase[start:stop] = overlay(phase[start:stop], on, off)
