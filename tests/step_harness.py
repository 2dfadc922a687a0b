"""Driving reference nodes by hand for the table-driven step-conformance tests.

A ``Harness`` holds nodes of one kind, delivers their messages at once and in order,
and judges every step with a step checker (``spec/steps``); a row of a table takes the
step under test unjudged (``event``), judges it as the node took it, and again after a
tamper (``view``, ``drop``, ``replace_payload``, ``outputs``) changed one thing.
"""
from __future__ import annotations

import attrs

from reference.node_api import Message
from spec.steps import BOOT, MESSAGE, TICK, StepEvent


class Harness:
    def __init__(self, nodes: dict, steps):
        self.nodes = nodes
        self.steps = steps
        self.now = 0
        self.queue: list[Message] = []
        for n, node in nodes.items():
            assert steps.check(StepEvent(n, 0, BOOT, view=node.observe())) == []

    def event(self, node: str, message: Message | None = None) -> StepEvent:
        """The next step of ``node`` (a tick, or ``message``), not yet judged; what it sent is queued."""
        n = self.nodes[node]
        ready = n.step(message, self.now) if message is not None else n.tick(self.now)
        self.queue += [m for m in ready.messages if m.dst in self.nodes]
        if message is None:
            return StepEvent(node, self.now, TICK, view=n.observe(), outputs=ready.messages)
        return StepEvent(node, self.now, MESSAGE, message.src, message.payload, n.observe(), ready.messages)

    def tell(self, node: str, payload) -> StepEvent:
        """A client's (or the harness's) message to ``node``, as a step."""
        return self.event(node, Message("client", node, payload))

    def judge(self, e: StepEvent) -> list:
        return self.steps.check(e)

    def ok(self, e: StepEvent) -> StepEvent:
        found = self.judge(e)
        assert found == [], found
        return e

    def pump(self, until=None) -> StepEvent | None:
        """Deliver queued messages (each step judged) until ``until(message)`` holds: that step, unjudged."""
        while self.queue:
            m = self.queue.pop(0)
            if until is not None and until(m):
                return self.event(m.dst, m)
            self.ok(self.event(m.dst, m))
        return None


def judged_as(h: Harness, e: StepEvent, tamper, expected: str | None) -> None:
    """``e``, tampered with, is allowed (``expected`` None) or violates ``step-conformance:expected``."""
    assert e is not None
    if tamper is not None:
        e = tamper(e)
    found = h.judge(e)
    if expected is None:
        assert found == [], found
    else:
        assert "step-conformance:" + expected in {v.property for v in found}, (found, e)


def view(e: StepEvent, **changes) -> StepEvent:
    return attrs.evolve(e, view=attrs.evolve(e.view, **changes))


def outputs(keep):
    """Tamper with what a step sent: ``keep(message)`` -> the message instead, or None (not sent)."""
    return lambda e: attrs.evolve(e, outputs=tuple(x for x in map(keep, e.outputs) if x is not None))


def replace_payload(kind, change):
    return outputs(lambda m: attrs.evolve(m, payload=change(m.payload)) if isinstance(m.payload, kind) else m)


def drop(kind):
    return outputs(lambda m: None if isinstance(m.payload, kind) else m)
