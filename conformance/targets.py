"""The one registry through which every scenario resolves what it runs.

A scenario runs nodes in *roles* (``dledger``; ``raft``; ``broker`` in the truncation
scenario; ``controller`` and ``broker`` in the controller scenario), each role a node
kind of the adapter protocol. ``--adapter SPEC`` names the implementation for every
role; ``--adapter ROLE=SPEC`` names it for one role (the roles not named run
``reference``, or the one plain ``--adapter`` given beside them). Its one-line form,
kept in campaign records and scripts, is ``broker=SPEC + controller=SPEC``.

For each role, ``reference`` and ``mutant:NAME`` are rmqha's reference node in process
(optionally with a known bug); every other form (``python:``, ``stdio:``, ``jvm:``, ...)
is an implementation under test reached through ``adapters.resolve`` and driven node by
node through the protocol. An implementation that does not run the role's node kind
is :class:`NotApplicable` to the scenario, with the reason: never an error, and never
a silent run of the reference in its place. See docs/adapters.md.
"""
from __future__ import annotations

import functools
import random
import re
import shlex
from typing import Any, Callable, Iterable, Mapping

import attrs

from adapters import resolve, runs_in_process
from adapters.errors import NotApplicable
from adapters.remote_node import RemoteNode
from conformance.errors import UserError
from reference import node_kinds
from reference.dledger_node import DLedgerNode
from reference.mutants import MUTANTS
from reference.procedures import REFERENCE_PROCEDURES
from spec.controller.profiles import PROFILES as CONTROLLER_PROFILES
from spec.dledger.profiles import DEFAULT_PROFILE, PROFILES, Profile, Timing

RMQHA_IMPLEMENTATION = "rmqha-reference"

# scenario -> role -> the node kind that role runs (what an adapter declares in hello.nodes)
SCENARIO_ROLES: dict[str, dict[str, str]] = {
    "dledger": {"dledger": "dledger"},
    "raft": {"raft": "raft"},
    "truncation": {"broker": "replica"},
    "controller": {"controller": "controller", "broker": "broker"},
    "classic": {"broker": "classic"},
}
ROLES = ("broker", "controller", "dledger", "raft")
_ROLE_PREFIX = re.compile(r"^(%s)=" % "|".join(ROLES))
ROLE_SEPARATOR = " + "


@functools.cache  # the installed metadata does not change while running (a lookup costs ~20 ms)
def rmqha_version() -> str:
    try:
        from importlib.metadata import version

        return version("rmqha")
    except Exception:
        return "0+source"


def is_reference(spec: str) -> bool:
    """``reference`` or ``mutant:NAME``: rmqha's own nodes, in process."""
    return spec == "reference" or spec.startswith("mutant:")


# ---------------------------------------------------------------------- adapter specs with roles


def split_roles(adapter: str) -> dict[str, str] | None:
    """``{role: spec}`` for a role-qualified adapter (``broker=A + controller=B``), else None."""
    if not _ROLE_PREFIX.match(adapter):
        return None
    parts: list[str] = []
    for piece in adapter.split(ROLE_SEPARATOR):
        if parts and not _ROLE_PREFIX.match(piece):
            parts[-1] += ROLE_SEPARATOR + piece  # the separator was inside a command
        else:
            parts.append(piece)
    roles: dict[str, str] = {}
    for part in parts:
        role, _, spec = part.partition("=")
        if role in roles:
            raise UserError(f"adapter {adapter!r}: role {role!r} is given twice")
        if not spec.strip():
            raise UserError(f"adapter {adapter!r}: role {role!r} has no adapter (use {role}=SPEC)")
        roles[role] = spec
    return roles


def drives_another_process(adapter: str) -> bool:
    """Whether running ``adapter`` (any role of it) talks to a process or thread of an
    implementation's own, beside which rmqha runs on one CPU (``adapters.placement``)."""
    return not all(runs_in_process(spec) for spec in (split_roles(adapter) or {"": adapter}).values())


