"""Invariants of classic master/slave HA (``--scenario classic``).

Pure predicates over broker views (duck-typed: ``node_id``, ``min_offset``,
``max_offset``, ``data`` (the commitlog bytes from ``min_offset``), ``flushed``) and
small histories the monitor keeps. docs/classic-ha.md says what each guards against.

| name | what must hold |
|---|---|
| slave-prefix | a slave's commitlog, from its first offset, is a byte prefix of its master's |
| put-ok-held-by-slave | a PUT_OK under SYNC_MASTER (when the release waits for slaves) means a slave held the message's bytes when it reported an offset past them |
| reports-monotone | within a connection, a slave's reported offsets never go backwards |
| frame-at-slave-offset | a slave appends a frame only at the offset it has reached (the frame's ``masterPhyOffset`` is its max offset, or a file boundary when its log is empty) |
| put-ok-flushed | under SYNC_FLUSH a PUT_OK'd message is on the master's disk when the producer is told |
| connection-stable | while nothing fails, no HA connection closes |
| slave-catches-up | while nothing fails, a slave reaches its master's max offset in bounded time |

The classic protocol never truncates: bytes a master loses (unflushed bytes in a
crash, or all its successor lacked after an operator's failover) stay on any slave
that had them, which then diverges from the master, and its reports cover offsets
where it holds other bytes. ``explain_divergence`` tells such a divergence (a finding)
from bytes no master ever wrote at that offset (a violation); ``positioned_past_master``
finds the divergence of a slave that holds nothing, positioned where a lost log ended.
"""
from __future__ import annotations

import bisect
from typing import Iterable, Mapping

from spec.classic.commitlog import BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, file_start, read_record
from spec.invariants import Violation

INVARIANTS: dict[str, str] = {
    "slave-prefix": "a slave's commitlog from its first offset is a byte prefix of its master's",
    "put-ok-held-by-slave": "a PUT_OK under SYNC_MASTER means a slave held the bytes when it acknowledged them",
    "reports-monotone": "within a connection a slave's reported offsets never go backwards",
    "frame-at-slave-offset": "no frame is appended at an offset the slave does not have",
    "put-ok-flushed": "under SYNC_FLUSH a PUT_OK'd message is on the master's disk",
    "connection-stable": "while nothing fails no HA connection closes",
    "slave-catches-up": "while nothing fails a slave reaches its master's max offset in bounded time",
}


def first_difference(slave, master) -> int | None:
    """The first offset where ``slave``'s commitlog is not ``master``'s (None: a prefix).

    Only what both hold is compared at the start (a master may have deleted old files);
    a slave holding bytes past the master's end differs at the master's end."""
    start = max(slave.min_offset, master.min_offset)
    if start >= slave.max_offset:
        return None
    end = min(slave.max_offset, master.max_offset)
    if end > start:
        mine = slave.data[start - slave.min_offset:end - slave.min_offset]
        theirs = master.data[start - master.min_offset:end - master.min_offset]
        if mine != theirs:
            return start + _common_prefix(mine, theirs)
    return None if slave.max_offset <= master.max_offset else max(start, master.max_offset)


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two different byte strings of one length (slices
    compare at C speed: a binary search over them)."""
    low, high = 0, len(a)  # a[:low] == b[:low]; a[:high] != b[:high]
    while high - low > 1:
        mid = (low + high) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid
    return low


def record_at(view, offset: int, file_size: int) -> tuple[int, bytes] | None:
    """(start, bytes) of the record of ``view``'s commitlog holding ``offset`` (the bytes
    may be a record's beginning, at the end of the log), found by walking the records
    of offset's file; None when the file holds no record there."""
    pos = max(file_start(offset, file_size), view.min_offset)
    data, base = view.data, view.min_offset
    while pos <= offset:
        head = read_record(data, pos - base)
        if head is None:
            return (pos, bytes(data[pos - base:])) if pos < view.max_offset else None
        size, magic = head
        if magic not in (MESSAGE_MAGIC_CODE, BLANK_MAGIC_CODE) or size < 8:
            return None
        if offset < pos + size:
            return pos, bytes(data[pos - base:pos - base + size])
        pos += size
    return None


