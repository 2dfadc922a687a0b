"""The broker's controller-mode procedures bundled with a config.

Like spec/controller/rules.py: every procedure is a field, so a known-bad variant is
this bundle with one field replaced.
"""
from __future__ import annotations

from typing import Callable

import attrs

from spec.broker import confirm_offset, consume, role, sync_state_set, write
from spec.broker.records import DEFAULT_HA_CONFIG, BrokerHAConfig
from spec.truncation import replication


@attrs.frozen(slots=True)
class BrokerRules:
    config: BrokerHAConfig = DEFAULT_HA_CONFIG
    in_use: Callable = sync_state_set.in_use
    propose: Callable = sync_state_set.propose
    apply_sync_state_set: Callable = sync_state_set.apply_sync_state_set
    on_alter_sync_state_set_reply: Callable = sync_state_set.on_alter_sync_state_set_reply
    maybe_shrink: Callable = sync_state_set.maybe_shrink
    on_connection_closed: Callable = sync_state_set.on_connection_closed
    on_slave_ack: Callable = sync_state_set.on_slave_ack
    compute_master_confirm_offset: Callable = confirm_offset.compute_master_confirm_offset
    slave_confirm_offset: Callable = confirm_offset.slave_confirm_offset
    dispatch_end: Callable = confirm_offset.dispatch_end
    recovered_dispatch_end: Callable = confirm_offset.recovered_dispatch_end
    next_queue_offsets_after_recovery: Callable = consume.next_queue_offsets_after_recovery
    check_write_admission: Callable = write.check_write_admission
    replication_status: Callable = write.replication_status
    adopt_sync_state_set_on_promotion: Callable = role.adopt_controller_sync_state_set
    change_broker_role: Callable = role.change_broker_role
    on_restart: Callable = role.on_restart
    flushed_for_transfer: Callable = replication.flushed_for_transfer  # a master ships only what it has flushed
    next_batch: Callable = replication.next_batch  # how a master labels and cuts what it ships a slave
    slave_handshake: Callable = replication.slave_handshake  # where a slave's log and master's agree
    on_transfer_header: Callable = replication.on_transfer_header  # how a slave appends a batch

    def shrink(self, local, master_id, caught_up_time, now):
        return self.maybe_shrink(local, master_id, caught_up_time, now, self.config)

    def admission(self, role_state, state):
        """Admission of a write on a master whose SyncStateSet view is ``state`` (None: it holds none)."""
        return self.check_write_admission(role_state, None if state is None else self.in_use(state), self.config)

    def role_change(self, state, master_broker_id, master_address, master_epoch, sync_state_set_epoch=None, members=None):
        """A role notification (NOTIFY_BROKER_ROLE_CHANGED) or any reply naming the master."""
        return self.change_broker_role(
            state, master_broker_id, master_address, master_epoch, sync_state_set_epoch, members,
            self.adopt_sync_state_set_on_promotion,
        )

    def on_register_reply(self, state, response):
        return role.on_register_reply(state, response, self.adopt_sync_state_set_on_promotion, self.change_broker_role)

    def on_elect_reply(self, state, response):
        return role.on_elect_reply(state, response, self.adopt_sync_state_set_on_promotion, self.change_broker_role)

    def on_replica_info(self, state, response):
        return role.on_replica_info(state, response, self.adopt_sync_state_set_on_promotion, self.change_broker_role)


DEFAULT_BROKER_RULES = BrokerRules()
