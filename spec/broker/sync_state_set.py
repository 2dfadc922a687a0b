"""Master-side SyncStateSet maintenance: propose, apply, shrink, expand, caught-up time.

The master keeps ``local`` (accepted by the controller) and ``proposed`` (alters not
yet answered). A new set is applied locally only after the controller accepts it;
until then every safety decision uses ``local | proposed``:

* expanding {A} to {A, B}: B must already ack writes while the alter is in flight,
  because the controller may accept it and the reply may be lost (#5663);
* shrinking {A, B} to {A}: B keeps counting until the controller has removed it.

Proposals accumulate: every pending alter was sent at the current ``local_epoch``, and
the controller's alter is a compare-and-set on that epoch, so once any newer set is
applied (accept reply, getReplicaInfo poll, role change) none of the pending ones
can still be accepted and ``proposed`` is dropped.
"""
from __future__ import annotations

import enum
from typing import Mapping, Optional

import attrs

from spec.broker.records import DEFAULT_HA_CONFIG, BrokerHAConfig, MasterSyncStateSet, SlaveConnection
from spec.controller.records import AlterSyncStateSetResponse, ResponseCode


def in_use(state: MasterSyncStateSet) -> frozenset[int]:
    """The set every safety decision uses: local | proposed."""
    return state.in_use


def propose(state: MasterSyncStateSet, new_set: frozenset[int]) -> MasterSyncStateSet:
    """Record an alter sent to the controller (``markSynchronizingSyncStateSet``)."""
    pending = frozenset(new_set) if state.proposed is None else state.proposed | frozenset(new_set)
    return attrs.evolve(state, proposed=pending)


class ApplyOutcome(enum.Enum):
    APPLIED = "APPLIED"
    IGNORED_STALE_EPOCH = "IGNORED_STALE_EPOCH"
    REJECTED_PROPOSAL_KEPT = "REJECTED_PROPOSAL_KEPT"


def apply_sync_state_set(
    state: MasterSyncStateSet, new_set: frozenset[int], epoch: int
) -> tuple[ApplyOutcome, MasterSyncStateSet]:
    """``changeSyncStateSet``: only a strictly newer syncStateSetEpoch is applied."""
    if epoch <= state.local_epoch:
        return ApplyOutcome.IGNORED_STALE_EPOCH, state
    return ApplyOutcome.APPLIED, MasterSyncStateSet(frozenset(new_set), epoch, None)


def on_alter_sync_state_set_reply(
    state: MasterSyncStateSet, response: AlterSyncStateSetResponse
) -> tuple[ApplyOutcome, MasterSyncStateSet]:
    """Apply an accepted alter; a rejection leaves ``proposed`` pending (the controller may
    have accepted an earlier alter whose reply was lost: only a newer set ends it)."""
    if response.code != ResponseCode.SUCCESS or response.sync_state_set is None:
        return ApplyOutcome.REJECTED_PROPOSAL_KEPT, state
    body = response.sync_state_set
    return apply_sync_state_set(state, body.sync_state_set, body.sync_state_set_epoch)


# --------------------------------------------------------------------------- shrink

NOT_CAUGHT_UP = "not_caught_up"
NEVER_CONNECTED = "never_connected"


@attrs.frozen(slots=True)
class ShrinkDecision:
    changed: bool
    new_set: frozenset[int]
    removed: tuple[tuple[int, str], ...] = ()


def maybe_shrink(
    local: frozenset[int],
    master_id: int,
    caught_up_time: Mapping[int, int],
    now: int,
    config: BrokerHAConfig = DEFAULT_HA_CONFIG,
) -> ShrinkDecision:
    """The 5-second check (``maybeShrinkSyncStateSet``), over the *local* set.

    A member is dropped when its last caught-up time is older than
    haMaxTimeSlaveNotCatchup (``now - t > 15 s``), or when it has none at all (it never
    connected and caught up). The master itself is never dropped.
    """
    removed = []
    for member in sorted(local):
        if member == master_id:
            continue
        last = caught_up_time.get(member)
        if last is None:
            removed.append((member, NEVER_CONNECTED))
        elif now - last > config.ha_max_time_slave_not_catchup_ms:
            removed.append((member, NOT_CAUGHT_UP))
    new_set = frozenset(local) - {m for m, _ in removed}
    return ShrinkDecision(bool(removed), new_set, tuple(removed))


