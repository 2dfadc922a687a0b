"""Step conformance: is each observed step of a node one that the spec allows?

Invariants judge the cluster; a step check judges one node's transition: the view
before, the input (a tick, a message, a client request), the view after, the messages
sent and what was persisted. The checker keeps, per node, the part of the node's
state that the spec defines but a view does not show (an open vote round and the
replies folded into it, the last ParseResult, the leader's heartbeat round, what the
leader knows of each follower's log), rebuilt from the inputs and outputs it has
seen, so the same code judges a live node in the simulator and a recorded trace.

Where the spec leaves a choice to the implementation (when exactly a timer fires,
how many entries one push carries), the check accepts every allowed outcome; the
freedoms are listed in docs/step-conformance.md. A step the spec does not allow is a
``StepViolation`` of the property ``step-conformance:<procedure>``, carrying what the
spec expected and what was observed.
"""
from __future__ import annotations

from typing import Any

import attrs

from spec.invariants import Violation

PREFIX = "step-conformance:"

# What an event's ``input`` may be.
BOOT, TICK, MESSAGE, CRASH = "boot", "tick", "message", "crash"
INPUTS = (BOOT, TICK, MESSAGE, CRASH)


@attrs.frozen(slots=True)
class Sent:
    """A message a step sent (any object with ``dst`` and ``payload`` will do)."""

    dst: str
    payload: Any


@attrs.frozen(slots=True)
class StepEvent:
    """One step of one node.

    ``input``: ``boot`` (the node started; ``view`` is its state then), ``tick``
    (time passed), ``message`` (``payload`` arrived from ``src``; a client request has
    src ``client``) or ``crash`` (no view). ``view`` is the node's observation after
    the step; ``outputs`` what it sent; ``persist`` the durable state it handed over
    to be written before sending (None: nothing, or not observed).
    """

    node: str
    time: int
    input: str
    src: str | None = None
    payload: Any = None
    view: Any = None
    outputs: tuple = ()
    persist: Any = None


@attrs.frozen(slots=True)
class StepViolation(Violation):
    """A step the spec does not allow: ``expected`` (the spec) against ``observed``."""

    expected: str = ""
    observed: str = ""


def step_property(procedure: str) -> str:
    return PREFIX + procedure


def violation(procedure: str, node: str, what: str, expected: str, observed: str) -> StepViolation:
    return StepViolation(
        step_property(procedure),
        f"{what}: expected {expected}; observed {observed}",
        node,
        expected,
        observed,
    )


class NodeSteps:
    """A step checker that keeps one record of hidden state per node: a crash forgets it,
    a boot (or a node's first step seen) starts it from the view, and every other step is
    judged by ``judge(state, event, out)``, which appends the violations to ``out`` and
    moves the state past the step."""

    def __init__(self) -> None:
        self.nodes: dict[str, Any] = {}

    def start(self, e: StepEvent) -> Any:
        raise NotImplementedError

    def judge(self, state: Any, e: StepEvent, out: list) -> None:
        raise NotImplementedError

    def booted(self, state: Any, e: StepEvent, out: list) -> None:
        """What a (re)start itself must satisfy (default: nothing is judged at a start)."""

    def check(self, e: StepEvent) -> list[StepViolation]:
        if e.input == CRASH:
            self.nodes.pop(e.node, None)
            return []
        state = self.nodes.get(e.node)
        out: list[StepViolation] = []
        if e.input == BOOT or state is None:
            state = self.nodes[e.node] = self.start(e)
            self.booted(state, e, out)
            return out
        self.judge(state, e, out)
        return out
