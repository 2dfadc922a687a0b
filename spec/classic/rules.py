"""The classic HA procedures bundled with a config and a profile.

Like spec/broker/rules.py: every procedure is a field, so a known-bad variant (a
mutant) is this bundle with one field replaced, and the reference node calls only
what the bundle holds.
"""
from __future__ import annotations

from typing import Callable

import attrs

from spec.classic import commitlog, master, slave, write
from spec.classic.profiles import DEFAULT_PROFILE, PROFILES, ClassicProfile
from spec.classic.records import DEFAULT_CONFIG, BrokerRole, ClassicConfig


@attrs.frozen(slots=True)
class ClassicRules:
    config: ClassicConfig = DEFAULT_CONFIG
    profile: ClassicProfile = DEFAULT_PROFILE
    # commitlog
    place_message: Callable = commitlog.place_message
    flush_commit_log: Callable = commitlog.flush_commit_log
    async_flush_round: Callable = commitlog.async_flush_round
    recovered_end: Callable = commitlog.recovered_end
    clean_files_keep_from: Callable = commitlog.clean_files_keep_from
    # the master's write path
    submit_flush_request: Callable = write.submit_flush_request
    group_commit_status: Callable = write.group_commit_status
    submit_replica_request: Callable = write.submit_replica_request
    transfer_status: Callable = write.transfer_status
    combine_put_status: Callable = write.combine_put_status
    # HAConnection
    on_slave_report: Callable = master.on_slave_report
    write_socket_round: Callable = master.write_socket_round
    master_housekeeping: Callable = master.master_housekeeping
    # HAClient
    on_connect: Callable = slave.on_connect
    on_read: Callable = slave.on_read
    on_report: Callable = slave.on_report
    periodic_report: Callable = slave.periodic_report
    progress_report: Callable = slave.progress_report
    on_frame: Callable = slave.on_frame
    fits_last_file: Callable = slave.fits_last_file
    slave_housekeeping: Callable = slave.slave_housekeeping

    @classmethod
    def for_profile(cls, name: str | None, config: ClassicConfig = DEFAULT_CONFIG) -> "ClassicRules":
        return cls(config=config, profile=PROFILES[name] if name else DEFAULT_PROFILE)

    @property
    def file_size(self) -> int:
        return self.config.mapped_file_size_commit_log

    def waits_for_slaves(self) -> bool:
        """Whether a PUT_OK of this configuration promises a slave's copy (SYNC_MASTER, and
        in 5.x inSyncReplicas >= 2)."""
        if self.config.broker_role is not BrokerRole.SYNC_MASTER:
            return False
        return not (self.profile.wait_needs_in_sync_replicas and self.config.in_sync_replicas <= 1)


DEFAULT_CLASSIC_RULES = ClassicRules()
