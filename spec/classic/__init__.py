"""Classic master/slave HA (seed 001): ``HAService``, ``HAConnection``, ``HAClient``, ``CommitLog``.

The protocol most deployed RocketMQ clusters run: a master (SYNC_MASTER or
ASYNC_MASTER) streams its commitlog bytes to slaves over a TCP connection; a slave
reports its max offset (8 bytes) every haSendHeartbeatInterval and whenever it
grows; a SYNC_MASTER holds a producer's reply until a slave's report passes the
message. There are no epochs and no truncation.

* records.py   config (MessageStoreConfig), roles, statuses, wire records
* profiles.py  where releases differ (4.9.0-4.9.2, 4.9.3-4.9.8, 5.x)
* commitlog.py files, message placement, getCommitLogData, flush, recovery
* write.py     the master's write path: isSlaveOK, replica and flush requests, doWaitTransfer
* master.py    HAConnection: the slave's reports, the first transfer offset, batches, heartbeats
* slave.py     HAClient: connect, offset reports, the check of each frame, housekeeping

docs/classic-ha.md lists every rule with the class and release it comes from.
"""
