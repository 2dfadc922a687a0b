"""Role changes, the slave's handshake, and the transfer rules (AutoSwitchHA*).

* ``change_to_master`` / ``change_to_slave``: how a role change touches the epoch file.
* ``slave_handshake``: the slave's decision when the master answered the handshake
  with its max offset and all its epoch entries.
* ``next_batch`` (master) and ``on_transfer_header`` (slave): a batch never crosses an
  epoch's end; the slave records an epoch entry when the header's epoch changes; a
  header whose offset is not the slave's max offset drops the connection (except on an
  empty slave, which starts wherever the first batch does).
* ``slave_confirm_offset``.
"""
from __future__ import annotations

import enum
from typing import Sequence

import attrs

from spec.truncation.algebra import NO_POINT, PY, REFERENCE, Variant, effective_count
from spec.truncation.epoch_file import (
    EpochFile,
    append,
    find_consistent_point,
    find_entry_by_offset,
    next_entry,
    truncate_suffix_by_epoch,
    truncate_suffix_by_offset,
)


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
    if epoch < f.last_epoch:
        return MasterChange(RoleChangeOutcome.REFUSED_OLDER_EPOCH, f, valid_max_offset, False)
    if had_dirty_tail:
        f = truncate_suffix_by_offset(f, valid_max_offset, variant)
    last = f.last_entry
    if last is not None and last.epoch == epoch and last.start_offset <= valid_max_offset:
        # Re-confirmed master of its own epoch (a quick restart): the entry stands. Upstream
        # drops it and appends (epoch, max offset), moving the epoch's start past what the
        # broker wrote in it, so its slaves truncate that data (docs/controller-stack.md).
        return MasterChange(RoleChangeOutcome.ACCEPTED, f, valid_max_offset, False)
    if f.last_epoch >= epoch:
        f = truncate_suffix_by_epoch(f, epoch, variant)
    appended, outcome = append(f, epoch, valid_max_offset, variant)
    return MasterChange(RoleChangeOutcome.ACCEPTED, appended, valid_max_offset, appended is not f)


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
    comparable = effective_count(local.arrays(local_max), PY, variant) if local.entries else 0
    if comparable == 0:
        # No epoch to compare — or, the reference's handling of upstream #9942's case, only
        # an epoch that holds no data: no data of the log is vouched for by an epoch entry,
        # so copy everything from the start.
        return HandshakeDecision(HandshakeOutcome.TRANSFER_FROM_START, master_first_offset, EpochFile(),
                                 0 if local_max > 0 else None)
    t = find_consistent_point(local, local_max, master, master_max, variant)
    if t == NO_POINT:
        return HandshakeDecision(HandshakeOutcome.NO_CONSISTENT_POINT, NO_POINT, local, None)
    cut = t if t < local_max else None
    return HandshakeDecision(
        HandshakeOutcome.TRUNCATE_AND_TRANSFER,
        min(t, local_max),
        truncate_suffix_by_offset(local, t, variant),
        cut,
    )


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
    entry = find_entry_by_offset(master_file, from_offset)
    if entry is None:
        return None
    following = next_entry(master_file, entry.epoch)
    epoch_end = following.start_offset if following is not None else None
    size = 0
    for m in log:
        if m.offset < from_offset + size:
            continue
        if m.offset != from_offset + size or (epoch_end is not None and m.end > epoch_end):
            break
        if size and size + m.size > max_bytes:
            break
        size += m.size
    if size == 0:
        return None
    label = entry
    if variant.label_switched_early and following is not None and from_offset + size == epoch_end:
        label = following
    return TransferHeader(from_offset, label.epoch, label.start_offset, confirm_offset, size)


class HeaderOutcome(enum.Enum):
    APPEND = "APPEND"  # same epoch as the last one received
    APPEND_AND_RECORD_EPOCH = "APPEND_AND_RECORD_EPOCH"  # a new epoch: record (epoch, epochStartOffset)
    OFFSET_MISMATCH = "OFFSET_MISMATCH"  # header offset != slave max offset: drop the connection


@attrs.frozen(slots=True)
class HeaderDecision:
    outcome: HeaderOutcome
    epoch_file: EpochFile
    confirm_offset: int


def on_transfer_header(f: EpochFile, slave_max: int, header: TransferHeader) -> HeaderDecision:
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
    if header.epoch != f.last_epoch:
        recorded, _ = append(f, header.epoch, header.epoch_start_offset)
        return HeaderDecision(HeaderOutcome.APPEND_AND_RECORD_EPOCH, recorded, confirm)
    return HeaderDecision(HeaderOutcome.APPEND, f, confirm)


def slave_confirm_offset(header_confirm_offset: int, slave_max: int) -> int:
    """A slave's confirmOffset: the master's, but never beyond its own log."""
    return min(header_confirm_offset, slave_max)