def join_roles(roles: Mapping[str, str]) -> str:
    """The one-line form of a role-qualified adapter (sorted by role; the inverse of split_roles)."""
    return ROLE_SEPARATOR.join(f"{role}={roles[role]}" for role in sorted(roles))


def combine_adapter_args(values: Iterable[str], scenario: str) -> list[str]:
    """The adapters of a command line, each in its canonical form for ``scenario``.

    Role-qualified values (``--adapter broker=SPEC``) form one adapter, and the plain one
    beside them (at most one) fills the other roles; without role-qualified values every
    plain value is an adapter of its own (one campaign, one report)."""
    values = list(values)
    qualified: dict[str, str] = {}
    plain = []
    for value in values:
        roles = split_roles(value)
        if roles is None:
            plain.append(value)
            continue
        for role, spec in roles.items():
            if role in qualified and qualified[role] != spec:
                raise UserError(f"--adapter: role {role!r} is given twice ({qualified[role]!r} and {spec!r})")
            qualified[role] = spec
    if not qualified:
        return [scenario_adapter(scenario, a) for a in plain]
    if len(plain) > 1:
        raise UserError("--adapter: beside ROLE=SPEC adapters give at most one plain SPEC "
                        f"(it runs the other roles), not {len(plain)}")
    own = SCENARIO_ROLES.get(scenario, {})
    if plain:
        qualified = {**{role: plain[0] for role in own}, **qualified}
    return [scenario_adapter(scenario, join_roles(qualified))]


def role_specs(scenario: str, adapter: str) -> dict[str, str]:
    """The adapter spec of each role of ``scenario`` (roles not named run ``reference``)."""
    roles = SCENARIO_ROLES.get(scenario)
    if roles is None:
        raise UserError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIO_ROLES)})")
    qualified = split_roles(adapter)
    if qualified is None:
        return {role: adapter for role in roles}
    foreign = sorted(set(qualified) - set(roles))
    if foreign:
        raise UserError(f"adapter {adapter!r}: scenario {scenario} has no role {', '.join(map(repr, foreign))} "
                        f"(its roles: {', '.join(roles)})")
    return {role: qualified.get(role, "reference") for role in roles}


def scenario_adapter(scenario: str, adapter: str) -> str:
    """The canonical spec of ``adapter`` for ``scenario``: plain when one spec fills every role."""
    specs = role_specs(scenario, adapter)
    distinct = set(specs.values())
    return distinct.pop() if len(distinct) == 1 else join_roles(specs)


# ---------------------------------------------------------------------- targets


@attrs.frozen(slots=True)
class Target:
    """What one role of a scenario runs: ``make_node(node_id, peers, draw, durable, now, config)``."""

    role: str
    kind: str
    adapter: str
    implementation: str
    version: str
    make_node: Callable[..., Any]
    foreign: bool  # nodes of an implementation under test, driven through the protocol
    info: Any = None  # adapters.transports.AdapterInfo of a foreign implementation


@attrs.frozen(slots=True)
class ScenarioTargets:
    """Every role of one scenario resolved: the registry's answer."""

    scenario: str
    adapter: str  # canonical spec (scenario_adapter)
    roles: Mapping[str, Target]

    def __getitem__(self, role: str) -> Target:
        return self.roles[role]

    @property
    def implementation(self) -> str:
        return self._joined("implementation")

    @property
    def version(self) -> str:
        return self._joined("version")

    def _joined(self, field: str) -> str:
        values = {getattr(t, field) for t in self.roles.values()}
        if len(values) == 1:
            return values.pop()
        return ROLE_SEPARATOR.join(f"{r}={getattr(t, field)}" for r, t in sorted(self.roles.items()))


def _seeded(draw: Callable[[int], int]) -> Callable[[int], int]:
    """The randomness a node derives from a seed drawn for it: the same in process and over
    the protocol (``node.create``'s ``seed``), so one seed gives one trace either way."""
    rng = random.Random(draw(2**31))
    return lambda bound: rng.randrange(bound) if bound > 0 else 0


def _mutant_name(spec: str, known: Mapping, family: str) -> str | None:
    if spec == "reference":
        return None
    name = spec.split(":", 1)[1]
    if name not in known:
        raise UserError(f"unknown {family} mutant {name!r} (known: {', '.join(sorted(known))})")
    return name


