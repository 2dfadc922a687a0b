"""A node of an implementation under test, driven through the adapter protocol.

``RemoteNode`` satisfies the sans-IO node contract (``reference/node_api.py``): the
simulator ticks it, delivers messages to it, observes it and crashes it exactly as it
does the reference node, and every call becomes a protocol request. Randomness: the
node is created with a seed drawn from the simulator's stream for that node, so a run
stays reproducible as long as the implementation derives its randomness from it.

Payloads: ``dledger``, ``replica``, ``broker`` and ``classic`` nodes speak rmqha's own
records (``spec/dledger/records.py``, ``spec/truncation/messages.py``, ``spec/broker/messages.py``,
``spec/controller/messages.py``, ``spec/classic/wire.py``; JSON by ``adapters.codec``), so the suite can read
every vote, handshake and controller call. A ``raft`` node speaks its own messages:
rmqha only routes them, wrapped in an ``Envelope`` that keeps the implementation's JSON
as text and its ``type`` for traces. A ``controller`` node speaks records to brokers and
its own protocol to the other controllers (read when they are rmqha records, else
carried in an ``Envelope``).

Observations are cached: a tick or step whose answer says ``"changed": false`` leaves
the last view valid, which halves the round trips of a quiet cluster. A node is created
with ``"observe_in_ready": true``: an answer that changed the node may then carry the
observation itself (``"view"`` and ``"summary"``, what ``node.observe`` would answer
right after it; ``"summary"`` alone when the view is the one it sent last), which saves
the ``node.observe`` round trip; an implementation that leaves it out is asked with
``node.observe`` as before.
"""
from __future__ import annotations

import json
from typing import Any

import attrs

from adapters import codec
from adapters.errors import AdapterError, ImplementationFailed
from adapters.protocol import ONCE_FIELDS
from adapters.transports import ProtocolAdapter
from reference.node_api import Message, Ready
from spec.broker.messages import BrokerNodeView
from spec.classic.wire import ClassicView
from spec.controller.messages import ControllerNodeView
from spec.dledger.records import DLedgerView
from spec.raft.records import RaftView
from spec.truncation.messages import ReplicaView

_EMPTY = Ready()

# node kind -> the record its observation decodes to
VIEWS: dict[str, type] = {"dledger": DLedgerView, "raft": RaftView, "replica": ReplicaView,
                          "broker": BrokerNodeView, "controller": ControllerNodeView, "classic": ClassicView}
# node kinds whose messages are rmqha records (a raft node's are opaque to rmqha)
TYPED_MESSAGES = frozenset({"dledger", "replica", "broker", "controller", "classic"})
# node kinds that talk a protocol of their own to their peers: rmqha reads those messages
# when they are its records and carries the rest unread (to anyone else: records only)
OWN_PEER_PROTOCOL = frozenset({"controller"})


@attrs.frozen(slots=True)
class Envelope:
    """An implementation's own message, carried unread: ``data`` is its JSON text."""

    type: str
    data: str

    @property
    def message_kind(self) -> str:  # what traces and ``deliver A B KIND`` call it
        return self.type

    @staticmethod
    def wrap(payload: Any) -> "Envelope":
        kind = payload.get("type") if isinstance(payload, dict) else None
        return Envelope(kind if isinstance(kind, str) else "message",
                        json.dumps(payload, sort_keys=True, separators=(",", ":")))


