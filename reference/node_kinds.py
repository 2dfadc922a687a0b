"""The reference node of each node kind of the adapter protocol, built one way.

``FACTORIES[kind](node_id, peers, draw, durable, now, config, mutant)`` is what a scenario
runs in process for ``reference`` / ``mutant:NAME`` and what ``rmqha serve-stdio``
serves over the protocol, so both run the same nodes. ``config`` is the kind's creation
record (``spec.broker.messages.BrokerNodeConfig``, ``spec.controller.messages.
ControllerNodeConfig``, ``spec.classic.wire.ClassicNodeConfig``; None for a replica); ``mutant`` a name of the kind's family.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import attrs

from reference.broker_replica import BrokerReplica
from reference.classic_broker import ClassicBroker
from reference.mutants_classic import MUTANTS as CLASSIC_MUTANTS
from reference.controller_broker import BrokerSetup, ControllerModeBroker
from reference.controller_node import ControllerNode
from reference.mutants_controller import MUTANTS as CONTROLLER_MUTANTS
from reference.mutants_controller import broker_rules, controller_rules
from spec.broker.messages import BrokerNodeConfig
from spec.classic.rules import ClassicRules
from spec.classic.wire import ClassicNodeConfig
from spec.controller.messages import ControllerNodeConfig
from spec.controller.rules import ControllerRules
from spec.truncation.algebra import REFERENCE
from spec.truncation.variants import REPLICA_MUTANTS, VARIANTS


def make_replica(node_id: str, peers: tuple[str, ...], draw, durable: Any, now: int, config: None,
                 mutant: str | None) -> BrokerReplica:
    if mutant in REPLICA_MUTANTS:
        return BrokerReplica(node_id, peers, durable, now, confirm=REPLICA_MUTANTS[mutant].confirm)
    return BrokerReplica(node_id, peers, durable, now, VARIANTS[mutant] if mutant else REFERENCE)


def make_broker(node_id: str, peers: tuple[str, ...], draw, durable: Any, now: int, config: BrokerNodeConfig,
                mutant: str | None) -> ControllerModeBroker:
    rules = attrs.evolve(broker_rules(mutant), config=config.ha)
    setup = BrokerSetup(config.cluster_name, config.broker_name, tuple(config.controllers), rules,
                        async_learner=config.async_learner, election_priority=config.election_priority)
    return ControllerModeBroker(node_id, peers, setup, durable, now)


def make_controller(node_id: str, peers: tuple[str, ...], draw, durable: Any, now: int,
                    config: ControllerNodeConfig, mutant: str | None) -> ControllerNode:
    rules = attrs.evolve(controller_rules(mutant, ControllerRules.for_profile(config.profile)), config=config.config)
    return ControllerNode(node_id, peers, draw, durable, now, rules=rules)


def make_classic(node_id: str, peers: tuple[str, ...], draw, durable: Any, now: int, config: ClassicNodeConfig,
                 mutant: str | None) -> ClassicBroker:
    rules = ClassicRules.for_profile(config.profile, config.config)
    if mutant:
        rules = CLASSIC_MUTANTS[mutant].apply(rules)
    return ClassicBroker(node_id, config, durable, now, draw, rules)


FACTORIES: Mapping[str, Callable[..., Any]] = {
    "replica": make_replica,
    "broker": make_broker,
    "controller": make_controller,
    "classic": make_classic,
}
# the mutants a node kind can run (mutant:NAME), and what the docs call that family
MUTANTS_OF_KIND: Mapping[str, Mapping] = {
    "replica": {**VARIANTS, **REPLICA_MUTANTS},
    "broker": CONTROLLER_MUTANTS,
    "controller": CONTROLLER_MUTANTS,
    "classic": CLASSIC_MUTANTS,
}
FAMILY_OF_KIND = {"replica": "truncation", "broker": "controller", "controller": "controller", "classic": "classic"}
