"""Known-bad variants of classic HA ("mutants").

Each mutant is a ``spec.mutants.MutantInfo`` (name, upstream issue or None, description,
the invariant expected to catch it) plus the procedures of
:class:`spec.classic.rules.ClassicRules` it replaces. ``rmqha mutants --scenario
classic`` runs each as adapter ``mutant:NAME``; docs/classic-ha.md has the measured kills.
"""
from __future__ import annotations

from typing import Mapping

import attrs

from spec.classic import commitlog, master, slave, write
from spec.classic.commitlog import DataOutcome, commit_log_data
from spec.classic.rules import ClassicRules
from spec.classic.write import TransferOutcome
from spec.frozenmap import FrozenMap, frozen_map
from spec.mutants import MutantInfo


@attrs.frozen(slots=True)
class Mutant(MutantInfo):
    replaces: FrozenMap = attrs.field(converter=frozen_map, default=frozen_map({}))  # field -> procedure

    def apply(self, rules: ClassicRules) -> ClassicRules:
        return attrs.evolve(rules, **dict(self.replaces))


# ------------------------------------------------------------------ the master's write path


def _replica_request_at_start(wrote_offset, wrote_bytes, *args, **kwargs):
    """The request waits for the message's start (wroteOffset), not its end."""
    return write.submit_replica_request(wrote_offset, 0, *args, **kwargs)


def _transfer_status_push2(request, push2_slave_max_offset, connection_acks, now):
    """Upstream (4.x; 5.x alike with connection acks): any ack past nextOffset counts,
    wherever that connection's transfer began."""
    if push2_slave_max_offset >= request.next_offset:
        return TransferOutcome.PUT_OK
    return TransferOutcome.FLUSH_SLAVE_TIMEOUT if now >= request.deadline else TransferOutcome.WAITING


def _flush_never_waited(config=None, wait_store_msg_ok=True):
    return write.FlushRequestOutcome.ASYNC_FLUSH


def _message_crosses_file(max_offset, size, file_size):
    """No blank record: a message that does not fit its file runs into the next one."""
    placement = commitlog.place_message(max_offset, size, file_size)
    if placement.outcome is commitlog.PlaceOutcome.END_OF_FILE:
        return commitlog.Placement(commitlog.PlaceOutcome.PUT_OK, max_offset)
    return placement


# ------------------------------------------------------------------ HAConnection


def _push2_follows_last_report(connection, report, master_max_offset, push2_slave_max_offset, profile=None):
    """push2SlaveMaxOffset takes each report as it comes, so a lagging slave's report lowers it."""
    decision = master.on_slave_report(connection, report, master_max_offset, push2_slave_max_offset, profile)
    return decision if decision.close else attrs.evolve(decision, push2_slave_max_offset=report)


def _first_offset_replaced(choose):
    """write_socket_round whose first transfer offset for a slave reporting 0 is
    ``choose(log)`` instead of the last file's start."""
    def round_(view, log, now, config=None):
        if view.next_transfer_from_where == master.NO_OFFSET and view.slave_request_offset == 0:
            view = attrs.evolve(view, next_transfer_from_where=choose(log))
        return master.write_socket_round(view, log, now, config)
    return round_


def _batch_across_files(view, log, now, config=None):
    """Batches cut at haTransferBatchSize only, not at the end of the file."""
    decision = master.write_socket_round(view, log, now, config)
    if decision.batch is None:
        return decision
    start = decision.batch.master_phy_offset
    size = min(config.ha_transfer_batch_size, log.max_offset - start)
    data = commit_log_data(start, log.min_offset, log.max_offset, config.mapped_file_size_commit_log)
    if data.outcome is not DataOutcome.FOUND or size <= decision.batch.body_size:
        return decision
    return attrs.evolve(decision, batch=attrs.evolve(decision.batch, body_size=size), next_transfer_from_where=start + size)


# ------------------------------------------------------------------ HAClient


def _connect_reports_zero(max_offset, now, last_write_ms, profile=None):
    """A connecting slave's currentReportedOffset starts at 0 instead of its max offset."""
    return attrs.evolve(slave.on_connect(max_offset, now, last_write_ms, profile), current_reported_offset=0)


def _read_restarts_write_clock(view, now):
    """#1082 (before 4.5.2): reads, not reports, restarted lastWriteTimestamp."""
    return attrs.evolve(view, last_read_ms=now, last_write_ms=now)


