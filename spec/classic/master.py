"""The master's side of a connection: ``HAConnection``'s read and write services.

**ReadSocketService** (each 8-byte report):

| row | when | effect |
|---|---|---|
| request | the connection's first report (``slaveRequestOffset`` is -1) | request offset := ack := report; push2SlaveMaxOffset := max(it, report) |
| ack_beyond_master | 4.9.3-4.9.8 (#3015): a later report past the master's max offset | ack := report; the connection closes |
| ack | otherwise | ack := report; push2SlaveMaxOffset := max(it, report) |

The master closes a connection it has read nothing from for haHousekeepingInterval.

**WriteSocketService** (each round of its loop):

1. nothing until the slave's first report;
2. the first transfer offset: the slave's request offset, or, when the slave reports 0
   (an empty commitlog), the start of the master's *last* commitlog file
   (``maxOffset - maxOffset % mappedFileSizeCommitLog``);
3. a heartbeat frame (header ``(nextTransferFromWhere, 0)``) when nothing was written
   for more than haSendHeartbeatInterval;
4. a batch: ``getCommitLogData(nextTransferFromWhere)`` cut to haTransferBatchSize,
   with header ``(nextTransferFromWhere, size)``; ``nextTransferFromWhere`` advances by
   ``size``. Nothing to read: wait.
"""
from __future__ import annotations

import enum

import attrs

from spec.classic.commitlog import DataOutcome, commit_log_data, file_start
from spec.classic.profiles import DEFAULT_PROFILE, ClassicProfile
from spec.classic.records import DEFAULT_CONFIG, ClassicConfig, TransferHeader

NO_OFFSET = -1


def notify_transfer_some(push2_slave_max_offset: int, offset: int) -> int:
    """``HAService.notifyTransferSome``: push2SlaveMaxOffset only grows."""
    return offset if offset > push2_slave_max_offset else push2_slave_max_offset


# ---------------------------------------------------------------- reports


class ReportOutcome(enum.Enum):
    REQUEST = "REQUEST"
    ACK = "ACK"
    ACK_BEYOND_MASTER = "ACK_BEYOND_MASTER"  # the connection closes


@attrs.frozen(slots=True)
class ConnectionView:
    """What ``HAConnection`` knows of its slave."""

    slave_request_offset: int = NO_OFFSET
    slave_ack_offset: int = NO_OFFSET
    transfer_from: int = 0  # where the bytes the acks stand for begin (set with the first transfer offset)


@attrs.frozen(slots=True)
class ReportDecision:
    outcome: ReportOutcome
    connection: ConnectionView  # after the report
    push2_slave_max_offset: int  # after the report
    close: bool = False


def on_slave_report(connection: ConnectionView, report: int, master_max_offset: int, push2_slave_max_offset: int,
                    profile: ClassicProfile = DEFAULT_PROFILE) -> ReportDecision:
    """``ReadSocketService.processReadEvent`` for one report of ``report``."""
    if connection.slave_request_offset < 0:
        return ReportDecision(ReportOutcome.REQUEST, attrs.evolve(connection, slave_request_offset=report,
                                                                  slave_ack_offset=report),
                              notify_transfer_some(push2_slave_max_offset, report))
    acked = attrs.evolve(connection, slave_ack_offset=report)
    if profile.close_on_ack_beyond_max and report > master_max_offset:
        return ReportDecision(ReportOutcome.ACK_BEYOND_MASTER, acked, push2_slave_max_offset, close=True)
    return ReportDecision(ReportOutcome.ACK, acked, notify_transfer_some(push2_slave_max_offset, report))


class HousekeepingOutcome(enum.Enum):
    KEEP = "KEEP"
    EXPIRED = "EXPIRED"  # the connection closes


def master_housekeeping(last_read_ms: int, now: int, config: ClassicConfig = DEFAULT_CONFIG) -> HousekeepingOutcome:
    """``ReadSocketService.run``: nothing read for longer than haHousekeepingInterval."""
    if now - last_read_ms > config.ha_housekeeping_interval_ms:
        return HousekeepingOutcome.EXPIRED
    return HousekeepingOutcome.KEEP


