"""Controller records: metadata, requests, responses, response codes (RIP-44 controller).

Names follow apache/rocketmq (``ReplicasInfoManager``, ``SyncStateInfo``,
``BrokerReplicaInfo``, the ``*RequestHeader``/``*ResponseHeader`` classes). Everything
is a frozen attrs record; the whole controller metadata is an immutable mapping
``brokerName -> BrokerSetMetadata``, evolved only by :func:`spec.controller.events.apply_event`.
"""
from __future__ import annotations

import enum
from typing import Optional

import attrs

from spec.frozenmap import FrozenMap, frozen_map

# MixAll.FIRST_BROKER_CONTROLLER_ID: ids handed out by the controller start at 1.
FIRST_BROKER_CONTROLLER_ID = 1
# ElectMasterRequestHeader.ofControllerTrigger leaves brokerId at -1.
CONTROLLER_TRIGGER_BROKER_ID = -1


class ResponseCode(enum.IntEnum):
    """Response codes of the controller APIs (remoting ``ResponseCode``, 5.1 numbering)."""

    SUCCESS = 0
    # Never returned by the spec. Upstream answers it when a handler throws (the
    # event future completes exceptionally); the #7293 mutant produces it.
    SYSTEM_ERROR = 1
    CONTROLLER_FENCED_MASTER_EPOCH = 2000
    CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH = 2001
    CONTROLLER_INVALID_MASTER = 2002
    CONTROLLER_INVALID_REPLICAS = 2003
    CONTROLLER_MASTER_NOT_AVAILABLE = 2004
    # Defined upstream, returned by none of the controller APIs modelled here.
    CONTROLLER_INVALID_REQUEST = 2005
    CONTROLLER_BROKER_NOT_ALIVE = 2006
    CONTROLLER_NOT_LEADER = 2007
    CONTROLLER_BROKER_METADATA_NOT_EXIST = 2008
    CONTROLLER_INVALID_CLEAN_BROKER_METADATA = 2009
    CONTROLLER_BROKER_NEED_TO_BE_REGISTERED = 2010
    CONTROLLER_MASTER_STILL_EXIST = 2011
    CONTROLLER_ELECT_MASTER_FAILED = 2012
    CONTROLLER_ALTER_SYNC_STATE_SET_FAILED = 2013
    CONTROLLER_BROKER_ID_INVALID = 2014


def _int_set(value) -> frozenset[int]:
    return frozenset(int(v) for v in value)


def _optional_int_set(value) -> Optional[frozenset[int]]:
    return None if value is None else _int_set(value)


def _optional_int(value) -> Optional[int]:
    return None if value is None else int(value)


@attrs.frozen(slots=True)
class BrokerIdentity:
    """Key of liveness information (``BrokerIdentityInfo``)."""

    cluster_name: str
    broker_name: str
    broker_id: int


# --------------------------------------------------------------------------- metadata


@attrs.frozen(slots=True)
class BrokerRegistration:
    """One entry of ``BrokerReplicaInfo.brokerIdInfo``: id -> (address, registerCheckCode)."""

    address: Optional[str]
    register_check_code: Optional[str]


@attrs.frozen(slots=True)
class BrokerReplicaInfo:
    """The registered replicas of one broker set.

    ``next_assign_broker_id`` is a counter that grows by one per added broker; it is
    not ``max(id) + 1`` (an id applied out of order does not move it past that id).
    """

    next_assign_broker_id: int = FIRST_BROKER_CONTROLLER_ID
    brokers: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    def is_broker_exist(self, broker_id: Optional[int]) -> bool:
        return broker_id in self.brokers

    def broker_address(self, broker_id: Optional[int]) -> Optional[str]:
        registration = self.brokers.get(broker_id) if broker_id is not None else None
        return registration.address if registration is not None else None

    def register_check_code(self, broker_id: int) -> Optional[str]:
        registration = self.brokers.get(broker_id)
        return registration.register_check_code if registration is not None else None

    def broker_id_by_address(self, address: str) -> Optional[int]:
        for broker_id in sorted(self.brokers):
            if self.brokers[broker_id].address == address:
                return broker_id
        return None

    def all_brokers(self) -> frozenset[int]:
        return frozenset(self.brokers)

    def broker_id_table(self) -> FrozenMap:
        """id -> address, as in ``BrokerReplicaInfo.getBrokerIdTable`` (the member group)."""
        return FrozenMap((i, r.address) for i, r in self.brokers.items())


