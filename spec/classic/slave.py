"""The slave's side: ``HAClient`` (``DefaultHAClient`` in 5.x).

* **connect** (``connectMaster``): ``currentReportedOffset`` := the slave's max offset;
  4.x also sets ``lastWriteTimestamp`` to now, so the first report waits an interval.
* **loop**: one round when bytes arrive and otherwise every second (``select(1000)``):
  a periodic report if due, the frames read, a progress report, housekeeping.
* **reports** (``isTimeToReportOffset`` / ``reportSlaveMaxOffset`` /
  ``reportSlaveMaxOffsetPlus``): ``currentReportedOffset`` when nothing was written
  for more than haSendHeartbeatInterval; the max offset as soon as it passes
  ``currentReportedOffset`` (after each frame is appended).
* **each frame** (``dispatchReadRequest``), heartbeat frames included, first row wins:

  | row | when | effect |
  |---|---|---|
  | empty_log | the slave's max offset is 0 | append (the check is skipped) |
  | offset_mismatch | ``masterPhyOffset`` differs from the slave's max offset | close the connection |
  | append | otherwise | append the body |

  Appending (``CommitLog.appendData``) writes at the end of the slave's last file; in
  an empty log, at the start of a new file at ``masterPhyOffset``'s file boundary. A
  body that does not fit the last file is not written (and the slave goes on).
* **housekeeping**: the connection closes when nothing was written (4.x) or read
  (5.x) for longer than haHousekeepingInterval.
"""
from __future__ import annotations

import enum

import attrs

from spec.classic.commitlog import file_start
from spec.classic.profiles import DEFAULT_PROFILE, ClassicProfile
from spec.classic.records import DEFAULT_CONFIG, ClassicConfig, TransferHeader


@attrs.frozen(slots=True)
class ClientView:
    """``HAClient``'s state on a connection."""

    current_reported_offset: int
    last_write_ms: int
    last_read_ms: int


def on_connect(max_offset: int, now: int, last_write_ms: int, profile: ClassicProfile = DEFAULT_PROFILE) -> ClientView:
    """``connectMaster`` succeeded."""
    return ClientView(max_offset, now if profile.first_report_waits_interval else last_write_ms, now)


def on_read(view: ClientView, now: int) -> ClientView:
    """Bytes came from the master (``processReadEvent``): the read clock restarts."""
    return attrs.evolve(view, last_read_ms=now)


def on_report(view: ClientView, offset: int, now: int) -> ClientView:
    """A report was written (``reportSlaveMaxOffset``; the ``currentReportedOffset`` of
    ``reportSlaveMaxOffsetPlus``): it is the last report, and the write clock restarts
    (#1082: before 4.5.2 only reads restarted it, so a slave that read a heartbeat every
    interval never reported, and the master closed the idle connection)."""
    return attrs.evolve(view, current_reported_offset=offset, last_write_ms=now)


class ReportKind(enum.Enum):
    NONE = "NONE"
    HEARTBEAT = "HEARTBEAT"  # the interval passed: currentReportedOffset again
    PROGRESS = "PROGRESS"  # the max offset passed currentReportedOffset


@attrs.frozen(slots=True)
class SlaveReportDecision:
    kind: ReportKind
    offset: int = -1  # what to report


def periodic_report(view: ClientView, now: int, config: ClassicConfig = DEFAULT_CONFIG) -> SlaveReportDecision:
    """``isTimeToReportOffset``: report ``currentReportedOffset`` when the last report is
    older than haSendHeartbeatInterval."""
    if now - view.last_write_ms > config.ha_send_heartbeat_interval_ms:
        return SlaveReportDecision(ReportKind.HEARTBEAT, view.current_reported_offset)
    return SlaveReportDecision(ReportKind.NONE)


def progress_report(view: ClientView, max_offset: int) -> SlaveReportDecision:
    """``reportSlaveMaxOffsetPlus``: report the max offset once it passed the last report."""
    if max_offset > view.current_reported_offset:
        return SlaveReportDecision(ReportKind.PROGRESS, max_offset)
    return SlaveReportDecision(ReportKind.NONE)


class FrameOutcome(enum.Enum):
    APPEND = "APPEND"
    EMPTY_LOG = "EMPTY_LOG"  # the slave holds nothing: appended without the check
    OFFSET_MISMATCH = "OFFSET_MISMATCH"  # the connection closes


@attrs.frozen(slots=True)
class FrameDecision:
    outcome: FrameOutcome
    append_at: int = -1  # where the body lands (-1: nowhere)

    @property
    def close(self) -> bool:
        return self.outcome is FrameOutcome.OFFSET_MISMATCH


def on_frame(slave_max_offset: int, header: TransferHeader, config: ClassicConfig = DEFAULT_CONFIG) -> FrameDecision:
    """``dispatchReadRequest`` for one frame; ``slave_max_offset`` is ``getMaxPhyOffset``."""
    if slave_max_offset == 0:
        return FrameDecision(FrameOutcome.EMPTY_LOG,
                             file_start(header.master_phy_offset, config.mapped_file_size_commit_log))
    if slave_max_offset != header.master_phy_offset:
        return FrameDecision(FrameOutcome.OFFSET_MISMATCH)
    return FrameDecision(FrameOutcome.APPEND, slave_max_offset)


def fits_last_file(append_at: int, body_size: int, config: ClassicConfig = DEFAULT_CONFIG) -> bool:
    """``MappedFile.appendMessage``: the body must fit in the file it starts in."""
    size = config.mapped_file_size_commit_log
    return append_at % size + body_size <= size


class ClientHousekeeping(enum.Enum):
    KEEP = "KEEP"
    EXPIRED = "EXPIRED"


def slave_housekeeping(view: ClientView, now: int, config: ClassicConfig = DEFAULT_CONFIG,
                       profile: ClassicProfile = DEFAULT_PROFILE) -> ClientHousekeeping:
    """``HAClient.run``'s housekeeping (4.x on lastWriteTimestamp, 5.x on lastReadTimestamp)."""
    since = view.last_write_ms if profile.slave_housekeeping_clock == "last_write" else view.last_read_ms
    if now - since > config.ha_housekeeping_interval_ms:
        return ClientHousekeeping.EXPIRED
    return ClientHousekeeping.KEEP
