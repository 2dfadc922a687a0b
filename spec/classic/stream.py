"""A connection's ordered byte stream: TCP's in-order delivery over the simulator's messages.

The simulated network may delay, reorder, duplicate and lose ``HAStream`` segments;
each side of a connection delivers them in sequence order, drops duplicates, and
treats a gap that stays open for ``GAP_TIMEOUT_MS`` as a broken connection. The
reference broker, the classic scenario's monitor and the step checker
(``spec/steps/classic.py``) all read a connection through this one definition.
"""
from __future__ import annotations

GAP_TIMEOUT_MS = 500  # a stream gap open this long: the connection is broken


class OrderedStream:
    """One side of a connection's ordered stream."""

    __slots__ = ("peer", "send_seq", "expected", "buffer", "gap_since")

    def __init__(self, peer: str):
        self.peer = peer
        self.send_seq = 0
        self.expected = 0
        self.buffer: dict[int, object] = {}
        self.gap_since: int | None = None

    def receive(self, seq: int, payload, now: int) -> list:
        """The payloads now deliverable in order."""
        if seq < self.expected or seq in self.buffer:
            return []  # a duplicate
        self.buffer[seq] = payload
        out = []
        while self.expected in self.buffer:
            out.append(self.buffer.pop(self.expected))
            self.expected += 1
        self.gap_since = (self.gap_since if self.gap_since is not None else now) if self.buffer else None
        return out

    def broken(self, now: int) -> bool:
        return self.gap_since is not None and now - self.gap_since >= GAP_TIMEOUT_MS
