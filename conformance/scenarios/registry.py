"""Every scenario a campaign can run, one ``Scenario`` record each.

A record says what a campaign needs to know about a scenario family: its default
profile, the properties it judges, the spec outcomes it can exercise (for coverage),
how to generate a run's script from a seed and build the cluster that executes it,
its known-bad variants (each runnable as adapter ``mutant:NAME``, see ``rmqha
mutants``) and the group sizes its generator accepts. A new scenario is one module
under ``conformance/scenarios/`` and one record here.
"""
from __future__ import annotations

import random
from typing import Callable

import attrs

from conformance.errors import UserError
from conformance.faults import MESSAGE_FAULT_MIXES
from conformance.scenarios.classic import build_classic, classic_outcomes, generate_classic_script, mutate_classic_script
from conformance.scenarios.controller import (
    build_controller,
    controller_outcomes,
    generate_controller_script,
    mutate_controller_script,
)
from conformance.scenarios.dledger import build_dledger, dledger_outcomes, generate_dledger_script, mutate_dledger_script
from conformance.scenarios.raft import build_raft, generate_raft_script
from conformance.scenarios.truncation import (
    build_truncation,
    generate_truncation_script,
    mutate_truncation_script,
    truncation_outcomes,
)
from conformance.script import Script
from conformance.search import ENERGY, RARE_TARGETS, SearchPolicy
from reference import mutants as dledger_mutants
from reference import mutants_classic as classic_mutants
from reference import mutants_controller as controller_mutants
from results.runresult import RunConfig
from spec.classic.profiles import PROFILES as CLASSIC_PROFILES
from spec.controller.profiles import PROFILES as CONTROLLER_PROFILES
from spec.dledger.profiles import PROFILES as DLEDGER_PROFILES
from spec.invariants import classic as classic_inv
from spec.invariants import controller as controller_inv
from spec.invariants import dledger as dledger_inv
from spec.invariants import raft as raft_inv
from spec.invariants import truncation as truncation_inv
from spec.mutants import MutantInfo
from spec.broker.abstract import every_broker_state
from spec.classic.abstract import every_broker_state as every_classic_state
from spec.raft.abstract import every_node_state
from spec.truncation.abstract import every_replica_state
from spec.steps import broker as broker_steps
from spec.steps import classic as classic_steps
from spec.steps import controller as controller_steps
from spec.steps import dledger as dledger_steps
from spec.steps import replica as replica_steps
from spec.truncation import variants as truncation_variants


@attrs.frozen(slots=True)
class Scenario:
    """What a campaign needs to know about one scenario family."""

    name: str
    default_profile: str
    properties: tuple[str, ...]
    outcomes: dict  # procedure -> every outcome the spec can produce (for coverage)
    generate: Callable[[RunConfig], Script]
    build: Callable[..., object]  # build(script, adapter, record_trace) -> cluster
    # the scenario's registry of known-bad variants, each runnable as adapter mutant:NAME
    mutants: tuple[MutantInfo, ...] = ()
    group_sizes: tuple[int, ...] = (3, 5)  # group sizes its generator accepts, rotated by seed
    # mutate(script, rng, config) -> a neighbour script, for the search (conformance/search.py);
    # None: the scenario's campaigns only sample
    mutate: Callable[[Script, random.Random, RunConfig], Script] | None = None
    # how its search spends runs and draws parents (conformance/search.py)
    search_policy: SearchPolicy = ENERGY
    # its mutations may resize the group between the campaign's group sizes (the script
    # names its nodes: a searched run's group size is len(script.nodes))
    resizes: bool = False
    # every node state its abstract states can hold (spec/raft/abstract.py), for reports
    abstract_universe: tuple[str, ...] = ()
    # the spec profiles it can judge against (--profile), default_profile among them
    profiles: tuple[str, ...] = ()
    # the families of handler-level operations (docs/adapter-protocol.md) whose procedures
    # its nodes run: what ``rmqha check --scenario`` judges of an implementation that runs no nodes
    handler_families: tuple[str, ...] = ()

    def handler_operations(self, declared) -> frozenset[str]:
        """The operations of ``declared`` that belong to this scenario's families."""
        return frozenset(op for op in declared if op.split(".", 1)[0] in self.handler_families)

    def profile(self, name: str | None) -> str:
        """``name`` (or the default), checked: an unknown profile is bad input before any work."""
        if name is None:
            return self.default_profile
        known = self.profiles or (self.default_profile,)
        if name not in known:
            raise UserError(f"unknown profile {name!r} for scenario {self.name} (known: {', '.join(known)})")
        return name


