"""What consumers see: the consume queue bound and queue offsets after a restart.

* Only messages ending at or below confirmOffset are dispatched to consume queues
  (spec/broker/confirm_offset.py ``dispatch_end``), after a restart too (#6609).
* Queue offsets are never reused: after a restart the next queue offset of each queue
  follows *every* message in the log, including those past confirmOffset that are
  not yet visible (recovering from the consume queue alone reused them, #7689).
"""
from __future__ import annotations

from typing import Iterable

from spec.broker.records import LogEntry


def visible_entries(log: Iterable[LogEntry], dispatch_end: int) -> tuple[LogEntry, ...]:
    """The messages consumers may read: those ending at or below ``dispatch_end``."""
    return tuple(e for e in log if e.end <= dispatch_end)


def next_queue_offsets_after_recovery(log: Iterable[LogEntry], confirm_offset: int) -> dict[str, int]:
    """queue -> next queue offset, from every message in the recovered log.

    ``confirm_offset`` does not matter here: it bounds visibility, not numbering.
    """
    del confirm_offset
    offsets: dict[str, int] = {}
    for entry in log:
        offsets[entry.queue] = max(offsets.get(entry.queue, 0), entry.queue_offset + 1)
    return offsets


def assign_queue_offset(next_offsets: dict[str, int], queue: str) -> tuple[int, dict[str, int]]:
    """The offset for a new message in ``queue`` and the advanced table."""
    offset = next_offsets.get(queue, 0)
    updated = dict(next_offsets)
    updated[queue] = offset + 1
    return offset, updated