def _reference_target(role: str, kind: str, spec: str, profile: str | None) -> Target:
    mutant = _mutant_name(spec, node_kinds.MUTANTS_OF_KIND[kind], node_kinds.FAMILY_OF_KIND[kind])
    implementation = RMQHA_IMPLEMENTATION + (f"+{mutant}" if mutant else "")
    make = node_kinds.FACTORIES[kind]

    def make_node(node_id, peers, draw, durable, now, config=None):
        return make(node_id, tuple(peers), _seeded(draw), durable, now, config, mutant)

    return Target(role, kind, spec, implementation, rmqha_version(), make_node, foreign=False)


def _remote_nodes(adapter: str, kind: str, scenario: str = "", role: str = ""):
    """The connected adapter for ``adapter`` and a factory of its ``kind`` nodes."""
    connected = resolve(adapter)
    if kind not in connected.info.nodes:
        offered = ", ".join(sorted(connected.info.nodes))
        # a role of the scenario it can play: say how to give it that role alone
        fits = [r for r, k in SCENARIO_ROLES.get(scenario, {}).items() if r != role and k in connected.info.nodes]
        hint = "".join(f"; to run it as the {r}s only, the other roles on rmqha's reference: "
                       f"--adapter {shlex.quote(f'{r}={adapter}')}" for r in fits)
        raise NotApplicable(f"{connected.info.implementation} ({adapter}) runs no {kind} nodes, which scenario "
                            f"{scenario} needs for its {role}s (it offers: {offered or 'none'}){hint}")
    counter = [0]

    def make_node(node_id, peers, draw, durable, now, config=None):
        counter[0] += 1
        return RemoteNode(connected, kind, node_id, peers, draw(2**31), durable, now, f"{node_id}#{counter[0]}",
                          config)

    return connected, make_node


def _foreign_target(role: str, kind: str, spec: str, scenario: str) -> Target:
    connected, make_node = _remote_nodes(spec, kind, scenario, role)
    info = connected.info
    return Target(role, kind, spec, info.implementation, info.version, make_node, foreign=True, info=info)


def resolve_targets(scenario: str, adapter: str, profile: str | None = None) -> ScenarioTargets:
    """Resolve every role of ``scenario`` (one whose nodes are ``replica``, ``broker`` or
    ``controller``); NotApplicable if an implementation lacks a node kind."""
    specs = role_specs(scenario, adapter)
    if scenario == "controller" and is_reference(specs["broker"]):
        _check_reference_brokers_register(profile)
    roles = {}
    for role, kind in SCENARIO_ROLES[scenario].items():
        spec = specs[role]
        roles[role] = (_reference_target(role, kind, spec, profile) if is_reference(spec)
                       else _foreign_target(role, kind, spec, scenario))
    return ScenarioTargets(scenario, scenario_adapter(scenario, adapter), roles)


def _check_reference_brokers_register(profile: str | None) -> None:
    """rmqha's reference broker registers as a 5.1 broker does (getNextBrokerId,
    applyBrokerId, registerBroker); a controller profile without those APIs (rocketmq-5.0
    assigns ids in registerBroker) cannot run it: every run would end in an error."""
    controller_profile = CONTROLLER_PROFILES.get(profile or "")
    if controller_profile is not None and not controller_profile.supports("get_next_broker_id"):
        raise NotApplicable(f"rmqha's reference broker registers as 5.1 brokers do (getNextBrokerId, applyBrokerId, "
                            f"registerBroker) and a {profile} controller serves none of the first two: run the "
                            f"controller scenario under {profile} with a {profile} broker (--adapter broker=SPEC)")


def check_applicable(scenario: str, adapter: str, profile: str | None = None) -> None:
    """Raise NotApplicable (with the reason) if ``adapter`` cannot run ``scenario``."""
    if scenario == "dledger":
        dledger_target(adapter, profile, None)
    elif scenario == "raft":
        raft_target(adapter)
    elif scenario in SCENARIO_ROLES:
        resolve_targets(scenario, adapter, profile)