def written_bytes(data: bytes, offset: int, written: Mapping[int, Iterable[bytes]]) -> bool:
    """Whether every byte of ``data`` (at ``offset`` on) is a byte some master wrote at that
    offset: matched run by run against the records of ``written`` (start offset -> records
    written there) that cover it, the longest run first."""
    starts = sorted(written)
    longest = max((len(r) for records in written.values() for r in records), default=0)
    done = 0
    while done < len(data):
        at, best = offset + done, 0
        # the records that cover ``at`` start at most ``longest`` bytes before it
        for start in starts[bisect.bisect_left(starts, at - longest + 1):bisect.bisect_right(starts, at)]:
            for record in written[start]:
                if at < start + len(record):
                    best = max(best, common_prefix(record[at - start:], data[done:]))
        if best == 0:
            return False
        done += best
    return True


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two byte strings (of any lengths)."""
    n = min(len(a), len(b))
    return n if a[:n] == b[:n] else _common_prefix(a[:n], b[:n])


def held_by_history(held: bytes, start: int, written: Mapping[int, Iterable[bytes]]) -> bool:
    """Whether ``held``, a slave's record at ``start`` (or the beginning of one, at the end
    of its log), is bytes masters wrote there: a record some master wrote at ``start``, or
    its beginning; or the beginning of one followed by bytes another master wrote at the
    offsets after it. The classic slave goes on from its own end with whatever master it
    has, and an end inside a record makes such a *spliced* record (upstream's HAClient
    checks only that a frame starts at its end): its divergence, not a corruption."""
    records = written.get(start, ())
    if any(r[:len(held)] == held for r in records):
        return True
    k = max((common_prefix(r, held) for r in records), default=0)
    return k > 0 and written_bytes(held[k:], start + k, written)


def unwritten_record(view, start: int, end: int, written: Mapping[int, Iterable[bytes]]) -> tuple[int | None, int]:
    """Walk ``view``'s whole records in ``[start, end)`` (``start`` a record boundary):
    (the start of the first one no master wrote there, or None; how far the walk got).
    Used where the master no longer has the bytes (deleted files) to compare with."""
    data, base, pos = view.data, view.min_offset, start
    while pos < end:
        head = read_record(data, pos - base)
        if head is None or head[0] < 8 or pos + head[0] > view.max_offset:
            return None, pos
        record = bytes(data[pos - base:pos - base + head[0]])
        if record not in written.get(pos, ()) and not held_by_history(record, pos, written):
            return pos, pos
        pos += head[0]
    return None, pos


def explain_divergence(slave, at: int, written: Mapping[int, Iterable[bytes]], file_size: int) -> bool:
    """Whether the slave's bytes at ``at`` (where it first differs from its master) are a
    record, or the beginning of one, that masters wrote at that offset (``written``:
    start offset -> records written there by any master; ``held_by_history``)."""
    found = record_at(slave, at, file_size)
    if found is None:
        return False
    start, held = found
    return held_by_history(held, start, written)


def positioned_past_master(slave, master, written: Mapping[int, Iterable[bytes]]) -> bool:
    """Whether ``slave``'s log holds nothing and ends past its master's end, at an offset
    some master's log reached (``written``): what it held there is gone (a crash lost
    the unflushed tail, the cleaner deleted every file before it), and the classic
    protocol never truncates, so the slave keeps that position and reports it, past
    bytes it does not hold. Its divergence from the master is history, as
    ``explain_divergence``'s is, with no bytes to compare (``first_difference`` finds
    none)."""
    if slave.min_offset != slave.max_offset or slave.max_offset <= master.max_offset:
        return False
    return any(start + len(r) >= slave.max_offset for start, records in written.items() for r in records)


def slave_prefix(slave, master, at: int, explained: bool) -> Violation | None:
    if explained:
        return None
    return Violation("slave-prefix", f"{slave.node_id} differs from master {master.node_id} at offset {at} "
                                     f"(slave [{slave.min_offset}, {slave.max_offset}), master "
                                     f"[{master.min_offset}, {master.max_offset})), bytes no master wrote there",
                     slave.node_id)


def put_ok_held(master: str, start: int, record: bytes, held: bool, excused: bool) -> Violation | None:
    """``held``: some slave held (start, record) when it reported an offset past its end;
    ``excused``: a diverged slave (one holding a master's lost bytes) reported past it."""
    if held or excused:
        return None
    return Violation("put-ok-held-by-slave", f"{master} answered PUT_OK for the message at {start} "
                                             f"(end {start + len(record)}) that no slave held when it acknowledged",
                     master)


def reports_monotone(slave: str, connection: str, previous: int, report: int) -> Violation | None:
    if report < previous:
        return Violation("reports-monotone", f"{slave} reported {report} after {previous} on connection {connection}",
                         slave)
    return None


def frame_at_slave_offset(slave: str, before_max: int, before_min: int, after, frame_offset: int,
                          body: bytes, file_size: int) -> Violation | None:
    """A frame was processed and the slave's commitlog grew from ``before_max``: it must
    hold ``body`` at ``frame_offset``, which was where its log ended (or, for an empty
    log, a file boundary where its log now starts)."""
    empty = before_max == before_min
    at_end = frame_offset == before_max or (empty and frame_offset == after.min_offset
                                            and frame_offset == file_start(frame_offset, file_size))
    lands = after.data[frame_offset - after.min_offset:frame_offset - after.min_offset + len(body)] == body \
        if after.min_offset <= frame_offset else False
    if at_end and lands:
        return None
    return Violation("frame-at-slave-offset", f"{slave} appended a frame of {len(body)} bytes for offset "
                                              f"{frame_offset} to a log ending at {before_max} "
                                              f"(now [{after.min_offset}, {after.max_offset}))", slave)


def put_ok_flushed(master: str, end: int, flushed: int) -> Violation | None:
    if flushed < end:
        return Violation("put-ok-flushed", f"{master} answered PUT_OK under SYNC_FLUSH for a message ending at "
                                           f"{end} with {flushed} flushed", master)
    return None


def connection_stable(node: str, connection: str, reason: str, quiet_ms: int) -> Violation:
    return Violation("connection-stable", f"{node} closed connection {connection} ({reason}) after {quiet_ms} ms "
                                          f"without a fault", node)


def slave_catches_up(slave: str, target: int, since: int, now: int, reached: int) -> Violation:
    return Violation("slave-catches-up", f"{slave} is at {reached}, short of its master's {target} of {now - since} "
                                         f"ms ago, without a fault since", slave)
