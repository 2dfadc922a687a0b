"""Role changes and fencing on the broker (``ReplicasManager``).

* A broker applies a role only when the controller's masterEpoch is strictly newer
  than the one it has (``changeBrokerRole``), and a SyncStateSet only when its
  syncStateSetEpoch is strictly newer (``changeSyncStateSet``).
* A new master adopts the controller's SyncStateSet at the controller's epoch (taking
  {self} at that epoch was #6342).
* A restarted broker is fenced -- it refuses writes -- until it has registered and
  knows its role: from the register reply, or from its own electMaster (#6508).
* Every 5 s the broker polls getReplicaInfo and acts only on a larger masterEpoch; if
  the set has no master it asks electMaster for itself.
"""
from __future__ import annotations

import enum
from typing import Callable, Optional

import attrs

from spec.broker.records import BrokerRoleState, Role
from spec.controller.records import (
    ElectMasterResponse,
    GetReplicaInfoResponse,
    RegisterBrokerResponse,
    ResponseCode,
)

# (self id, the controller's set, its epoch) -> the (set, epoch) a new master adopts.
AdoptSyncStateSet = Callable[[int, frozenset[int], int], tuple[frozenset[int], int]]


def adopt_controller_sync_state_set(self_id: int, sync_state_set: frozenset[int], epoch: int) -> tuple[frozenset[int], int]:
    return frozenset(sync_state_set), epoch


class RoleOutcome(enum.Enum):
    NO_MASTER = "NO_MASTER"
    IGNORED_STALE_EPOCH = "IGNORED_STALE_EPOCH"
    CHANGE_TO_MASTER = "CHANGE_TO_MASTER"
    CHANGE_TO_SLAVE = "CHANGE_TO_SLAVE"


@attrs.frozen(slots=True)
class RoleDecision:
    outcome: RoleOutcome
    state: BrokerRoleState
    # CHANGE_TO_MASTER: the (SyncStateSet, syncStateSetEpoch) to apply locally.
    sync_state_set: Optional[tuple[frozenset[int], int]] = None
    # The recorded master did not change (only the epoch moved): no HA reconnection.
    same_master: bool = False


def change_broker_role(
    state: BrokerRoleState,
    master_broker_id: Optional[int],
    master_address: Optional[str],
    master_epoch: Optional[int],
    sync_state_set_epoch: Optional[int] = None,
    sync_state_set: Optional[frozenset[int]] = None,
    adopt: AdoptSyncStateSet = adopt_controller_sync_state_set,
) -> RoleDecision:
    if master_broker_id is None or master_epoch is None:
        return RoleDecision(RoleOutcome.NO_MASTER, state)
    if master_epoch <= state.master_epoch:
        return RoleDecision(RoleOutcome.IGNORED_STALE_EPOCH, state)
    same_master = master_broker_id == state.master_broker_id
    if master_broker_id == state.broker_id:
        new_state = attrs.evolve(
            state, role=Role.MASTER, master_epoch=master_epoch, master_broker_id=master_broker_id, master_address=master_address
        )
        adopted = adopt(state.broker_id, frozenset(sync_state_set or ()), sync_state_set_epoch or 0)
        return RoleDecision(RoleOutcome.CHANGE_TO_MASTER, new_state, adopted, same_master)
    new_state = attrs.evolve(
        state, role=Role.SLAVE, master_epoch=master_epoch, master_broker_id=master_broker_id, master_address=master_address
    )
    return RoleDecision(RoleOutcome.CHANGE_TO_SLAVE, new_state, None, same_master)


def on_restart(persisted: BrokerRoleState) -> BrokerRoleState:
    """A restarted broker keeps only its id; it is fenced and knows no role or epoch."""
    return BrokerRoleState(broker_id=persisted.broker_id)


