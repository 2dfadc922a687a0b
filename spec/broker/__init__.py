"""Broker side of controller mode: SyncStateSet maintenance, confirmOffset, writes, roles.

* records.py         config, connections, the master's SyncStateSet view, role state, log entries
* sync_state_set.py  local | proposed, propose/apply, shrink, expand, caught-up time
* confirm_offset.py  master and slave confirmOffset, consume-queue bound
* write.py           write admission and replication acknowledgement
* role.py            role changes (only on a newer epoch), fencing, the getReplicaInfo poll
* register.py        the registration flow (getNextBrokerId -> applyBrokerId -> register)
* consume.py         visible messages, queue offsets after a restart
* rules.py           the procedures bundled with a config (mutants swap fields)
"""
