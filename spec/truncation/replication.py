"""Role changes, the slave's handshake, and the transfer rules (AutoSwitchHA*).

* ``change_to_master`` / ``change_to_slave``: how a role change touches the epoch file.
* ``slave_handshake``: the slave's decision when the master answered the handshake
  with its max offset and all its epoch entries.
* ``next_batch`` (master) and ``on_transfer_header`` (slave): a batch never crosses an
  epoch's end; the slave records an epoch entry when the header's epoch changes; a
  header whose offset is not the slave's max offset drops the connection (except on an
  empty slave, which starts wherever the first batch does).
* ``slave_confirm_offset``.

Each decision is the algebra's rule (``spec/truncation/algebra.py``, which the z3 model
evaluates too) on Python ints, named with the outcomes below.
"""
from __future__ import annotations

import enum
from typing import Sequence

import attrs

from spec.truncation import algebra
from spec.truncation.algebra import NO_POINT, PY, REFERENCE, Variant
from spec.truncation.epoch_file import EpochFile


class RoleChangeOutcome(enum.Enum):
    ACCEPTED = "ACCEPTED"
    REFUSED_OLDER_EPOCH = "REFUSED_OLDER_EPOCH"


@attrs.frozen(slots=True)
class MasterChange:
    outcome: RoleChangeOutcome
    epoch_file: EpochFile
    valid_max_offset: int  # the commitlog after dropping its dirty tail
    recorded: bool  # whether (epoch, max offset) was appended (False: nothing new since the last start)


def change_to_master(f: EpochFile, epoch: int, valid_max_offset: int, had_dirty_tail: bool = False,
                     variant: Variant = REFERENCE) -> MasterChange:
    """Become master of ``epoch`` with a commitlog whose valid data ends at ``valid_max_offset``.

    Refused if the epoch is older than the last one. Becoming master again of the epoch
    the file ends with keeps that entry. If the commitlog had a dirty tail
    (invalid bytes past the last valid message, e.g. after a crash), it is dropped and
    the epoch file cut there too (``AutoSwitchHAService.changeToMaster`` cuts only
    then); epochs >= ``epoch`` are dropped; then (epoch, max offset) is appended, which
    the append rule refuses (a no-op) when nothing was written since the last start.
    """
    rule = algebra.change_to_master(f.arrays(), epoch, valid_max_offset, had_dirty_tail, PY, variant)
    if not rule.accepted:
        return MasterChange(RoleChangeOutcome.REFUSED_OLDER_EPOCH, f, valid_max_offset, False)
    return MasterChange(RoleChangeOutcome.ACCEPTED, EpochFile.of_arrays(rule.file), valid_max_offset, rule.recorded)


def change_to_slave(f: EpochFile, epoch: int) -> RoleChangeOutcome:
    """Become a slave of the master of ``epoch``: refused if the epoch is older than the last."""
    return RoleChangeOutcome.REFUSED_OLDER_EPOCH if epoch < f.last_epoch else RoleChangeOutcome.ACCEPTED


class HandshakeOutcome(enum.Enum):
    TRANSFER_FROM_START = "TRANSFER_FROM_START"  # the slave's epoch file is empty: no check
    TRUNCATE_AND_TRANSFER = "TRUNCATE_AND_TRANSFER"  # consistent point t: truncate to t, copy from t
    NO_CONSISTENT_POINT = "NO_CONSISTENT_POINT"  # fail the handshake; retried forever, reported


@attrs.frozen(slots=True)
class HandshakeDecision:
    outcome: HandshakeOutcome
    transfer_from: int  # where copying starts (-1 when the handshake fails)
    epoch_file: EpochFile  # the slave's epoch file after the decision
    truncate_log_to: int | None  # cut the commitlog here (None: keep it)


def slave_handshake(
    local: EpochFile,
    local_max: int,
    master: EpochFile,
    master_max: int,
    master_first_offset: int = 0,
    variant: Variant = REFERENCE,
) -> HandshakeDecision:
    """The slave's decision on the master's handshake reply.

    ``master_first_offset``: where copying starts for a slave with no epoch file (0, or
    the start of the master's last file when syncing from the last file).
    """
    rule = algebra.slave_handshake(local.arrays(), local_max, master.arrays(), master_max, PY, variant)
    cut = rule.log_end if rule.log_end < local_max else None
    if rule.from_start:
        return HandshakeDecision(HandshakeOutcome.TRANSFER_FROM_START, master_first_offset, EpochFile(), cut)
    if rule.failed:
        return HandshakeDecision(HandshakeOutcome.NO_CONSISTENT_POINT, NO_POINT, local, None)
    return HandshakeDecision(HandshakeOutcome.TRUNCATE_AND_TRANSFER, rule.log_end, EpochFile.of_arrays(rule.file), cut)