@attrs.frozen(slots=True)
class SyncStateInfo:
    """Master and SyncStateSet of one broker set, with their epochs."""

    master_broker_id: Optional[int] = None
    master_epoch: int = 0
    sync_state_set: frozenset[int] = attrs.field(default=frozenset(), converter=_int_set)
    sync_state_set_epoch: int = 0

    @property
    def is_first_time_for_elect(self) -> bool:
        return self.master_epoch == 0

    @property
    def is_master_exist(self) -> bool:
        return self.master_broker_id is not None


@attrs.frozen(slots=True)
class BrokerSetMetadata:
    """Everything the controller knows about one broker set.

    Upstream keeps the two halves in two tables (``replicaInfoTable`` and
    ``syncStateSetInfoTable``) and calls a set *known* only when both exist; an admin
    CleanBrokerData can remove one half and leave the other. Either half may
    therefore be absent here.
    """

    cluster_name: str
    replicas: Optional[BrokerReplicaInfo] = None
    sync_state: Optional[SyncStateInfo] = None

    @property
    def is_known(self) -> bool:
        """``ReplicasInfoManager.isContainsBroker``: both halves exist."""
        return self.replicas is not None and self.sync_state is not None


@attrs.frozen(slots=True)
class ControllerMetadata:
    """The replicated controller state: brokerName -> BrokerSetMetadata."""

    sets: FrozenMap = attrs.field(factory=FrozenMap, converter=frozen_map)

    def get(self, broker_name: str) -> Optional[BrokerSetMetadata]:
        return self.sets.get(broker_name)

    def known(self, broker_name: str) -> Optional[BrokerSetMetadata]:
        """The set if both halves exist (``isContainsBroker``), else None."""
        found = self.sets.get(broker_name)
        return found if found is not None and found.is_known else None

    def with_set(self, broker_name: str, value: Optional[BrokerSetMetadata]) -> "ControllerMetadata":
        if value is None or (value.replicas is None and value.sync_state is None):
            return ControllerMetadata(self.sets.remove(broker_name))
        return ControllerMetadata(self.sets.set(broker_name, value))


EMPTY_METADATA = ControllerMetadata()


@attrs.frozen(slots=True)
class ControllerConfig:
    """The ``ControllerConfig`` options the semantics depend on (upstream defaults)."""

    enable_elect_unclean_master: bool = False
    elect_master_max_retry_count: int = 3
    scan_not_active_broker_interval_ms: int = 5_000
    scan_inactive_master_interval_ms: int = 5_000
    notify_broker_role_changed: bool = True


DEFAULT_CONFIG = ControllerConfig()


@attrs.frozen(slots=True)
class SyncStateSet:
    """The ``SyncStateSet`` body carried by several replies."""

    sync_state_set: frozenset[int] = attrs.field(converter=_int_set)
    sync_state_set_epoch: int


# --------------------------------------------------------------------------- requests


@attrs.frozen(slots=True)
class GetNextBrokerIdRequest:
    cluster_name: str
    broker_name: str


@attrs.frozen(slots=True)
class ApplyBrokerIdRequest:
    cluster_name: str
    broker_name: str
    applied_broker_id: int
    # "addr;millis": the broker's address and the time it created its temp metadata file.
    register_check_code: str

    @property
    def broker_address(self) -> str:
        return self.register_check_code.split(";")[0]


@attrs.frozen(slots=True)
class RegisterBrokerRequest:
    """``RegisterBrokerToControllerRequestHeader``; ``broker_id`` is None under rocketmq-5.0."""

    cluster_name: str
    broker_name: str
    broker_address: str
    broker_id: Optional[int] = attrs.field(default=None, converter=_optional_int)


@attrs.frozen(slots=True)
class GetReplicaInfoRequest:
    broker_name: str


@attrs.frozen(slots=True)
class AlterSyncStateSetRequest:
    broker_name: str
    master_broker_id: Optional[int]
    master_epoch: int
    new_sync_state_set: frozenset[int] = attrs.field(converter=_int_set)
    sync_state_set_epoch: int


