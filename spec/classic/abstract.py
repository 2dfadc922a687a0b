"""Abstract protocol states of a classic master/slave group (seed 001): what the search's
coverage counts in the ``classic`` scenario (conformance/search.py).

An abstract state forgets broker names, offsets and bytes, and keeps what HAService,
HAConnection, HAClient and the commitlog's wait for slaves decide on. Per live broker:

| component | values |
|---|---|
| role | ``s`` SYNC_MASTER, ``a`` ASYNC_MASTER, ``S`` slave |
| flush | ``d`` everything written is flushed, ``u`` a tail is not (a crash loses it) |
| link | a master: ``none`` (no slave connection), ``lag`` (a connection has not acked its end), ``acked``; a slave: ``-`` (no connection), ``h`` (connecting), ``=`` (connected, its last report is its end), ``<`` (connected, it holds more than it reported) |
| log | relation to the reference log: ``same``, ``prefix``, ``longer``, ``fork`` (other bytes at the same offsets), ``gap`` (it ends before the reference's first offset: the cleaner deleted what it needs next) |

The reference log is the configured master's (the operator's last failover) when it is
live and acts as master, else the longest log of a live master, else the longest live
log. A step's state adds what the broker handled, how many live brokers act as masters
(0, 1, 2+: an old master restarted beside a promoted one) and the network (``clean``,
``cut``, ``lossy``), e.g. ``Sd/</prefix|HAStream|masters=1|lossy``.
"""
from __future__ import annotations

from typing import Mapping, Optional

from spec.classic.records import BrokerRole
from spec.classic.wire import ClassicView

ROLES = {BrokerRole.SYNC_MASTER: "s", BrokerRole.ASYNC_MASTER: "a", BrokerRole.SLAVE: "S"}
FLUSH = ("d", "u")
MASTER_LINKS = ("none", "lag", "acked")
SLAVE_LINKS = ("-", "h", "=", "<")
LOG_RELATIONS = ("same", "prefix", "longer", "fork", "gap")


def log_relation(log: ClassicView, reference: ClassicView) -> str:
    """How ``log``'s commitlog stands to ``reference``'s, byte by byte where both hold bytes."""
    if log.max_offset < reference.min_offset:
        return "gap"
    lo, hi = max(log.min_offset, reference.min_offset), min(log.max_offset, reference.max_offset)
    if lo < hi and log.data[lo - log.min_offset:hi - log.min_offset] != \
            reference.data[lo - reference.min_offset:hi - reference.min_offset]:
        return "fork"
    if log.max_offset == reference.max_offset:
        return "same"
    return "prefix" if log.max_offset < reference.max_offset else "longer"


def link(view: ClassicView) -> str:
    """A master's slave connections, or a slave's connection to its master."""
    if view.role.is_master:
        if not view.connections:
            return "none"
        return "acked" if all(c.slave_ack_offset >= view.max_offset for c in view.connections) else "lag"
    client = view.client
    if client is None:
        return "-"
    if not client.connected:
        return "h"
    return "=" if client.current_reported_offset >= view.max_offset else "<"


def broker_state(view: ClassicView, reference: ClassicView) -> str:
    """One live broker's abstract state, e.g. ``sd/lag/same`` or ``Su/</prefix``."""
    flush = "d" if view.flushed >= view.max_offset else "u"
    return f"{ROLES[view.role]}{flush}/{link(view)}/{log_relation(view, reference)}"


def reference_of(views: Mapping[str, Optional[ClassicView]], configured_master: str) -> Optional[ClassicView]:
    """The log the others are related to (see the module's docstring); None: none is live."""
    own = views.get(configured_master)
    if own is not None and own.role.is_master:
        return own
    live = [v for v in views.values() if v is not None]
    if not live:
        return None
    masters = [v for v in live if v.role.is_master]
    return max(masters or live, key=lambda v: (v.max_offset, v.node_id))


def group_state(views: Mapping[str, Optional[ClassicView]], configured_master: str) -> Mapping[str, Optional[str]]:
    """Every broker's own state (None: down), the part of a step's state that only the
    brokers' views decide: the same for every step until a view changes."""
    reference = reference_of(views, configured_master)
    if reference is None:
        return {n: None for n in views}
    return {n: None if v is None else broker_state(v, reference) for n, v in views.items()}


def state_of_step(own: Optional[str], event: str, masters: int, network: str) -> Optional[str]:
    """The abstract state a broker's step reached (None: the broker is down)."""
    if own is None:
        return None
    return f"{own}|{event}|masters={min(2, masters)}|{network}"


def every_broker_state() -> tuple[str, ...]:
    """Every broker state ``broker_state`` can produce (the universe the report checks reached)."""
    out = []
    for role in ROLES.values():
        links = SLAVE_LINKS if role == "S" else MASTER_LINKS
        out.extend(f"{role}{f}/{k}/{log}" for f in FLUSH for k in links for log in LOG_RELATIONS)
    return tuple(out)
