"""The master's write path: flush and replica requests and the producer's status.

After a message is appended (``CommitLog.putMessage``), two requests run and their
statuses combine (``thenCombine``: a flush failure first, then a replica failure
overrides; both PUT_OK gives PUT_OK):

**Flush request** (``submitFlushRequest``): ASYNC_FLUSH answers PUT_OK at once (the
flush service runs on its own); SYNC_FLUSH waits for ``GroupCommitService``, which
flushes (at most twice: the message may open a new file) and answers PUT_OK if the
flushed offset reached the message's end, else FLUSH_DISK_TIMEOUT.

**Replica request** (``submitReplicaRequest`` in 4.x, ``handleHA`` in 5.x), first row wins:

| row | when | result |
|---|---|---|
| not_sync_master | the role is not SYNC_MASTER, or the message does not wait for the store (waitStoreMsgOK false) | PUT_OK |
| no_acks_needed | 5.x: inSyncReplicas <= 1 | PUT_OK |
| slave_not_available | 4.x: ``isSlaveOK`` fails (no connection, or the gap ``nextOffset - push2SlaveMaxOffset`` is not under haMaxGapNotInSync) | SLAVE_NOT_AVAILABLE |
| wait | otherwise | a request until ``now + timeout`` (syncFlushTimeout in 4.9.0-4.9.2, slaveTimeout later) |

**doWaitTransfer** decides a waiting request: PUT_OK once enough slaves acknowledged
it, else FLUSH_SLAVE_TIMEOUT when the deadline has come, else it keeps waiting.
Upstream counts a slave as soon as its ack reaches the message's ``nextOffset`` (4.x:
``push2SlaveMaxOffset >= nextOffset``, the furthest ack of any connection; 5.x: the
master and the connections whose ack reached it number at least the needed acks).

rmqha decision (docs/classic-ha.md, "acks of an empty slave"): a connection whose
slave reported 0 is sent the master's *last file* only, so its acks say nothing of the
bytes before that file; upstream counts them anyway, and a SYNC_MASTER answers PUT_OK
for a message no slave holds (an empty slave joins while a message in an older file
waits). rmqha counts a connection for a message only if its transfer began at or
before the message (``transfer_from <= wroteOffset``). The upstream rule is the mutant
``upstream-ack-covers-unsent-prefix``.
"""
from __future__ import annotations

import enum
from typing import Iterable

import attrs

from spec.classic.profiles import DEFAULT_PROFILE, ClassicProfile
from spec.classic.records import DEFAULT_CONFIG, BrokerRole, ClassicConfig, FlushDiskType, PutMessageStatus


# ---------------------------------------------------------------- isSlaveOK


class SlaveOkOutcome(enum.Enum):
    SLAVE_OK = "SLAVE_OK"
    NO_CONNECTION = "NO_CONNECTION"
    SLAVE_FALL_BEHIND = "SLAVE_FALL_BEHIND"


def is_slave_ok(connection_count: int, push2_slave_max_offset: int, master_put_where: int,
                config: ClassicConfig = DEFAULT_CONFIG) -> SlaveOkOutcome:
    """``HAService.isSlaveOK(masterPutWhere)``: a connection exists and the gap between
    the message's end and the furthest ack is under haMaxGapNotInSync."""
    if connection_count <= 0:
        return SlaveOkOutcome.NO_CONNECTION
    if master_put_where - push2_slave_max_offset >= config.ha_max_gap_not_in_sync:
        return SlaveOkOutcome.SLAVE_FALL_BEHIND
    return SlaveOkOutcome.SLAVE_OK


# ---------------------------------------------------------------- replica request


class ReplicaOutcome(enum.Enum):
    NOT_SYNC_MASTER = "NOT_SYNC_MASTER"
    NO_ACKS_NEEDED = "NO_ACKS_NEEDED"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    WAIT = "WAIT"


@attrs.frozen(slots=True)
class ReplicaRequest:
    """A ``GroupCommitRequest`` handed to ``GroupTransferService``."""

    wrote_offset: int
    next_offset: int  # wroteOffset + wroteBytes
    deadline: int
    need_acks: int = 2  # the master included (4.x: one slave)


@attrs.frozen(slots=True)
class ReplicaDecision:
    outcome: ReplicaOutcome
    status: PutMessageStatus | None  # answered at once; None: ``request`` waits
    request: ReplicaRequest | None = None