class RemoteNode:
    def __init__(self, adapter: ProtocolAdapter, kind: str, node_id: str, peers: tuple[str, ...], seed: int,
                 durable: Any, now: int, handle: str, config: Any = None):
        if kind not in VIEWS:
            raise ValueError(f"unknown node kind {kind!r}")
        self.adapter = adapter
        self.kind = kind
        self.node_id = node_id
        self.handle = handle
        self.version = 0  # bumps whenever the implementation says its state changed
        self._reg = codec.registry(codec.NODE_NAMESPACES[kind])
        self._typed = kind in TYPED_MESSAGES
        self._own_peers = frozenset(peers) if kind in OWN_PEER_PROTOCOL else frozenset()
        self._once = ONCE_FIELDS.get(kind)
        # (version, summary, decoded view, whether observe() or summary() read it yet)
        self._observed: tuple[int, Any, Any, bool] | None = None
        self._deadline: int | None = now  # the node's next_deadline; until it says one: its next tick
        self.answers = 0  # its Ready answers, and how many of them gave a next_deadline
        self.answers_with_deadline = 0
        create = {"kind": kind, "handle": handle, "node_id": node_id, "peers": list(peers), "seed": seed,
                  "durable": durable, "now": now, "observe_in_ready": True}
        if config is not None:
            create["config"] = codec.encode(config)
        adapter.request("node.create", create)

    def _malformed(self, what: str, exc: Exception) -> AdapterError:
        return AdapterError(f"{self.adapter.spec}: node {self.node_id} answered a malformed {what}: {exc}",
                            self.adapter.last_exchange)

    def _ready(self, raw: Any, now: int) -> Ready:
        try:
            if not isinstance(raw, dict):
                raise TypeError(f"expected an object, got {type(raw).__name__}")
            deadline = raw.get("next_deadline", now)  # left out: tick at the next 10 ms, as always
            self.answers += 1
            if "next_deadline" in raw:
                self.answers_with_deadline += 1
            if deadline is not None and (type(deadline) is not int):
                raise TypeError(f"next_deadline must be a time in ms or null, not {deadline!r}")
            messages = tuple(
                Message(self.node_id, dst, self._payload_in(m["payload"], i, dst))
                for i, m in enumerate(raw.get("messages") or ()) for dst in (_text(m["dst"]),))
            changed = raw.get("changed", True)
            if not isinstance(changed, bool):
                raise TypeError(f"changed must be true or false, not {changed!r}")
        except (KeyError, TypeError, codec.CodecError) as exc:
            raise self._malformed("answer", exc) from None
        if changed:
            self.version += 1
            if "view" in raw:  # the observation of the new state, offered with the answer
                self._observed = (self.version, raw.get("summary"), self._view(raw["view"], "view in its answer"),
                                  False)
            elif "summary" in raw and self._observed is not None:  # its summary alone: the same view
                self._observed = (self.version, raw["summary"], self._same_view(), False)
        self._deadline = deadline
        persist = raw.get("persist")
        return Ready(messages, persist) if (messages or persist is not None) else _EMPTY

    def _payload_in(self, payload: Any, i: int, dst: str) -> Any:
        if not self._typed:
            return Envelope.wrap(payload)
        if dst in self._own_peers:
            try:
                return codec.decode(payload, Any, self._reg, f"messages[{i}].payload")
            except codec.CodecError:
                return Envelope.wrap(payload)
        return codec.decode(payload, Any, self._reg, f"messages[{i}].payload")

    def _payload_out(self, payload: Any) -> Any:
        if isinstance(payload, Envelope):
            return json.loads(payload.data)
        return codec.encode(payload)  # an rmqha record (a client request, or any typed message)

    def tick(self, now: int) -> Ready:
        return self._ready(self._request("node.tick", {"handle": self.handle, "now": now}, "a tick"), now)

    def step(self, message: Message, now: int) -> Ready:
        wire = {"src": message.src, "dst": message.dst, "payload": self._payload_out(message.payload)}
        kind = getattr(message.payload, "message_kind", None) or type(message.payload).__name__
        return self._ready(self._request("node.step", {"handle": self.handle, "message": wire, "now": now},
                                         f"a {kind} from {message.src}"), now)

    def _request(self, op: str, args: dict, handling: str) -> Any:
        """An ``internal`` error names what the node was handling (its own message rarely does);
        no time or ids, so a campaign's report still counts the same failure as one message."""
        try:
            return self.adapter.request(op, args)
        except ImplementationFailed as exc:
            raise ImplementationFailed(f"{exc} (node {self.node_id}, handling {handling})", exc.exchange) from None

    def next_deadline(self) -> int | None:
        """When the implementation's tick can next do anything (its answers' ``next_deadline``)."""
        return self._deadline

    def crash(self) -> Any:
        """Stop the node; what it returns is all that survives (its durable state)."""
        answer = self.adapter.request("node.crash", {"handle": self.handle})
        if not isinstance(answer, dict) or "durable" not in answer:
            raise self._malformed("crash answer", TypeError("expected an object with \"durable\""))
        return answer["durable"]

    def _view(self, raw: Any, what: str) -> Any:
        """The view record ``raw`` decodes to; once-reported entries of an observation the
        driver never read are reported with this one (the implementation reported them to
        no one, as it would have with the next ``node.observe``)."""
        try:
            view = codec.decode(raw, VIEWS[self.kind], self._reg, "view")
        except (TypeError, codec.CodecError) as exc:
            raise self._malformed(what, exc) from None
        unread = self._observed
        if self._once is not None and unread is not None and not unread[3] and getattr(unread[2], self._once):
            view = attrs.evolve(view, **{self._once: getattr(unread[2], self._once) + getattr(view, self._once)})
        return view

    def _same_view(self) -> Any:
        """The last view again, as an answer with a summary and no view says: what it reported
        once is not reported again (unless nobody read it yet)."""
        _, _, view, read = self._observed
        if read and self._once is not None and getattr(view, self._once):
            return attrs.evolve(view, **{self._once: ()})
        return view

    def _observe(self) -> tuple[int, Any, Any, bool]:
        observed = self._observed
        if observed is None or observed[0] != self.version:
            raw = self.adapter.request("node.observe", {"handle": self.handle})
            if not isinstance(raw, dict) or "view" not in raw:
                raise self._malformed("observation", TypeError("expected an object with \"view\""))
            observed = (self.version, raw.get("summary"), self._view(raw["view"], "observation"), True)
            self._observed = observed
        elif not observed[3]:
            observed = self._observed = observed[:3] + (True,)
        return observed

    def observe(self):
        version, summary, view, _ = self._observe()
        if self._once is not None and getattr(view, self._once):
            # reported with the observation it came in; later reads of the same state carry none
            self._observed = (version, summary, attrs.evolve(view, **{self._once: ()}), True)
        return view

    def summary(self) -> Any:
        return self._observe()[1]


def _text(x: Any) -> str:
    if not isinstance(x, str):
        raise TypeError(f"a node id must be a string, not {x!r}")
    return x
