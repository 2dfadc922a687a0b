"""Classic HA profiles: where releases differ, as named data.

| field | rocketmq-4.9.0 (4.9.0-4.9.2) | rocketmq-4.9.3 (4.9.3-4.9.8, default) | rocketmq-5.0 (5.0.0-5.3.x) |
|---|---|---|---|
| replica wait deadline | ``syncFlushTimeout`` | ``slaveTimeout`` | ``slaveTimeout`` |
| SLAVE_NOT_AVAILABLE (``isSlaveOK`` on the write path) | yes | yes | no (``isSlaveOK`` is unused) |
| SYNC_MASTER waits for | one slave's ack (``push2SlaveMaxOffset``) | one slave's ack (``push2SlaveMaxOffset``) | ``inSyncReplicas`` - 1 connections' acks, nothing when ``inSyncReplicas`` <= 1 |
| a report past the master's max offset (not the first) | accepted | closes the connection (#3015) | accepted |
| first report of a connection | after haSendHeartbeatInterval | after haSendHeartbeatInterval | at once if the last report is that old |
| slave housekeeping clock | last report written | last report written | last read from the master |
| reconnect after a close | at once | at once | after 5 s |

Sources: ``HAService``/``HAConnection`` and ``CommitLog.submitReplicaRequest`` at tags
rocketmq-all-4.9.0, -4.9.2, -4.9.3, -4.9.8; ``DefaultHAService``, ``DefaultHAConnection``,
``DefaultHAClient``, ``GroupTransferService`` and ``CommitLog.handleHA`` at
rocketmq-all-5.0.0, -5.1.4, -5.3.3 (docs/classic-ha.md).
"""
from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class ClassicProfile:
    name: str
    description: str
    # The replica request's timeout: "sync_flush_timeout" (4.9.0-4.9.2) or "slave_timeout".
    replica_timeout: str
    # CommitLog answers SLAVE_NOT_AVAILABLE when isSlaveOK fails (4.x); 5.x never asks.
    slave_not_available: bool
    # 5.x: handleHA answers PUT_OK without waiting when inSyncReplicas <= 1.
    wait_needs_in_sync_replicas: bool
    # 4.9.3+ (#3015): a report past the master's max offset closes the connection,
    # unless it is the connection's first report.
    close_on_ack_beyond_max: bool
    # 4.x: connectMaster sets lastWriteTimestamp to now, so the first report waits an interval.
    first_report_waits_interval: bool
    # The slave's housekeeping clock: "last_write" (4.x) or "last_read" (5.x).
    slave_housekeeping_clock: str
    # How long the slave waits after closing a connection before connecting again.
    reconnect_delay_ms: int


ROCKETMQ_4_9_0 = ClassicProfile(
    name="rocketmq-4.9.0",
    description="4.9.0-4.9.2: the replica wait lasts syncFlushTimeout; reports past the master are accepted",
    replica_timeout="sync_flush_timeout",
    slave_not_available=True,
    wait_needs_in_sync_replicas=False,
    close_on_ack_beyond_max=False,
    first_report_waits_interval=True,
    slave_housekeeping_clock="last_write",
    reconnect_delay_ms=0,
)

ROCKETMQ_4_9_3 = ClassicProfile(
    name="rocketmq-4.9.3",
    description="4.9.3-4.9.8: slaveTimeout for the replica wait; a later report past the master closes (#3015)",
    replica_timeout="slave_timeout",
    slave_not_available=True,
    wait_needs_in_sync_replicas=False,
    close_on_ack_beyond_max=True,
    first_report_waits_interval=True,
    slave_housekeeping_clock="last_write",
    reconnect_delay_ms=0,
)

ROCKETMQ_5_0 = ClassicProfile(
    name="rocketmq-5.0",
    description="5.0-5.3 DefaultHAService: SYNC_MASTER waits only with inSyncReplicas >= 2, counting "
                "connections' acks; no SLAVE_NOT_AVAILABLE",
    replica_timeout="slave_timeout",
    slave_not_available=False,
    wait_needs_in_sync_replicas=True,
    close_on_ack_beyond_max=False,
    first_report_waits_interval=False,
    slave_housekeeping_clock="last_read",
    reconnect_delay_ms=5_000,
)

PROFILES: dict[str, ClassicProfile] = {p.name: p for p in (ROCKETMQ_4_9_3, ROCKETMQ_4_9_0, ROCKETMQ_5_0)}
DEFAULT_PROFILE = ROCKETMQ_4_9_3
