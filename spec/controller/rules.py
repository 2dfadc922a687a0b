"""The controller's procedures bundled with a profile and a config.

``ControllerRules`` is what a driver (the reference controller, an adapter, a test)
calls. Every procedure is a field, so a known-bad variant is the same bundle with
one field replaced (``attrs.evolve``); reference/mutants_controller.py builds them.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import attrs

from spec.controller import api, elect_policy, events, heartbeat, scheduling
from spec.controller.profiles import DEFAULT_PROFILE, ControllerProfile, get_profile
from spec.controller.records import (
    DEFAULT_CONFIG,
    AlterSyncStateSetRequest,
    ApplyBrokerIdRequest,
    CleanBrokerDataRequest,
    ControllerConfig,
    ControllerMetadata,
    ElectMasterRequest,
    GetNextBrokerIdRequest,
    GetReplicaInfoRequest,
    RegisterBrokerRequest,
)

# request type -> API name, which is also the ControllerRules field that handles it
API_OF_REQUEST: dict[type, str] = {
    GetNextBrokerIdRequest: "get_next_broker_id",
    ApplyBrokerIdRequest: "apply_broker_id",
    RegisterBrokerRequest: "register_broker",
    GetReplicaInfoRequest: "get_replica_info",
    AlterSyncStateSetRequest: "alter_sync_state_set",
    ElectMasterRequest: "elect_master",
    CleanBrokerDataRequest: "clean_broker_data",
}


class UnsupportedRequest(ValueError):
    """The profile has no such API (rocketmq-5.0 has no getNextBrokerId/applyBrokerId)."""


@attrs.frozen(slots=True)
class ControllerRules:
    profile: ControllerProfile = DEFAULT_PROFILE
    config: ControllerConfig = DEFAULT_CONFIG
    get_next_broker_id: Callable = api.get_next_broker_id
    apply_broker_id: Callable = api.apply_broker_id
    register_broker: Callable = api.register_broker
    get_replica_info: Callable = api.get_replica_info
    alter_sync_state_set: Callable = api.alter_sync_state_set
    elect_master: Callable = api.elect_master
    clean_broker_data: Callable = api.clean_broker_data
    candidate_order: Callable = elect_policy.order_candidates
    apply_event: Callable = events.apply_event
    on_broker_heartbeat: Callable = heartbeat.on_broker_heartbeat
    scan_need_reelect_broker_sets: Callable = scheduling.scan_need_reelect_broker_sets
    enters_leader_state: Callable = scheduling.enters_leader_state
    controller_not_leader: Callable = api.controller_not_leader

    @classmethod
    def for_profile(cls, name: str, config: ControllerConfig = DEFAULT_CONFIG) -> "ControllerRules":
        return cls(profile=get_profile(name), config=config)

    def handle(self, metadata: ControllerMetadata, request: Any, liveness, *, is_leader: bool = True):
        """Validate one API call on the (leader's) applied metadata: ControllerResult."""
        try:
            name = API_OF_REQUEST[type(request)]
        except KeyError:
            raise TypeError(f"not a controller request: {request!r}") from None
        if not self.profile.supports(name):
            raise UnsupportedRequest(f"{self.profile.name} has no {name}")
        if not is_leader:
            return self.controller_not_leader(request, metadata, liveness=liveness, config=self.config,
                                              profile=self.profile)
        procedure = getattr(self, name)
        return procedure(
            metadata, request, liveness, config=self.config, profile=self.profile, order=self.candidate_order
        )

    def apply(self, metadata: ControllerMetadata, applied: Iterable) -> ControllerMetadata:
        for event in applied:
            metadata = self.apply_event(metadata, event)
        return metadata

    def execute(self, metadata: ControllerMetadata, request: Any, liveness, *, is_leader: bool = True):
        """handle + apply: (ControllerResult, metadata after the result's events)."""
        result = self.handle(metadata, request, liveness, is_leader=is_leader)
        return result, self.apply(metadata, result.events)


DEFAULT_RULES = ControllerRules()
