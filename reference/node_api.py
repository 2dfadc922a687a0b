"""The contract between sans-IO nodes and whatever drives them.

A node (reference DLedger node, broker replica, controller node, or an adapter
wrapping a foreign implementation) is a state machine in the style of etcd-io/raft:

* ``tick(now)``: simulated time has reached ``now`` (milliseconds); the simulator
  calls it on the node's ``TICK_MS`` grid, but only from the node's deadline on.
* ``next_deadline()`` (optional): the earliest time at which ``tick`` can do anything,
  given the node's state now (None: no timer, only a message can wake it). Asked after
  every activation. Never later than the node's next real timer: a late deadline
  changes behaviour, an early one costs an idle tick. A node without it is ticked at
  every grid time.
* ``step(message, now)``: a message has arrived.
* both return a :class:`Ready`: the messages to send and, if durable state changed,
  the complete durable state to persist. The driver "writes" ``persist`` before it
  sends ``messages``; after a crash the node is rebuilt from the last persisted value
  and nothing else.
* ``observe()``: a read-only view of the node's state for invariants and reports;
  ``summary()``: a small JSON-able digest of it for traces.

A node never reads a clock, a socket or a random source of its own: randomness
comes from a ``draw(bound) -> int`` callable (uniform in ``[0, bound)``) supplied by
the driver, so one seed reproduces everything.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

import attrs

TICK_MS = 10

Draw = Callable[[int], int]


@attrs.frozen(slots=True)
class Message:
    """A message on the wire. ``payload`` is a frozen record from spec/."""

    src: str
    dst: str
    payload: Any

    @property
    def kind(self) -> str:
        # An implementation's own message, carried unread (adapters.remote_node.Envelope),
        # names its kind itself; an rmqha record is named by its class.
        named = getattr(self.payload, "message_kind", None)
        return named if isinstance(named, str) else type(self.payload).__name__


@attrs.frozen(slots=True)
class Ready:
    messages: tuple[Message, ...] = ()
    persist: Any = None


NOTHING = Ready()


class Outbox:
    """What a node sends and whether its durable state changed, handed over as one
    :class:`Ready` (the contract: the complete durable state, persisted before sending).
    A node sets ``_out = []`` and ``_dirty = False`` and defines ``durable()``."""

    node_id: str
    _out: list[Message]
    _dirty: bool

    def durable(self) -> Any: ...

    def _send(self, dst: str, payload: Any) -> None:
        self._out.append(Message(self.node_id, dst, payload))

    def _ready(self) -> Ready:
        out = tuple(self._out)
        self._out.clear()
        persist = None
        if self._dirty:
            self._dirty = False
            persist = self.durable()
        return Ready(out, persist) if (out or persist is not None) else NOTHING


class Node(Protocol):
    node_id: str

    def tick(self, now: int) -> Ready: ...

    # optional: def next_deadline(self) -> int | None: ...

    def step(self, message: Message, now: int) -> Ready: ...

    def observe(self) -> Any: ...

    def summary(self) -> Any:
        """A small JSON-able digest (role, term, ...) for trace ``state`` events."""
        ...
