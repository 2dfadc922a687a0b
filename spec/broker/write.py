"""Write admission and replication acknowledgement on the master (``CommitLog``, ``GroupTransferService``).

Admission, before appending (first failing row wins):

1. ``broker_not_writable`` -> SERVICE_NOT_AVAILABLE: fenced (role not confirmed since
   the restart), not the master, or a master holding no SyncStateSet (``None``: its
   replica refused to lead, ``change_to_master``, so its role change never finished);
2. ``in_sync_replicas_not_enough`` -> IN_SYNC_REPLICAS_NOT_ENOUGH: fewer members in
   ``local | proposed`` than minInSyncReplicas;
3. ``admitted``: with allAckInSyncStateSet every member must ack, else inSyncReplicas
   replicas (the master counts as one; default 1: the master alone).

Acknowledgement: PUT_OK once enough acks reached the message's end offset, or
FLUSH_SLAVE_TIMEOUT at the deadline. A timed-out message stays in the log and may
be truncated later.
"""
from __future__ import annotations

import enum
from typing import Mapping, Optional

import attrs

from spec.broker.records import DEFAULT_HA_CONFIG, BrokerHAConfig, BrokerRoleState, PutMessageStatus

# MixAll.ALL_ACK_IN_SYNC_STATE_SET
ALL_ACK_IN_SYNC_STATE_SET = -1


@attrs.frozen(slots=True)
class AdmissionDecision:
    check: str
    status: Optional[PutMessageStatus]  # None: admitted
    need_ack_nums: int = 0  # ALL_ACK_IN_SYNC_STATE_SET, or replicas (master included)

    @property
    def admitted(self) -> bool:
        return self.status is None


def check_write_admission(
    role: BrokerRoleState, sync_state_set: Optional[frozenset[int]], config: BrokerHAConfig = DEFAULT_HA_CONFIG
) -> AdmissionDecision:
    """``sync_state_set`` is local | proposed; None when the broker holds no SyncStateSet."""
    if not role.writable or sync_state_set is None:
        return AdmissionDecision("broker_not_writable", PutMessageStatus.SERVICE_NOT_AVAILABLE)
    if len(sync_state_set) < config.min_in_sync_replicas:
        return AdmissionDecision("in_sync_replicas_not_enough", PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH)
    need = ALL_ACK_IN_SYNC_STATE_SET if config.all_ack_in_sync_state_set else config.in_sync_replicas
    return AdmissionDecision("admitted", None, need)


class ReplicationOutcome(enum.Enum):
    PUT_OK = "PUT_OK"
    WAITING = "WAITING"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"


def replication_status(
    need_ack_nums: int,
    next_offset: int,
    sync_state_set: frozenset[int],
    master_id: int,
    acks: Mapping[int, int],
    now: int,
    deadline: int,
) -> ReplicationOutcome:
    """``doWaitTransfer`` for one message ending at ``next_offset``.

    allAck: every member of ``sync_state_set`` (local | proposed) other than the master
    has an open connection that acked ``next_offset``. Otherwise: the master plus every
    connected slave that acked it (members or not, as upstream counts connections) reach
    ``need_ack_nums``; 0 or 1 needs nothing from slaves.
    """
    if need_ack_nums == ALL_ACK_IN_SYNC_STATE_SET:
        done = all(acks.get(m, -1) >= next_offset for m in sync_state_set if m != master_id)
    elif need_ack_nums <= 1:
        done = True
    else:
        done = 1 + sum(1 for ack in acks.values() if ack >= next_offset) >= need_ack_nums
    if done:
        return ReplicationOutcome.PUT_OK
    return ReplicationOutcome.FLUSH_SLAVE_TIMEOUT if now >= deadline else ReplicationOutcome.WAITING
