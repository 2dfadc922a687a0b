"""A controller-mode broker node of the adapter protocol (node kind ``broker``,
docs/adapter-protocol.md): what it is told when created, what producers send it and
hear back, the id its commitlog keeps per message, and what the monitor observes.

Between brokers it speaks the HA messages of ``spec.truncation.messages``; with the
controllers, ``spec.controller.messages``.
"""
from __future__ import annotations

from typing import Optional

import attrs

from spec.broker.records import (
    DEFAULT_HA_CONFIG,
    BrokerHAConfig,
    BrokerRoleState,
    LogEntry,
    MasterSyncStateSet,
)
from spec.broker.consume import visible_entries
from spec.truncation.epoch_file import EpochFile
from spec.truncation.messages import MESSAGE_SIZE

MAX_ELECTION_PRIORITY = 2**31 - 1  # Integer.MAX_VALUE: the lowest priority (upstream's default)


@attrs.frozen(slots=True)
class BrokerNodeConfig:
    """``BrokerConfig``/``MessageStoreConfig`` of one broker of a set in controller mode."""

    cluster_name: str
    broker_name: str
    controllers: tuple[str, ...]  # the controller nodes it registers with and heartbeats
    ha: BrokerHAConfig = DEFAULT_HA_CONFIG
    async_learner: bool = False
    election_priority: int = MAX_ELECTION_PRIORITY


@attrs.frozen(slots=True)
class MessageTag:
    """What the commitlog stores of a message besides its position (its id on the HA wire)."""

    msg_id: str
    queue: str
    queue_offset: int


@attrs.frozen(slots=True)
class Produce:
    """A producer's write, delivered to the broker it believes is master."""

    msg_id: str
    queue: str = "q0"
    size: int = MESSAGE_SIZE  # bytes of commitlog it takes


@attrs.frozen(slots=True)
class ProduceResult:
    """The broker's answer to a ``Produce`` (to its sender): ``PUT_OK`` acknowledges it."""

    msg_id: str
    status: str  # a PutMessageStatus value


@attrs.frozen(slots=True)
class BrokerNodeView:
    """What the monitor reads of a broker after every step (docs/adapter-protocol.md)."""

    node_id: str
    role_state: BrokerRoleState  # broker id, role, masterEpoch, fenced, registered
    sync_state: Optional[MasterSyncStateSet]  # a master's SyncStateSet view (None on a slave)
    max_offset: int
    flushed: int  # what survives a crash
    confirm_offset: int
    dispatched_offset: int  # the consume queue's end: consumers see messages that end at or before it
    epoch_file: EpochFile
    log: tuple[LogEntry, ...]

    @property
    def broker_id(self) -> Optional[int]:
        return self.role_state.broker_id

    def visible(self) -> tuple[LogEntry, ...]:
        """What a consumer reading from this broker sees."""
        return visible_entries(self.log, self.dispatched_offset)