# ------------------------------------------------------------------ transfer


@attrs.frozen(slots=True)
class Message:
    offset: int
    size: int
    epoch: int  # epoch of the master that wrote it

    @property
    def end(self) -> int:
        return self.offset + self.size


@attrs.frozen(slots=True)
class TransferHeader:
    offset: int  # where the batch starts
    epoch: int
    epoch_start_offset: int
    confirm_offset: int
    size: int  # bytes in the batch


def next_batch(
    master_file: EpochFile,
    log: Sequence[Message],
    from_offset: int,
    confirm_offset: int,
    max_bytes: int,
    variant: Variant = REFERENCE,
) -> TransferHeader | None:
    """The master's next batch for a slave at ``from_offset`` (None: nothing to send).

    A batch is whole messages from ``from_offset`` within one epoch: it is cut at the
    end of the epoch that contains its first message, and labelled with that epoch
    (the label-switched variant labels the last batch of an epoch with the next epoch,
    as upstream does).
    """
    arrays = master_file.arrays()
    found, epoch_end = algebra.containing_entry_end(arrays, from_offset, PY)
    if not found:
        return None
    size = 0
    for m in log:
        if m.offset < from_offset + size:
            continue
        if m.offset != from_offset + size or m.end > epoch_end:
            break
        if size and size + m.size > max_bytes:
            break
        size += m.size
    if size == 0:
        return None
    epoch, epoch_start = algebra.batch_label(arrays, from_offset, from_offset + size, PY, variant)
    return TransferHeader(from_offset, epoch, epoch_start, confirm_offset, size)


def flushed_for_transfer(flushed: int, header: TransferHeader, variant: Variant = REFERENCE) -> int:
    """The master's flushed offset once it sends ``header``'s batch: at least the batch's
    end (a master ships only what it has flushed; ``algebra.flushed_for_transfer``)."""
    return algebra.flushed_for_transfer(flushed, header.offset + header.size, PY, variant)


def flushed_for_report(slave_max: int, flushed: int = 0) -> int:
    """A slave's flushed offset once it reports ``slave_max`` after appending a batch
    (``algebra.flushed_for_report``: all of it)."""
    return algebra.flushed_for_report(flushed, slave_max, PY)


class HeaderOutcome(enum.Enum):
    APPEND = "APPEND"  # same epoch as the last one received
    APPEND_AND_RECORD_EPOCH = "APPEND_AND_RECORD_EPOCH"  # a new epoch: record (epoch, epochStartOffset)
    OFFSET_MISMATCH = "OFFSET_MISMATCH"  # header offset != slave max offset: drop the connection


@attrs.frozen(slots=True)
class HeaderDecision:
    outcome: HeaderOutcome
    epoch_file: EpochFile
    confirm_offset: int


def on_transfer_header(f: EpochFile, slave_max: int, header: TransferHeader,
                       variant: Variant = REFERENCE) -> HeaderDecision:
    """The slave receives a batch header (its max offset is before appending the batch).

    An empty slave (max offset 0) takes the first batch wherever it starts, as
    ``AutoSwitchHAClient`` does (it checks the offset only when its own max offset is not
    0): a master that deleted its first commitlog files, or that syncs a new slave from
    its last file, starts there, and the slave's log then begins at that offset.
    """
    if slave_max != 0 and header.offset != slave_max:
        return HeaderDecision(HeaderOutcome.OFFSET_MISMATCH, f, slave_confirm_offset(header.confirm_offset, slave_max))
    new_max = header.offset + header.size
    confirm = slave_confirm_offset(header.confirm_offset, new_max)
    recorded, new_epoch = algebra.record_header_epoch(f.arrays(), header.epoch, header.epoch_start_offset, PY, variant)
    if new_epoch:
        return HeaderDecision(HeaderOutcome.APPEND_AND_RECORD_EPOCH, EpochFile.of_arrays(recorded), confirm)
    return HeaderDecision(HeaderOutcome.APPEND, f, confirm)


def slave_confirm_offset(header_confirm_offset: int, slave_max: int) -> int:
    """A slave's confirmOffset: the master's, but never beyond its own log."""
    return min(header_confirm_offset, slave_max)
