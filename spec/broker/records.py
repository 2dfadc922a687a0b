"""Broker-side records for controller mode (``AutoSwitchHAService``, ``ReplicasManager``, ``CommitLog``)."""
from __future__ import annotations

import enum
from typing import Optional

import attrs

from spec.controller.records import _int_set, _optional_int_set


@attrs.frozen(slots=True)
class BrokerHAConfig:
    """The ``MessageStoreConfig``/``BrokerConfig`` options of controller mode (upstream defaults)."""

    ha_max_time_slave_not_catchup_ms: int = 15_000
    check_sync_state_set_period_ms: int = 5_000
    sync_broker_metadata_period_ms: int = 5_000
    all_ack_in_sync_state_set: bool = False
    # Replicas (master included) that must have a message before it is acknowledged.
    in_sync_replicas: int = 1
    min_in_sync_replicas: int = 1
    slave_timeout_ms: int = 3_000


DEFAULT_HA_CONFIG = BrokerHAConfig()


class PutMessageStatus(enum.Enum):
    """The ``PutMessageStatus`` values controller mode produces."""

    PUT_OK = "PUT_OK"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    IN_SYNC_REPLICAS_NOT_ENOUGH = "IN_SYNC_REPLICAS_NOT_ENOUGH"


@attrs.frozen(slots=True)
class SlaveConnection:
    """What the master knows of one HA connection (``AutoSwitchHAConnection``)."""

    slave_id: int
    # -1 until the slave's first ack in TRANSFER state.
    ack_offset: int = -1
    # lastMasterMaxOffset / lastTransferTimeMs: the master's max offset and the time of
    # the last data transfer on this connection.
    last_master_max_offset: int = -1
    last_transfer_time_ms: int = 0
    is_async_learner: bool = False


@attrs.frozen(slots=True)
class MasterSyncStateSet:
    """The master's view of its SyncStateSet.

    ``local`` is what the controller accepted (at ``local_epoch``); ``proposed`` is
    the union of the alters sent since then and not yet answered by a newer applied
    set. Every safety decision uses ``local | proposed`` (:func:`in_use`).
    """

    local: frozenset[int] = attrs.field(converter=_int_set)
    local_epoch: int
    proposed: Optional[frozenset[int]] = attrs.field(default=None, converter=_optional_int_set)

    @property
    def in_use(self) -> frozenset[int]:
        return self.local | self.proposed if self.proposed is not None else self.local


class Role(enum.Enum):
    NONE = "NONE"  # not yet known (restarted and not registered, or no master in the set)
    MASTER = "MASTER"
    SLAVE = "SLAVE"


@attrs.frozen(slots=True)
class BrokerRoleState:
    """``ReplicasManager``'s role bookkeeping; ``fenced`` is RunningFlags' FENCED bit."""

    broker_id: Optional[int]
    role: Role = Role.NONE
    master_epoch: int = 0
    master_broker_id: Optional[int] = None
    master_address: Optional[str] = None
    fenced: bool = True
    registered: bool = False

    @property
    def writable(self) -> bool:
        return not self.fenced and self.role is Role.MASTER


@attrs.frozen(slots=True)
class LogEntry:
    """A message in a commitlog: physical [start, end), its topic queue and queue offset."""

    msg_id: str
    start: int
    end: int
    queue: str = "q0"
    queue_offset: int = 0
