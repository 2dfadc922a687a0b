"""Abstract protocol states of a controller-mode broker set (RIP-44): what the search's
coverage counts in the ``controller`` scenario (conformance/search.py).

An abstract state forgets broker names, ids, epochs and offsets, and keeps what the
controller's and the brokers' decisions depend on. Per broker (live or down):

| component | values |
|---|---|
| role | ``M`` master, ``S`` slave, ``N`` no role yet (restarted, unregistered), ``-`` down |
| fenced | ``w`` writable, ``f`` fenced (a master waiting for its role change to finish) |
| set | ``+`` in the active controller's SyncStateSet, ``.`` not in it, ``?`` no active controller |
| epoch | ``=`` the controller's master epoch, ``<`` behind it, ``>`` ahead of it (a stale controller), ``?`` none |
| log | relation to the reference log: ``same``, ``prefix``, ``longer``, ``fork`` (diverges) |

The reference log is the log of the broker the active controller names master, or, when
it names none that is live, the longest live log. A step's state adds what the broker or
controller handled, the set's size against the live brokers (``set=all``, ``set=some``,
``set=master``: only the master, ``set=none``), whether the recorded master is live
(``master=live``, ``down``, ``none``), the number of active controllers (0, 1, 2+) and the
network (``clean``, ``cut``, ``lossy``).
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import attrs

from spec.broker.records import BrokerRoleState, LogEntry, Role
from spec.controller.records import SyncStateInfo

ROLES = {Role.MASTER: "M", Role.SLAVE: "S", Role.NONE: "N"}
FENCING = ("w", "f")
SET_MEMBERSHIP = ("+", ".", "?")
EPOCH_RELATIONS = ("=", "<", ">", "?")
LOG_RELATIONS = ("same", "prefix", "longer", "fork")
DOWN = "-"


@attrs.frozen(slots=True)
class BrokerState:
    """What the abstraction reads of one live broker (a ``BrokerNodeView`` has both)."""

    role_state: BrokerRoleState
    log: Sequence[LogEntry]


def log_relation(log: Sequence[LogEntry], reference: Sequence[LogEntry]) -> str:
    """How ``log`` stands to ``reference``, entry by entry (message id and position)."""
    common = min(len(log), len(reference))
    if tuple(log[:common]) != tuple(reference[:common]):  # (equal entries agree: the usual case, in C)
        for a, b in zip(log, reference):
            if (a.msg_id, a.start, a.end) != (b.msg_id, b.start, b.end):
                return "fork"
    if len(log) == len(reference):
        return "same"
    return "prefix" if len(log) < len(reference) else "longer"


def _reference(brokers: Mapping[str, Optional[BrokerState]], sync: Optional[SyncStateInfo]) -> Optional[BrokerState]:
    live = [b for b in brokers.values() if b is not None]
    if sync is not None and sync.master_broker_id is not None:
        for b in live:
            if b.role_state.broker_id == sync.master_broker_id:
                return b
    if not live:
        return None
    return max(live, key=lambda b: (len(b.log), b.role_state.broker_id if b.role_state.broker_id is not None else -1))


def broker_state(b: BrokerState, sync: Optional[SyncStateInfo], reference: BrokerState) -> str:
    """One broker's abstract state, e.g. ``Sw+=/prefix``."""
    role = b.role_state
    fenced = "f" if role.fenced else "w"
    if sync is None:
        member, epoch = "?", "?"
    else:
        member = "+" if role.broker_id is not None and role.broker_id in sync.sync_state_set else "."
        epoch = "=" if role.master_epoch == sync.master_epoch else ("<" if role.master_epoch < sync.master_epoch else ">")
    return f"{ROLES[role.role]}{fenced}{member}{epoch}/{log_relation(b.log, reference.log)}"


def _set_shape(brokers: Mapping[str, Optional[BrokerState]], sync: Optional[SyncStateInfo]) -> str:
    if sync is None or not sync.sync_state_set:
        return "set=none"
    live_ids = {b.role_state.broker_id for b in brokers.values() if b is not None and b.role_state.broker_id is not None}
    if sync.sync_state_set == frozenset({sync.master_broker_id}):
        return "set=master"
    return "set=all" if live_ids <= sync.sync_state_set else "set=some"


def _master(brokers: Mapping[str, Optional[BrokerState]], sync: Optional[SyncStateInfo]) -> str:
    if sync is None or sync.master_broker_id is None:
        return "master=none"
    live = any(b is not None and b.role_state.broker_id == sync.master_broker_id for b in brokers.values())
    return "master=live" if live else "master=down"


@attrs.frozen(slots=True)
class SetState:
    """What a step's state takes from the brokers and the controller's SyncStateInfo alone:
    the same for every node's step until a broker or the set changes."""

    brokers: Mapping[str, Optional[str]]  # each broker's own state (None: down)
    shape: str  # the set's shape and the recorded master's liveness, e.g. ``set=all|master=live``


def set_state(brokers: Mapping[str, Optional[BrokerState]], sync: Optional[SyncStateInfo]) -> Optional[SetState]:
    """The brokers' part of every step's state (None: no live broker, nothing to relate to)."""
    reference = _reference(brokers, sync)
    if reference is None:
        return None
    own = {n: None if b is None else broker_state(b, sync, reference) for n, b in brokers.items()}
    return SetState(own, f"{_set_shape(brokers, sync)}|{_master(brokers, sync)}")


def state_of_step(shared: Optional[SetState], node_id: str, event: str, active_controllers: int,
                  network: str) -> Optional[str]:
    """``step_state`` from the brokers' part (``set_state``) of the broker set the step left."""
    if shared is None:
        return None
    if node_id in shared.brokers:
        own = shared.brokers[node_id]
        if own is None:
            return None
    else:
        own = "ctl"
    return f"{own}|{event}|{shared.shape}|active={min(2, active_controllers)}|{network}"


def step_state(node_id: str, event: str, brokers: Mapping[str, Optional[BrokerState]],
               sync: Optional[SyncStateInfo], active_controllers: int, network: str) -> Optional[str]:
    """The abstract state a step reached: the stepping broker's own state (or ``ctl`` for a
    controller), what it handled, the set's shape, the recorded master's liveness, the
    active controllers and the network, e.g. ``Sw.</prefix|AlterSyncStateSet|set=master|
    master=live|active=1|clean``."""
    return state_of_step(set_state(brokers, sync), node_id, event, active_controllers, network)


def every_broker_state() -> tuple[str, ...]:
    """Every broker state ``broker_state`` can produce (the universe the report checks reached)."""
    out = []
    for r in ROLES.values():
        for f in FENCING:
            for m in SET_MEMBERSHIP:
                for e in EPOCH_RELATIONS:
                    if (m == "?") != (e == "?"):
                        continue  # both come from the active controller, or neither
                    out.extend(f"{r}{f}{m}{e}/{log}" for log in LOG_RELATIONS)
    return tuple(out)