class ElectTrigger(enum.Enum):
    BROKER = "broker"
    CONTROLLER = "controller"
    ADMIN = "admin"


@attrs.frozen(slots=True)
class ElectMasterRequest:
    """``ElectMasterRequestHeader``: brokerId -1 and no designation is the controller trigger."""

    cluster_name: str
    broker_name: str
    broker_id: Optional[int] = CONTROLLER_TRIGGER_BROKER_ID
    designate_elect: bool = False

    @classmethod
    def of_broker_trigger(cls, cluster_name: str, broker_name: str, broker_id: int) -> "ElectMasterRequest":
        return cls(cluster_name, broker_name, broker_id, False)

    @classmethod
    def of_controller_trigger(cls, broker_name: str, cluster_name: str = "") -> "ElectMasterRequest":
        return cls(cluster_name, broker_name, CONTROLLER_TRIGGER_BROKER_ID, False)

    @classmethod
    def of_admin_trigger(cls, cluster_name: str, broker_name: str, broker_id: int) -> "ElectMasterRequest":
        return cls(cluster_name, broker_name, broker_id, True)

    @property
    def names_a_broker(self) -> bool:
        return self.broker_id is not None and self.broker_id != CONTROLLER_TRIGGER_BROKER_ID

    @property
    def trigger(self) -> ElectTrigger:
        if not self.names_a_broker:
            return ElectTrigger.CONTROLLER
        return ElectTrigger.ADMIN if self.designate_elect else ElectTrigger.BROKER


@attrs.frozen(slots=True)
class CleanBrokerDataRequest:
    """``CleanControllerBrokerDataRequestHeader`` with ``brokerControllerIdsToClean`` parsed."""

    cluster_name: str
    broker_name: str
    broker_ids_to_clean: Optional[frozenset[int]] = attrs.field(default=None, converter=_optional_int_set)
    clean_living_broker: bool = False


# --------------------------------------------------------------------------- responses
# Every response starts with ``code``; fields a reply does not carry are None.


@attrs.frozen(slots=True)
class GetNextBrokerIdResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)
    next_broker_id: Optional[int] = None


@attrs.frozen(slots=True)
class ApplyBrokerIdResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)


@attrs.frozen(slots=True)
class RegisterBrokerResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)
    # Only under rocketmq-5.0, where the controller assigns the id while registering.
    broker_id: Optional[int] = None
    master_broker_id: Optional[int] = None
    master_address: Optional[str] = None
    master_epoch: Optional[int] = None
    sync_state_set_epoch: Optional[int] = None
    sync_state_set: Optional[SyncStateSet] = None


@attrs.frozen(slots=True)
class GetReplicaInfoResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)
    master_broker_id: Optional[int] = None
    master_address: Optional[str] = None
    master_epoch: Optional[int] = None
    sync_state_set: Optional[SyncStateSet] = None


@attrs.frozen(slots=True)
class AlterSyncStateSetResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)
    # 0 on failure: the header field is a primitive int upstream.
    new_sync_state_set_epoch: int = 0
    sync_state_set: Optional[SyncStateSet] = None


@attrs.frozen(slots=True)
class ElectMasterResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)
    master_broker_id: Optional[int] = None
    master_address: Optional[str] = None
    master_epoch: Optional[int] = None
    sync_state_set_epoch: Optional[int] = None
    sync_state_set: Optional[frozenset[int]] = attrs.field(default=None, converter=_optional_int_set)
    # id -> address of every registered replica; the controller notifies the live ones.
    broker_member_group: Optional[FrozenMap] = attrs.field(
        default=None, converter=lambda v: None if v is None else frozen_map(v)
    )


@attrs.frozen(slots=True)
class CleanBrokerDataResponse:
    code: ResponseCode = attrs.field(converter=ResponseCode)


RESPONSE_TYPE_OF = {
    GetNextBrokerIdRequest: GetNextBrokerIdResponse,
    ApplyBrokerIdRequest: ApplyBrokerIdResponse,
    RegisterBrokerRequest: RegisterBrokerResponse,
    GetReplicaInfoRequest: GetReplicaInfoResponse,
    AlterSyncStateSetRequest: AlterSyncStateSetResponse,
    ElectMasterRequest: ElectMasterResponse,
    CleanBrokerDataRequest: CleanBrokerDataResponse,
}
