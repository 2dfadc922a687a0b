"""Broker liveness as the controller sees it (``DefaultBrokerHeartbeatManager``).

Brokers heartbeat every controller node each second. Each node keeps its own
table (heartbeats are not replicated), so after a controller leader change the new
leader knows only the brokers that heartbeat *it*. The API checks and the elect
policy consume liveness through the :class:`Liveness` protocol; the spec functions
take it as an input, as upstream's own tests do.
"""
from __future__ import annotations

from typing import Optional, Protocol

import attrs

from spec.controller.records import BrokerIdentity
from spec.frozenmap import FrozenMap, frozen_map

# BrokerConfig.controllerHeartBeatTimeoutMills and the heartbeat period of ReplicasManager.
DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000
HEARTBEAT_INTERVAL_MS = 1_000
# What onBrokerHeartbeat substitutes for absent fields.
UNKNOWN_EPOCH = -1
UNKNOWN_OFFSET = -1
DEFAULT_ELECTION_PRIORITY = 2**31 - 1  # Integer.MAX_VALUE: lowest priority
# What a broker's first heartbeat records as its confirmOffset: onBrokerHeartbeat builds the
# entry with the BrokerLiveInfo constructor that takes no confirmOffset, so the field keeps
# Java's default (5.1.x and develop). Later heartbeats set it together with (epoch, maxOffset).
FIRST_HEARTBEAT_CONFIRM_OFFSET = 0


@attrs.frozen(slots=True)
class BrokerLiveInfo:
    """A broker's latest heartbeat data: the elect policy orders candidates by it."""

    broker_name: str
    broker_address: str
    broker_id: int
    last_update_timestamp: int
    heartbeat_timeout_millis: int = DEFAULT_HEARTBEAT_TIMEOUT_MS
    epoch: int = UNKNOWN_EPOCH
    max_offset: int = UNKNOWN_OFFSET
    confirm_offset: int = UNKNOWN_OFFSET
    election_priority: int = DEFAULT_ELECTION_PRIORITY


@attrs.frozen(slots=True)
class BrokerHeartbeat:
    """``BrokerHeartbeatRequestHeader``: epoch is the last epoch of the broker's epoch file."""

    cluster_name: str
    broker_name: str
    broker_address: str
    broker_id: int
    epoch: int = UNKNOWN_EPOCH
    max_offset: int = UNKNOWN_OFFSET
    confirm_offset: int = UNKNOWN_OFFSET
    heartbeat_timeout_millis: int = DEFAULT_HEARTBEAT_TIMEOUT_MS
    election_priority: int = DEFAULT_ELECTION_PRIORITY

    @property
    def identity(self) -> BrokerIdentity:
        return BrokerIdentity(self.cluster_name, self.broker_name, self.broker_id)


@attrs.frozen(slots=True)
class HeartbeatTable:
    """``brokerLiveTable`` of one controller node: identity -> BrokerLiveInfo."""

    entries: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    def get(self, identity: BrokerIdentity) -> Optional[BrokerLiveInfo]:
        return self.entries.get(identity)


def is_broker_active(table: HeartbeatTable, identity: BrokerIdentity, now: int) -> bool:
    """Alive iff ``lastUpdateTimestamp + heartbeatTimeoutMillis >= now``."""
    info = table.get(identity)
    return info is not None and info.last_update_timestamp + info.heartbeat_timeout_millis >= now