def _confirm(decision: RoleDecision) -> RoleDecision:
    """Registered and the role is known: unfence."""
    if decision.state.registered and decision.state.role is not Role.NONE:
        return attrs.evolve(decision, state=attrs.evolve(decision.state, fenced=False))
    return decision


def on_register_reply(
    state: BrokerRoleState,
    response: RegisterBrokerResponse,
    adopt: AdoptSyncStateSet = adopt_controller_sync_state_set,
    change: Callable[..., RoleDecision] = change_broker_role,
) -> RoleDecision:
    """``registerBrokerToController``: a known master gives the role; otherwise the broker
    must ask electMaster for itself (RoleOutcome.NO_MASTER) and stays fenced."""
    if response.code != ResponseCode.SUCCESS:
        return RoleDecision(RoleOutcome.NO_MASTER, state)
    registered = attrs.evolve(state, registered=True, broker_id=state.broker_id if response.broker_id is None else response.broker_id)
    body = response.sync_state_set
    decision = change(
        registered,
        response.master_broker_id,
        response.master_address,
        response.master_epoch,
        response.sync_state_set_epoch,
        body.sync_state_set if body is not None else None,
        adopt,
    )
    return _confirm(decision)


def on_elect_reply(
    state: BrokerRoleState,
    response: ElectMasterResponse,
    adopt: AdoptSyncStateSet = adopt_controller_sync_state_set,
    change: Callable[..., RoleDecision] = change_broker_role,
) -> RoleDecision:
    """``brokerElect``: any reply naming a master (SUCCESS, or 2011 with the current one) gives the role."""
    if response.master_broker_id is None or not response.master_address:
        return RoleDecision(RoleOutcome.NO_MASTER, state)
    decision = change(
        state,
        response.master_broker_id,
        response.master_address,
        response.master_epoch,
        response.sync_state_set_epoch,
        response.sync_state_set,
        adopt,
    )
    return _confirm(decision)


class PollOutcome(enum.Enum):
    RE_REGISTER = "RE_REGISTER"  # the controller lost this set's metadata (2008)
    CHANGE_ROLE = "CHANGE_ROLE"
    ELECT_SELF = "ELECT_SELF"  # newer masterEpoch but no master: ask electMaster for itself
    APPLY_SYNC_STATE_SET = "APPLY_SYNC_STATE_SET"  # same epoch, this broker is master
    NOTHING = "NOTHING"


@attrs.frozen(slots=True)
class PollDecision:
    outcome: PollOutcome
    role: Optional[RoleDecision] = None
    sync_state_set: Optional[tuple[frozenset[int], int]] = None


def on_replica_info(
    state: BrokerRoleState,
    response: GetReplicaInfoResponse,
    adopt: AdoptSyncStateSet = adopt_controller_sync_state_set,
    change: Callable[..., RoleDecision] = change_broker_role,
) -> PollDecision:
    """The 5-second ``getReplicaInfo`` poll (``schedulingSyncBrokerMetadata``)."""
    if response.code == ResponseCode.CONTROLLER_BROKER_METADATA_NOT_EXIST:
        return PollDecision(PollOutcome.RE_REGISTER)
    if response.code != ResponseCode.SUCCESS:
        return PollDecision(PollOutcome.NOTHING)
    body = response.sync_state_set
    if response.master_epoch > state.master_epoch:
        if response.master_broker_id is None or not response.master_address:
            return PollDecision(PollOutcome.ELECT_SELF)
        decision = change(
            state,
            response.master_broker_id,
            response.master_address,
            response.master_epoch,
            body.sync_state_set_epoch,
            body.sync_state_set,
            adopt,
        )
        return PollDecision(PollOutcome.CHANGE_ROLE, decision)
    if response.master_epoch == state.master_epoch and state.role is Role.MASTER:
        return PollDecision(PollOutcome.APPLY_SYNC_STATE_SET, None, (body.sync_state_set, body.sync_state_set_epoch))
    return PollDecision(PollOutcome.NOTHING)
