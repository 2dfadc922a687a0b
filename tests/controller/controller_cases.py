"""Builders shared by the controller tests: small broker sets and liveness."""
from __future__ import annotations

from typing import Iterable, Optional

from spec.controller.heartbeat import StaticLiveness
from spec.controller.records import (
    BrokerRegistration,
    BrokerReplicaInfo,
    BrokerSetMetadata,
    ControllerMetadata,
    SyncStateInfo,
)
from spec.controller.rules import ControllerRules

CLUSTER = "c1"
NAME = "broker-a"

R51 = ControllerRules()
R50 = ControllerRules.for_profile("rocketmq-5.0")


def addr(broker_id: int) -> str:
    return f"10.0.0.{broker_id}:30911"


def code(broker_id: int, millis: int = 1) -> str:
    return f"{addr(broker_id)};{millis}"


def make_set(
    ids: Iterable[int] = (1, 2, 3),
    master: Optional[int] = 1,
    master_epoch: int = 1,
    members: Optional[Iterable[int]] = None,
    ss_epoch: int = 1,
    next_id: Optional[int] = None,
) -> BrokerSetMetadata:
    ids = tuple(ids)
    brokers = {i: BrokerRegistration(addr(i), code(i)) for i in ids}
    members = frozenset({master} if members is None and master is not None else members or ())
    return BrokerSetMetadata(
        cluster_name=CLUSTER,
        replicas=BrokerReplicaInfo(next_assign_broker_id=next_id or len(ids) + 1, brokers=brokers),
        sync_state=SyncStateInfo(master, master_epoch, members, ss_epoch),
    )


def metadata(**kwargs) -> ControllerMetadata:
    return ControllerMetadata({NAME: make_set(**kwargs)})


def alive(*ids: int, infos=None) -> StaticLiveness:
    """``infos``: id -> (epoch, maxOffset[, electionPriority])."""
    return StaticLiveness.of(NAME, ids, infos)


def state_of(m: ControllerMetadata) -> SyncStateInfo:
    return m.known(NAME).sync_state