def on_broker_heartbeat(table: HeartbeatTable, heartbeat: BrokerHeartbeat, now: int) -> HeartbeatTable:
    """Record a heartbeat.

    Any broker is accepted, registered or not (ignoring unknown brokers was #5712).
    A new entry records the heartbeat's epoch and maxOffset but confirmOffset 0
    (``FIRST_HEARTBEAT_CONFIRM_OFFSET``, upstream's constructor). A live entry keeps its
    address; its (epoch, maxOffset) -- and confirmOffset with them -- are replaced only
    when they grow: a larger epoch, or the same epoch with a larger maxOffset.
    Timestamp, timeout and priority always follow the heartbeat.
    """
    identity = heartbeat.identity
    prev = table.get(identity)
    if prev is None:
        info = BrokerLiveInfo(
            broker_name=heartbeat.broker_name,
            broker_address=heartbeat.broker_address,
            broker_id=heartbeat.broker_id,
            last_update_timestamp=now,
            heartbeat_timeout_millis=heartbeat.heartbeat_timeout_millis,
            epoch=heartbeat.epoch,
            max_offset=heartbeat.max_offset,
            confirm_offset=FIRST_HEARTBEAT_CONFIRM_OFFSET,
            election_priority=heartbeat.election_priority,
        )
    else:
        grows = heartbeat.epoch > prev.epoch or (heartbeat.epoch == prev.epoch and heartbeat.max_offset > prev.max_offset)
        grown = heartbeat if grows else prev
        info = BrokerLiveInfo(
            broker_name=prev.broker_name,
            broker_address=prev.broker_address,
            broker_id=prev.broker_id,
            last_update_timestamp=now,
            heartbeat_timeout_millis=heartbeat.heartbeat_timeout_millis,
            epoch=grown.epoch,
            max_offset=grown.max_offset,
            confirm_offset=grown.confirm_offset,
            election_priority=heartbeat.election_priority,
        )
    return HeartbeatTable(table.entries.set(identity, info))


def on_broker_channel_close(table: HeartbeatTable, identity: BrokerIdentity) -> tuple[HeartbeatTable, bool]:
    """A closed channel removes the entry at once; the caller notifies inactivity if it was there."""
    if identity not in table.entries:
        return table, False
    return HeartbeatTable(table.entries.remove(identity)), True


def scan_not_active_broker(table: HeartbeatTable, now: int) -> tuple[HeartbeatTable, tuple[BrokerIdentity, ...]]:
    """The 5-second scan: drop entries with ``now - last > timeout``; report them (sorted)."""
    expired = tuple(
        sorted(
            (i for i, info in table.entries.items() if now - info.last_update_timestamp > info.heartbeat_timeout_millis),
            key=lambda i: (i.cluster_name, i.broker_name, i.broker_id),
        )
    )
    entries = table.entries
    for identity in expired:
        entries = entries.remove(identity)
    return HeartbeatTable(entries), expired


class Liveness(Protocol):
    """What the controller APIs and the elect policy ask about brokers."""

    def is_alive(self, cluster_name: str, broker_name: str, broker_id: int) -> bool: ...

    def live_info(self, cluster_name: str, broker_name: str, broker_id: int) -> Optional[BrokerLiveInfo]: ...


@attrs.frozen(slots=True)
class HeartbeatLiveness:
    """Production liveness: one controller node's heartbeat table read at ``now``."""

    table: HeartbeatTable
    now: int

    def is_alive(self, cluster_name: str, broker_name: str, broker_id: int) -> bool:
        return is_broker_active(self.table, BrokerIdentity(cluster_name, broker_name, broker_id), self.now)

    def live_info(self, cluster_name: str, broker_name: str, broker_id: int) -> Optional[BrokerLiveInfo]:
        return self.table.get(BrokerIdentity(cluster_name, broker_name, broker_id))


@attrs.frozen(slots=True)
class StaticLiveness:
    """Liveness given directly, keyed by (brokerName, brokerId); the cluster name is ignored.

    ``live_infos`` need not cover every alive broker: a broker without data ties lowest
    in the elect policy.
    """

    alive: frozenset = attrs.field(factory=frozenset, converter=frozenset)
    live_infos: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    @classmethod
    def of(cls, broker_name: str, alive_ids=(), infos=None) -> "StaticLiveness":
        """``infos``: id -> (epoch, maxOffset[, electionPriority])."""
        live = {}
        for broker_id, data in (infos or {}).items():
            epoch, max_offset, *rest = data
            live[(broker_name, broker_id)] = BrokerLiveInfo(
                broker_name=broker_name,
                broker_address=f"{broker_name}-{broker_id}",
                broker_id=broker_id,
                last_update_timestamp=0,
                epoch=epoch,
                max_offset=max_offset,
                election_priority=rest[0] if rest else DEFAULT_ELECTION_PRIORITY,
            )
        return cls(frozenset((broker_name, i) for i in alive_ids), live)

    def is_alive(self, cluster_name: str, broker_name: str, broker_id: int) -> bool:
        return (broker_name, broker_id) in self.alive

    def live_info(self, cluster_name: str, broker_name: str, broker_id: int) -> Optional[BrokerLiveInfo]:
        return self.live_infos.get((broker_name, broker_id))