# ---------------------------------------------------------------- transfers


class FirstOffsetOutcome(enum.Enum):
    SLAVE_REQUEST_OFFSET = "SLAVE_REQUEST_OFFSET"
    LAST_FILE_START = "LAST_FILE_START"  # the slave reported 0


def first_transfer_offset(slave_request_offset: int, master_max_offset: int,
                          config: ClassicConfig = DEFAULT_CONFIG) -> tuple[FirstOffsetOutcome, int]:
    """Where the first batch of a connection starts. From the last file's start, the
    connection's acks stand for the bytes from there only (``ConnectionView.transfer_from``)."""
    if slave_request_offset == 0:
        start = max(0, file_start(master_max_offset, config.mapped_file_size_commit_log))
        return FirstOffsetOutcome.LAST_FILE_START, start
    return FirstOffsetOutcome.SLAVE_REQUEST_OFFSET, slave_request_offset


class WriteOutcome(enum.Enum):
    AWAIT_REQUEST = "AWAIT_REQUEST"  # no report yet
    TRANSFER = "TRANSFER"
    HEARTBEAT = "HEARTBEAT"
    HEARTBEAT_AND_TRANSFER = "HEARTBEAT_AND_TRANSFER"
    NOTHING_TO_SEND = "NOTHING_TO_SEND"


@attrs.frozen(slots=True)
class WriteView:
    """``WriteSocketService``'s state."""

    slave_request_offset: int = NO_OFFSET
    next_transfer_from_where: int = NO_OFFSET
    last_write_ms: int = 0


@attrs.frozen(slots=True)
class LogView:
    """The master's commitlog: ``[min_offset, max_offset)`` in files of ``file_size``."""

    min_offset: int
    max_offset: int


@attrs.frozen(slots=True)
class WriteDecision:
    outcome: WriteOutcome
    next_transfer_from_where: int
    first_offset: FirstOffsetOutcome | None = None  # chosen in this round
    transfer_from: int = NO_OFFSET  # with it: where the connection's acked bytes begin
    heartbeat: TransferHeader | None = None
    batch: TransferHeader | None = None
    read_from: int = NO_OFFSET  # where the batch's bytes are read (differs from its header only at FIRST_FILE)


def write_socket_round(view: WriteView, log: LogView, now: int, config: ClassicConfig = DEFAULT_CONFIG) -> WriteDecision:
    """One round of ``WriteSocketService.run`` (the heartbeat clock restarts when the
    caller sends anything)."""
    if view.slave_request_offset == NO_OFFSET:
        return WriteDecision(WriteOutcome.AWAIT_REQUEST, view.next_transfer_from_where)
    first, begins = None, NO_OFFSET
    where = view.next_transfer_from_where
    if where == NO_OFFSET:
        first, where = first_transfer_offset(view.slave_request_offset, log.max_offset, config)
        begins = where if first is FirstOffsetOutcome.LAST_FILE_START else 0
    heartbeat = None
    if now - view.last_write_ms > config.ha_send_heartbeat_interval_ms:
        heartbeat = TransferHeader(where, 0)
    data = commit_log_data(where, log.min_offset, log.max_offset, config.mapped_file_size_commit_log)
    if data.outcome is DataOutcome.NOT_FOUND:
        outcome = WriteOutcome.HEARTBEAT if heartbeat else WriteOutcome.NOTHING_TO_SEND
        return WriteDecision(outcome, where, first, begins, heartbeat)
    size = min(data.size, config.ha_transfer_batch_size)
    outcome = WriteOutcome.HEARTBEAT_AND_TRANSFER if heartbeat else WriteOutcome.TRANSFER
    return WriteDecision(outcome, where + size, first, begins, heartbeat, TransferHeader(where, size), data.read_from)
