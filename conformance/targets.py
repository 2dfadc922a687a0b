"""Resolve an ``--adapter`` spec to something the scenarios can build nodes from.

``reference`` and ``mutant:NAME`` are the in-process reference node (optionally with
a known bug); every other form (``python:``, ``stdio:``, ``jvm:``) is resolved by
``adapters.resolve``. See docs/adapters.md.
"""
from __future__ import annotations

from typing import Any, Callable

import attrs

from conformance.errors import UserError
from reference.dledger_node import DLedgerNode
from reference.mutants import MUTANTS
from reference.procedures import REFERENCE_PROCEDURES
from spec.dledger.profiles import DEFAULT_PROFILE, PROFILES, Profile, Timing

RMQHA_IMPLEMENTATION = "rmqha-reference"


def rmqha_version() -> str:
    try:
        from importlib.metadata import version

        return version("rmqha")
    except Exception:
        return "0+source"


@attrs.frozen(slots=True)
class DLedgerTarget:
    adapter: str
    implementation: str
    version: str
    profile: Profile
    # make_node(node_id, peers, draw, durable, now) -> Node
    make_node: Callable[..., Any]


def dledger_profile(name: str | None) -> Profile:
    if name is None:
        return DEFAULT_PROFILE
    try:
        return PROFILES[name]
    except KeyError:
        raise UserError(f"unknown DLedger profile {name!r} (known: {', '.join(PROFILES)})") from None


def dledger_target(adapter: str, profile_name: str | None, timing: Timing) -> DLedgerTarget:
    profile = dledger_profile(profile_name)
    if adapter == "reference":
        procedures = REFERENCE_PROCEDURES
        implementation = RMQHA_IMPLEMENTATION
    elif adapter.startswith("mutant:"):
        name = adapter.split(":", 1)[1]
        if name not in MUTANTS:
            raise UserError(f"unknown mutant {name!r} (known: {', '.join(sorted(MUTANTS))})")
        profile, procedures = MUTANTS[name].apply(profile)
        implementation = f"{RMQHA_IMPLEMENTATION}+{name}"
    else:
        return _foreign_dledger_target(adapter, profile, timing)

    def make_node(node_id, peers, draw, durable, now):
        return DLedgerNode(node_id, peers, draw, durable, now, profile, timing, procedures)

    return DLedgerTarget(adapter, implementation, rmqha_version(), profile, make_node)


def _remote_nodes(adapter: str, kind: str):
    """The connected adapter for ``adapter`` and a factory of its ``kind`` nodes."""
    from adapters import resolve
    from adapters.remote_node import RemoteNode

    connected = resolve(adapter)
    if kind not in connected.info.nodes:
        raise UserError(f"adapter {adapter!r} does not implement {kind} nodes "
                        f"(it offers: {', '.join(sorted(connected.info.nodes)) or 'none'})")
    counter = [0]

    def make_node(node_id, peers, draw, durable, now):
        counter[0] += 1
        return RemoteNode(connected, kind, node_id, peers, draw(2**31), durable, now, f"{node_id}#{counter[0]}")

    return connected, make_node


def _foreign_dledger_target(adapter: str, profile: Profile, timing: Timing) -> DLedgerTarget:
    """Nodes of an implementation under test, driven through the adapter protocol."""
    connected, make_node = _remote_nodes(adapter, "dledger")
    declared = connected.info.profiles.get("dledger")
    if declared is not None and declared in PROFILES:
        profile = PROFILES[declared]
    return DLedgerTarget(adapter, connected.info.implementation, connected.info.version, profile, make_node)


DEFAULT_RAFT_LIVENESS_MS = 30_000


@attrs.frozen(slots=True)
class RaftTarget:
    """Generic Raft nodes of an implementation (``raft`` node kind), always through the protocol."""

    adapter: str
    implementation: str
    version: str
    liveness_bound_ms: int  # what the implementation declared, else DEFAULT_RAFT_LIVENESS_MS
    make_node: Callable[..., Any]
    profile: Any = None  # a generic Raft has no spec profile


def raft_target(adapter: str) -> RaftTarget:
    connected, make_node = _remote_nodes(adapter, "raft")
    bound = connected.info.liveness_bound_ms.get("raft", DEFAULT_RAFT_LIVENESS_MS)
    return RaftTarget(adapter, connected.info.implementation, connected.info.version, bound, make_node)