def on_connection_closed(local: frozenset[int], master_id: int, slave_id: int) -> ShrinkDecision:
    """``removeConnection``: a member's closed connection proposes its removal at once."""
    if slave_id == master_id or slave_id not in local:
        return ShrinkDecision(False, frozenset(local))
    return ShrinkDecision(True, frozenset(local) - {slave_id}, ((slave_id, "connection_closed"),))


# --------------------------------------------------------------------------- caught-up time and expand


def caught_up_time(connection: SlaveConnection, ack_offset: int, master_max_offset: int, now: int) -> Optional[int]:
    """On a slave ack >= the master's max offset at the last transfer: the time of that
    transfer, or ``now`` if the ack equals the master's current max offset. None: not caught up."""
    if connection.is_async_learner or ack_offset < connection.last_master_max_offset:
        return None
    return now if ack_offset == master_max_offset else connection.last_transfer_time_ms


def record_caught_up_time(table: Mapping[int, int], slave_id: int, when: int) -> dict[int, int]:
    """``updateConnectionLastCaughtUpTime`` keeps the latest time it has seen."""
    updated = dict(table)
    updated[slave_id] = max(updated.get(slave_id, 0), when)
    return updated


class ExpandOutcome(enum.Enum):
    ALREADY_MEMBER = "ALREADY_MEMBER"
    ASYNC_LEARNER = "ASYNC_LEARNER"
    BEHIND_CONFIRM_OFFSET = "BEHIND_CONFIRM_OFFSET"
    BEHIND_EPOCH_START = "BEHIND_EPOCH_START"
    EXPAND = "EXPAND"


@attrs.frozen(slots=True)
class ExpandDecision:
    outcome: ExpandOutcome
    new_set: Optional[frozenset[int]] = None


def maybe_expand(
    local: frozenset[int],
    slave_id: int,
    ack_offset: int,
    confirm_offset: int,
    epoch_start_offset: int,
    is_async_learner: bool = False,
) -> ExpandDecision:
    """``maybeExpandInSyncStateSet``: a slave joins when its ack >= confirmOffset and >= the
    start offset of the master's current epoch. Async learners never join."""
    if slave_id in local:
        return ExpandDecision(ExpandOutcome.ALREADY_MEMBER)
    if is_async_learner:
        return ExpandDecision(ExpandOutcome.ASYNC_LEARNER)
    if ack_offset < confirm_offset:
        return ExpandDecision(ExpandOutcome.BEHIND_CONFIRM_OFFSET)
    if ack_offset < epoch_start_offset:
        return ExpandDecision(ExpandOutcome.BEHIND_EPOCH_START)
    return ExpandDecision(ExpandOutcome.EXPAND, frozenset(local) | {slave_id})


@attrs.frozen(slots=True)
class AckDecision:
    """A slave ack on the master: the caught-up time to record (or None) and the expand check
    (None when the ack did not pass the caught-up condition, as in AutoSwitchHAConnection)."""

    caught_up_time: Optional[int]
    expand: Optional[ExpandDecision]


def on_slave_ack(
    local: frozenset[int],
    connection: SlaveConnection,
    ack_offset: int,
    master_max_offset: int,
    confirm_offset: int,
    epoch_start_offset: int,
    now: int,
) -> AckDecision:
    when = caught_up_time(connection, ack_offset, master_max_offset, now)
    if when is None:
        return AckDecision(None, None)
    expand = maybe_expand(
        local, connection.slave_id, ack_offset, confirm_offset, epoch_start_offset, connection.is_async_learner
    )
    return AckDecision(when, expand)
