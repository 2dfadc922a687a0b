"""A node of an implementation under test, driven through the adapter protocol.

``RemoteNode`` satisfies the sans-IO node contract (``reference/node_api.py``): the
simulator ticks it, delivers messages to it, observes it and crashes it exactly as it
does the reference node, and every call becomes a protocol request. Randomness: the
node is created with a seed drawn from the simulator's stream for that node, so a run
stays reproducible as long as the implementation derives its randomness from it.
"""
from __future__ import annotations

from typing import Any

from adapters import codec
from adapters.transports import ProtocolAdapter
from reference.node_api import Message, Ready
from spec.dledger.records import DLedgerView

_EMPTY = Ready()


class RemoteNode:
    def __init__(self, adapter: ProtocolAdapter, kind: str, node_id: str, peers: tuple[str, ...], seed: int,
                 durable: Any, now: int, handle: str):
        self.adapter = adapter
        self.kind = kind
        self.node_id = node_id
        self.handle = handle
        self._reg = codec.registry(kind)
        adapter.request("node.create", {"kind": kind, "handle": handle, "node_id": node_id, "peers": list(peers),
                                        "seed": seed, "durable": durable, "now": now})

    def _ready(self, raw: dict) -> Ready:
        try:
            messages = tuple(
                Message(m["src"], m["dst"], codec.decode(m["payload"], Any, self._reg, f"messages[{i}].payload"))
                for i, m in enumerate(raw.get("messages") or ()))
        except (KeyError, TypeError, codec.CodecError) as exc:
            from adapters.errors import AdapterError

            raise AdapterError(f"{self.adapter.spec}: node {self.node_id} answered a malformed message: {exc}") from None
        persist = raw.get("persist")
        return Ready(messages, persist) if (messages or persist is not None) else _EMPTY

    def tick(self, now: int) -> Ready:
        return self._ready(self.adapter.request("node.tick", {"handle": self.handle, "now": now}))

    def step(self, message: Message, now: int) -> Ready:
        wire = {"src": message.src, "dst": message.dst, "payload": codec.encode(message.payload)}
        return self._ready(self.adapter.request("node.step", {"handle": self.handle, "message": wire, "now": now}))

    def crash(self) -> Any:
        """Stop the node; what it returns is all that survives (its durable state)."""
        return self.adapter.request("node.crash", {"handle": self.handle}).get("durable")

    def _observe(self) -> dict:
        return self.adapter.request("node.observe", {"handle": self.handle})

    def observe(self) -> DLedgerView:
        try:
            return codec.decode(self._observe()["view"], DLedgerView, self._reg, "view")
        except (KeyError, TypeError, codec.CodecError) as exc:
            from adapters.errors import AdapterError

            raise AdapterError(f"{self.adapter.spec}: node {self.node_id} answered a malformed view: {exc}") from None

    def summary(self) -> Any:
        return self._observe().get("summary")
