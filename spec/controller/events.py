"""Controller events (the entries of the controller's DLedger log) and their application.

An API call validates against the applied metadata and emits events; the active
controller appends them to its log and answers once they are applied. Every
controller node applies the same committed events in the same order, so
``apply_event`` is the whole replicated state machine. It is total: an event that
does not fit the current metadata changes nothing (upstream logs and ignores it).
"""
from __future__ import annotations

from typing import Callable, Optional, Union

import attrs

from spec.controller.records import (
    BrokerRegistration,
    BrokerReplicaInfo,
    BrokerSetMetadata,
    ControllerMetadata,
    SyncStateInfo,
    _int_set,
    _optional_int,
    _optional_int_set,
)


@attrs.frozen(slots=True)
class ApplyBrokerIdEvent:
    cluster_name: str
    broker_name: str
    broker_address: Optional[str]
    new_broker_id: int
    register_check_code: Optional[str] = None


@attrs.frozen(slots=True)
class UpdateBrokerAddressEvent:
    cluster_name: str
    broker_name: str
    broker_address: str
    broker_id: int


@attrs.frozen(slots=True)
class ElectMasterEvent:
    """A new master (``new_master_elected``) or none (the old master is cleared).

    ``cluster_name``/``broker_address`` are set only by the rocketmq-5.0 register
    path, where the first registrant's election also creates the broker set.
    """

    broker_name: str
    new_master_elected: bool
    new_master_broker_id: Optional[int] = attrs.field(default=None, converter=_optional_int)
    cluster_name: Optional[str] = None
    broker_address: Optional[str] = None


@attrs.frozen(slots=True)
class AlterSyncStateSetEvent:
    broker_name: str
    new_sync_state_set: frozenset[int] = attrs.field(converter=_int_set)


@attrs.frozen(slots=True)
class CleanBrokerDataEvent:
    """Remove the listed ids, or the whole set when ``broker_ids_to_clean`` is None/empty."""

    broker_name: str
    broker_ids_to_clean: Optional[frozenset[int]] = attrs.field(default=None, converter=_optional_int_set)


ControllerEvent = Union[
    ApplyBrokerIdEvent, UpdateBrokerAddressEvent, ElectMasterEvent, AlterSyncStateSetEvent, CleanBrokerDataEvent
]

EVENT_TYPES: tuple[type, ...] = (
    ApplyBrokerIdEvent,
    UpdateBrokerAddressEvent,
    ElectMasterEvent,
    AlterSyncStateSetEvent,
    CleanBrokerDataEvent,
)


def _add_broker(replicas: BrokerReplicaInfo, broker_id: int, address, check_code) -> BrokerReplicaInfo:
    """``BrokerReplicaInfo.addBroker``: record the id and advance the counter by one."""
    return BrokerReplicaInfo(
        next_assign_broker_id=replicas.next_assign_broker_id + 1,
        brokers=replicas.brokers.set(broker_id, BrokerRegistration(address, check_code)),
    )


def _apply_broker_id(metadata: ControllerMetadata, event: ApplyBrokerIdEvent) -> ControllerMetadata:
    known = metadata.known(event.broker_name)
    if known is None:
        # First broker of this set (or only one half survived a clean): start afresh.
        return metadata.with_set(
            event.broker_name,
            BrokerSetMetadata(
                cluster_name=event.cluster_name,
                replicas=_add_broker(
                    BrokerReplicaInfo(), event.new_broker_id, event.broker_address, event.register_check_code
                ),
                sync_state=SyncStateInfo(),
            ),
        )
    if known.replicas.is_broker_exist(event.new_broker_id):
        # An idempotent retry: already held (by the same check code), nothing moves.
        return metadata
    replicas = _add_broker(known.replicas, event.new_broker_id, event.broker_address, event.register_check_code)
    return metadata.with_set(event.broker_name, attrs.evolve(known, replicas=replicas))


def _update_broker_address(metadata: ControllerMetadata, event: UpdateBrokerAddressEvent) -> ControllerMetadata:
    found = metadata.get(event.broker_name)
    if found is None or found.replicas is None or not found.replicas.is_broker_exist(event.broker_id):
        return metadata
    old = found.replicas.brokers[event.broker_id]
    brokers = found.replicas.brokers.set(event.broker_id, BrokerRegistration(event.broker_address, old.register_check_code))
    return metadata.with_set(event.broker_name, attrs.evolve(found, replicas=attrs.evolve(found.replicas, brokers=brokers)))