def submit_replica_request(wrote_offset: int, wrote_bytes: int, now: int, connection_count: int,
                           push2_slave_max_offset: int, wait_store_msg_ok: bool = True,
                           config: ClassicConfig = DEFAULT_CONFIG,
                           profile: ClassicProfile = DEFAULT_PROFILE) -> ReplicaDecision:
    """What a master does with the message it wrote at ``[wrote_offset, wrote_offset + wrote_bytes)``."""
    next_offset = wrote_offset + wrote_bytes
    if config.broker_role is not BrokerRole.SYNC_MASTER or not wait_store_msg_ok:
        return ReplicaDecision(ReplicaOutcome.NOT_SYNC_MASTER, PutMessageStatus.PUT_OK)
    if profile.wait_needs_in_sync_replicas and config.in_sync_replicas <= 1:
        return ReplicaDecision(ReplicaOutcome.NO_ACKS_NEEDED, PutMessageStatus.PUT_OK)
    if profile.slave_not_available and \
            is_slave_ok(connection_count, push2_slave_max_offset, next_offset, config) is not SlaveOkOutcome.SLAVE_OK:
        return ReplicaDecision(ReplicaOutcome.SLAVE_NOT_AVAILABLE, PutMessageStatus.SLAVE_NOT_AVAILABLE)
    timeout = config.sync_flush_timeout_ms if profile.replica_timeout == "sync_flush_timeout" \
        else config.slave_timeout_ms
    need = config.in_sync_replicas if profile.wait_needs_in_sync_replicas else 2
    return ReplicaDecision(ReplicaOutcome.WAIT, None, ReplicaRequest(wrote_offset, next_offset, now + timeout, need))


class TransferOutcome(enum.Enum):
    PUT_OK = "PUT_OK"
    WAITING = "WAITING"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"


def transfer_status(request: ReplicaRequest, push2_slave_max_offset: int,
                    connection_acks: Iterable[tuple[int, int]], now: int) -> TransferOutcome:
    """``GroupTransferService.doWaitTransfer`` for one request, at ``now``.

    ``connection_acks``: ``(transfer_from, slaveAckOffset)`` of each open connection,
    where ``transfer_from`` is where the bytes its acks stand for begin (0, or the
    last file's start for a slave that reported 0). ``push2_slave_max_offset`` is what
    upstream reads instead (kept for the upstream rule's mutant)."""
    holders = sum(1 for start, ack in connection_acks if start <= request.wrote_offset and ack >= request.next_offset)
    if 1 + holders >= request.need_acks:
        return TransferOutcome.PUT_OK
    return TransferOutcome.FLUSH_SLAVE_TIMEOUT if now >= request.deadline else TransferOutcome.WAITING


# ---------------------------------------------------------------- flush request


class FlushRequestOutcome(enum.Enum):
    ASYNC_FLUSH = "ASYNC_FLUSH"  # answered PUT_OK at once
    WAIT_FLUSH = "WAIT_FLUSH"  # GroupCommitService decides


def submit_flush_request(config: ClassicConfig = DEFAULT_CONFIG, wait_store_msg_ok: bool = True) -> FlushRequestOutcome:
    """``submitFlushRequest``: only SYNC_FLUSH makes the producer wait for the disk
    (a message not waiting for the store only wakes the flush service up)."""
    if config.flush_disk_type is FlushDiskType.SYNC_FLUSH and wait_store_msg_ok:
        return FlushRequestOutcome.WAIT_FLUSH
    return FlushRequestOutcome.ASYNC_FLUSH


def group_commit_status(flushed: int, next_offset: int) -> PutMessageStatus:
    """``GroupCommitService.doCommit`` after its (at most two) flushes."""
    return PutMessageStatus.PUT_OK if flushed >= next_offset else PutMessageStatus.FLUSH_DISK_TIMEOUT


def combine_put_status(flush_status: PutMessageStatus, replica_status: PutMessageStatus) -> PutMessageStatus:
    """``flushResultFuture.thenCombine(replicaResultFuture, ...)``."""
    status = PutMessageStatus.PUT_OK
    if flush_status is not PutMessageStatus.PUT_OK:
        status = flush_status
    if replica_status is not PutMessageStatus.PUT_OK:
        status = replica_status
    return status