SCENARIOS: dict[str, Scenario] = {
    "dledger": Scenario(
        name="dledger",
        handler_families=("dledger",),
        default_profile="dledger-0.4",
        # its invariants and the step conformance of every node (spec/steps/dledger.py)
        properties=tuple(dledger_inv.INVARIANTS) + dledger_steps.PROPERTIES,
        outcomes=dledger_outcomes(),
        generate=generate_dledger_script,
        build=build_dledger,
        mutants=tuple(dledger_mutants.MUTANTS.values()),
        profiles=tuple(DLEDGER_PROFILES),
        group_sizes=(3, 4, 5),  # 4: an even quorum (3 of 4), where off-by-one quorum slips show
        mutate=lambda script, rng, config: mutate_dledger_script(script, rng, config.fault_mix,
                                                                 fault_mixes=config.search_fault_mixes,
                                                                 group_sizes=config.search_group_sizes),
        search_policy=RARE_TARGETS,
        resizes=True,
        abstract_universe=every_node_state(),
    ),
    "raft": Scenario(
        name="raft",
        default_profile="raft",
        properties=tuple(raft_inv.INVARIANTS),
        outcomes={},  # the implementation's decisions are opaque: only invariants are judged
        generate=generate_raft_script,
        build=build_raft,
        group_sizes=(3, 4, 5),
        mutate=lambda script, rng, config: mutate_dledger_script(script, rng, config.fault_mix,
                                                                 fault_mixes=config.search_fault_mixes,
                                                                 group_sizes=config.search_group_sizes),
        search_policy=RARE_TARGETS,
        resizes=True,
        abstract_universe=every_node_state(),
    ),
    "truncation": Scenario(
        name="truncation",
        handler_families=("truncation",),
        default_profile="rocketmq-5.1",
        # its invariants and the step conformance of every replica (spec/steps/replica.py)
        properties=tuple(truncation_inv.INVARIANTS) + replica_steps.PROPERTIES,
        outcomes=truncation_outcomes(),
        generate=lambda config: generate_truncation_script(config, MESSAGE_FAULT_MIXES),
        build=build_truncation,
        mutants=truncation_variants.SCENARIO_MUTANTS,  # less the equivalent ones
        group_sizes=(2, 3),
        mutate=lambda script, rng, config: mutate_truncation_script(script, config, rng, MESSAGE_FAULT_MIXES),
        # measured (docs/performance.md, "The truncation search"): 1,062 states per 1,000 runs from
        # seed 0 against AFL's energy's 947 with the same edits, about as many for the same CPU seconds
        search_policy=RARE_TARGETS,
        abstract_universe=every_replica_state(),
    ),
    "controller": Scenario(
        name="controller",
        handler_families=("controller", "broker", "truncation"),
        default_profile="rocketmq-5.1",
        # its invariants and the step conformance of every controller and broker
        # (spec/steps/controller.py, spec/steps/broker.py)
        properties=tuple(controller_inv.INVARIANTS) + controller_steps.PROPERTIES + broker_steps.PROPERTIES,
        outcomes=controller_outcomes(),
        generate=lambda config: generate_controller_script(config, MESSAGE_FAULT_MIXES),
        build=build_controller,
        mutants=tuple(controller_mutants.MUTANTS.values()),
        group_sizes=(3, 2),
        profiles=tuple(sorted(CONTROLLER_PROFILES, reverse=True)),
        mutate=lambda script, rng, config: mutate_controller_script(script, config, rng, MESSAGE_FAULT_MIXES),
        abstract_universe=every_broker_state(),
    ),
    "classic": Scenario(
        name="classic",
        handler_families=("classic",),
        default_profile="rocketmq-4.9.3",
        # its invariants and the step conformance of every broker (spec/steps/classic.py)
        properties=tuple(classic_inv.INVARIANTS) + classic_steps.PROPERTIES,
        outcomes=classic_outcomes(),
        generate=lambda config: generate_classic_script(config, MESSAGE_FAULT_MIXES),
        build=build_classic,
        mutants=tuple(classic_mutants.MUTANTS.values()),
        group_sizes=(3, 2),
        profiles=tuple(CLASSIC_PROFILES),
        mutate=lambda script, rng, config: mutate_classic_script(script, config, rng, MESSAGE_FAULT_MIXES),
        # measured (docs/performance.md, "The classic search"): 713 states per 1,000 runs
        # from seed 0 against AFL's energy's 677
        search_policy=RARE_TARGETS,
        abstract_universe=every_classic_state(),
    ),
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UserError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})") from None