def _elect_master(metadata: ControllerMetadata, event: ElectMasterEvent) -> ControllerMetadata:
    known = metadata.known(event.broker_name)
    if known is None:
        if event.new_master_elected and event.broker_address is not None:
            # rocketmq-5.0: the first registrant creates the set as its master, with
            # id 1, masterEpoch 1, SyncStateSet {self} at syncStateSetEpoch 1. The id
            # counter does not move for it (5.0's BrokerInfo.addBroker has no counter),
            # so the next id assigned by register is 2.
            master = event.new_master_broker_id
            return metadata.with_set(
                event.broker_name,
                BrokerSetMetadata(
                    cluster_name=event.cluster_name or "",
                    replicas=BrokerReplicaInfo(
                        next_assign_broker_id=master + 1,
                        brokers={master: BrokerRegistration(event.broker_address, None)},
                    ),
                    sync_state=SyncStateInfo(master, 1, frozenset({master}), 1),
                ),
            )
        return metadata
    state = known.sync_state
    if event.new_master_elected:
        state = SyncStateInfo(
            master_broker_id=event.new_master_broker_id,
            master_epoch=state.master_epoch + 1,
            sync_state_set=frozenset({event.new_master_broker_id}),
            sync_state_set_epoch=state.sync_state_set_epoch + 1,
        )
    else:
        # No winner: clear the master, keep the SyncStateSet and its epoch.
        state = attrs.evolve(state, master_broker_id=None, master_epoch=state.master_epoch + 1)
    return metadata.with_set(event.broker_name, attrs.evolve(known, sync_state=state))


def _alter_sync_state_set(metadata: ControllerMetadata, event: AlterSyncStateSetEvent) -> ControllerMetadata:
    known = metadata.known(event.broker_name)
    if known is None:
        return metadata
    state = attrs.evolve(
        known.sync_state,
        sync_state_set=event.new_sync_state_set,
        sync_state_set_epoch=known.sync_state.sync_state_set_epoch + 1,
    )
    return metadata.with_set(event.broker_name, attrs.evolve(known, sync_state=state))


def _clean_broker_data(metadata: ControllerMetadata, event: CleanBrokerDataEvent) -> ControllerMetadata:
    if not event.broker_ids_to_clean:
        return metadata.with_set(event.broker_name, None)
    known = metadata.known(event.broker_name)
    if known is None:
        return metadata
    brokers = known.replicas.brokers
    for broker_id in event.broker_ids_to_clean:
        brokers = brokers.remove(broker_id)
    members = known.sync_state.sync_state_set - event.broker_ids_to_clean
    # Upstream leaves the master field alone, even when the master's id is cleaned.
    replicas = attrs.evolve(known.replicas, brokers=brokers) if brokers else None
    sync_state = attrs.evolve(known.sync_state, sync_state_set=members) if members else None
    return metadata.with_set(event.broker_name, attrs.evolve(known, replicas=replicas, sync_state=sync_state))


_APPLY: dict[type, Callable[[ControllerMetadata, object], ControllerMetadata]] = {
    ApplyBrokerIdEvent: _apply_broker_id,
    UpdateBrokerAddressEvent: _update_broker_address,
    ElectMasterEvent: _elect_master,
    AlterSyncStateSetEvent: _alter_sync_state_set,
    CleanBrokerDataEvent: _clean_broker_data,
}


def apply_event(metadata: ControllerMetadata, event: ControllerEvent) -> ControllerMetadata:
    """``ReplicasInfoManager.applyEvent``: the controller state machine."""
    try:
        handler = _APPLY[type(event)]
    except KeyError:
        raise TypeError(f"not a controller event: {event!r}") from None
    return handler(metadata, event)


def apply_events(metadata: ControllerMetadata, events) -> ControllerMetadata:
    for event in events:
        metadata = apply_event(metadata, event)
    return metadata


__all__ = [
    "ApplyBrokerIdEvent",
    "UpdateBrokerAddressEvent",
    "ElectMasterEvent",
    "AlterSyncStateSetEvent",
    "CleanBrokerDataEvent",
    "ControllerEvent",
    "EVENT_TYPES",
    "apply_event",
    "apply_events",
]
