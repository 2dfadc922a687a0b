"""A controller node of the adapter protocol (node kind ``controller``,
docs/adapter-protocol.md): what it is told when created, the messages it exchanges with
brokers (and an administrator), and what the monitor observes of it.

Between controllers an implementation speaks its own protocol (rmqha's reference: a
DLedger group): rmqha routes those messages and reads only the ones it knows.
"""
from __future__ import annotations

from typing import Any, Optional

import attrs

from spec.controller.heartbeat import HeartbeatLiveness
from spec.controller.records import DEFAULT_CONFIG, ControllerConfig, ControllerMetadata


@attrs.frozen(slots=True)
class ControllerNodeConfig:
    """The profile a controller node is judged under and its ``ControllerConfig``."""

    profile: str = "rocketmq-5.1"
    config: ControllerConfig = DEFAULT_CONFIG


@attrs.frozen(slots=True)
class ControllerCall:
    """A broker's (or admin's) request to one controller node; ``call_id`` pairs the reply."""

    call_id: int
    request: Any  # a spec.controller.records request


@attrs.frozen(slots=True)
class ControllerAnswer:
    call_id: int
    response: Any  # the matching spec.controller.records response


@attrs.frozen(slots=True)
class NotifyBrokerRoleChanged:
    """``NOTIFY_BROKER_ROLE_CHANGED``: the active controller tells a set's live members."""

    broker_name: str
    master_broker_id: int
    master_address: Optional[str]
    master_epoch: int
    sync_state_set_epoch: int
    sync_state_set: frozenset[int]


@attrs.frozen(slots=True)
class ControllerDecision:
    """One request a controller decided: answered, or (with events) committed and applied.

    ``before`` is the metadata it decided on, ``after`` the metadata once its events were
    applied (the same when there were none), ``liveness`` the heartbeat table it judged
    brokers by and the time (None for a CONTROLLER_NOT_LEADER answer). ``trigger``: ``call``
    (a broker's or admin's request), ``expiry_scan`` or ``reelect_scan`` (its own elections).
    """

    api: str  # spec.controller.rules.API_OF_REQUEST name: register_broker, elect_master, ...
    trigger: str
    request: Any
    response: Any
    events: tuple[Any, ...]
    before: ControllerMetadata
    after: ControllerMetadata
    liveness: Optional[HeartbeatLiveness]


@attrs.frozen(slots=True)
class ControllerNodeView:
    """What the monitor reads of a controller node after every step."""

    node_id: str
    active: bool  # it serves requests (leader state entered), others answer CONTROLLER_NOT_LEADER
    term: int  # its leadership generation: an active period is one node incarnation in one term
    applied: int  # replicated entries applied to ``metadata``
    metadata: ControllerMetadata
    decisions: tuple[ControllerDecision, ...]  # decided since its previous observation, each reported once