# ---------------------------------------------------------------------- dledger and raft


@attrs.frozen(slots=True)
class DLedgerTarget:
    adapter: str
    implementation: str
    version: str
    profile: Profile  # the profile the implementation declares: its steps are judged against it
    # make_node(node_id, peers, draw, durable, now) -> Node
    make_node: Callable[..., Any]
    # whether its nodes hand their durable state over in every step that changes it
    # (in-process nodes), or say at a crash what survives (nodes behind the protocol)
    persists_each_step: bool = True


def dledger_profile(name: str | None) -> Profile:
    if name is None:
        return DEFAULT_PROFILE
    try:
        return PROFILES[name]
    except KeyError:
        raise UserError(f"unknown DLedger profile {name!r} (known: {', '.join(PROFILES)})") from None


def dledger_target(adapter: str, profile_name: str | None, timing: Timing | None = None) -> DLedgerTarget:
    """Nodes of ``adapter``; the reference's keep ``timing``, else their profile's (docs/dledger.md)."""
    adapter = role_specs("dledger", adapter)["dledger"]
    profile = node_profile = dledger_profile(profile_name)
    if adapter == "reference":
        procedures = REFERENCE_PROCEDURES
        implementation = RMQHA_IMPLEMENTATION
    elif adapter.startswith("mutant:"):
        name = _mutant_name(adapter, MUTANTS, "DLedger")
        # a mutant runs with its own (changed) profile; it is judged against the declared one
        node_profile, procedures = MUTANTS[name].apply(profile)
        implementation = f"{RMQHA_IMPLEMENTATION}+{name}"
    else:
        return _foreign_dledger_target(adapter, profile, timing)

    def make_node(node_id, peers, draw, durable, now):
        return DLedgerNode(node_id, peers, _seeded(draw), durable, now, node_profile, timing, procedures)

    return DLedgerTarget(adapter, implementation, rmqha_version(), profile, make_node)


def _foreign_dledger_target(adapter: str, profile: Profile, timing: Timing | None) -> DLedgerTarget:
    """Nodes of an implementation under test, driven through the adapter protocol."""
    connected, make_node = _remote_nodes(adapter, "dledger", "dledger", "dledger")
    declared = connected.info.profiles.get("dledger")
    if declared is not None and declared in PROFILES:
        profile = PROFILES[declared]
    return DLedgerTarget(adapter, connected.info.implementation, connected.info.version, profile, make_node,
                         persists_each_step=False)


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
    link_faults: bool = False  # its nodes hold connections of their own and take LinkFaults
    # the simulator carries its messages over connections (reference/simulator.py):
    # ``raft_nodes_talk_tcp``
    connections: bool = False


def raft_nodes_are_dledger(profiles: dict) -> bool:
    """Whether an implementation's hello says its ``raft`` nodes are DLedger nodes seen as
    Raft nodes (``"profiles": {"raft": "dledger-0.4"}``, as rmqha's reference declares)."""
    return profiles.get("raft") in PROFILES


def raft_nodes_talk_tcp(info) -> bool:
    """Whether an implementation's ``raft`` messages travel over TCP connections (a message
    reaches only the life it was sent to): as its hello's ``transport`` says, else when its
    raft nodes are DLedger nodes (``raft_nodes_are_dledger``), which talk over TCP; a
    generic Raft otherwise gets datagrams, which may reach a node's next life."""
    declared = info.transport.get("raft")
    return declared == "tcp" if declared is not None else raft_nodes_are_dledger(info.profiles)


def raft_target(adapter: str) -> RaftTarget:
    adapter = role_specs("raft", adapter)["raft"]
    connected, make_node = _remote_nodes(adapter, "raft", "raft", "raft")
    bound = connected.info.liveness_bound_ms.get("raft", DEFAULT_RAFT_LIVENESS_MS)
    return RaftTarget(adapter, connected.info.implementation, connected.info.version, bound, make_node,
                      link_faults="raft" in connected.info.link_faults,
                      connections=raft_nodes_talk_tcp(connected.info))