def _report_keeps_offset(view, offset, now):
    """currentReportedOffset is not updated by a report."""
    return attrs.evolve(view, last_write_ms=now)


def _empty_log_at_zero(slave_max_offset, header, config=None):
    decision = slave.on_frame(slave_max_offset, header, config)
    if decision.outcome is slave.FrameOutcome.EMPTY_LOG:
        return attrs.evolve(decision, append_at=0)
    return decision


def _check_skipped_on_master_zero(slave_max_offset, header, config=None):
    """The empty-log exemption keyed on the master's offset instead of the slave's."""
    if header.master_phy_offset == 0 and slave_max_offset == 0:
        return slave.FrameDecision(slave.FrameOutcome.EMPTY_LOG, 0)
    if slave_max_offset != header.master_phy_offset:
        return slave.FrameDecision(slave.FrameOutcome.OFFSET_MISMATCH)
    return slave.FrameDecision(slave.FrameOutcome.APPEND, slave_max_offset)


_ALL = (
    Mutant(
        "message-crosses-file", None,
        "no blank record at a file's end: a message that does not fit runs into the next file",
        "step-conformance:place_message", {"place_message": _message_crosses_file},
    ),
    Mutant(
        "push2-follows-last-report", None,
        "push2SlaveMaxOffset takes every report as it comes (not the furthest): a lagging slave's report lowers it",
        "step-conformance:on_slave_report", {"on_slave_report": _push2_follows_last_report},
    ),
    Mutant(
        "connect-reports-zero", None,
        "a connecting slave starts with currentReportedOffset 0 instead of its max offset",
        "step-conformance:on_connect", {"on_connect": _connect_reports_zero},
    ),
    Mutant(
        "replica-request-at-message-start", None,
        "the SYNC_MASTER's replica request waits for the message's start offset instead of its end",
        "put-ok-held-by-slave", {"submit_replica_request": _replica_request_at_start},
    ),
    Mutant(
        "upstream-ack-covers-unsent-prefix", None,
        "upstream's doWaitTransfer: push2SlaveMaxOffset >= nextOffset, so an empty slave sent only the "
        "master's last file acknowledges messages of older files it never received",
        "put-ok-held-by-slave", {"transfer_status": _transfer_status_push2},
    ),
    Mutant(
        "sync-flush-not-waited", None,
        "under SYNC_FLUSH the producer is answered without waiting for GroupCommitService",
        "put-ok-flushed", {"submit_flush_request": _flush_never_waited},
    ),
    Mutant(
        "empty-slave-starts-at-master-max", None,
        "a slave reporting 0 is sent bytes from the master's max offset instead of its last file's start",
        "frame-at-slave-offset", {"write_socket_round": _first_offset_replaced(lambda log: log.max_offset)},
    ),
    Mutant(
        "empty-slave-starts-at-zero", None,
        "a slave reporting 0 is sent bytes from offset 0 (no last-file rule): once the cleaner deleted the "
        "first files, getCommitLogData(0) reads the first remaining file",
        "slave-prefix", {"write_socket_round": _first_offset_replaced(lambda log: 0)},
    ),
    Mutant(
        "batch-across-files", None,
        "a batch is cut at haTransferBatchSize only and runs into the next file, which the slave cannot append",
        "connection-stable", {"write_socket_round": _batch_across_files},
    ),
    Mutant(
        "issue1082-reads-restart-report-clock", "rocketmq #1082",
        "reads restart the slave's report clock (before 4.5.2): a slave hearing a heartbeat every interval "
        "never reports, and the master's housekeeping closes the idle connection",
        "connection-stable", {"on_read": _read_restarts_write_clock},
    ),
    Mutant(
        "reported-offset-not-updated", None,
        "a report does not update currentReportedOffset: the periodic report repeats the offset of the connect",
        "reports-monotone", {"on_report": _report_keeps_offset},
    ),
    Mutant(
        "empty-log-appends-at-zero", None,
        "a slave with an empty log writes the first frame at offset 0 instead of the frame's file",
        "frame-at-slave-offset", {"on_frame": _empty_log_at_zero},
    ),
    Mutant(
        "offset-check-keyed-on-master-offset", None,
        "the check of each frame is skipped when the master's offset is 0 instead of when the slave's log is "
        "empty: an empty slave refuses the master's last file forever",
        "connection-stable", {"on_frame": _check_skipped_on_master_zero},
    ),
)

MUTANTS: Mapping[str, Mutant] = {m.name: m for m in _ALL}
