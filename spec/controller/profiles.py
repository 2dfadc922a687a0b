"""Controller profiles: where releases differ, as named data.

* ``rocketmq-5.1`` (default): 5.1.1 and later with upstream's later fixes. Brokers
  get their id through getNextBrokerId/applyBrokerId before registering; the first
  master comes from the first broker-triggered electMaster (masterEpoch 0).
* ``rocketmq-5.0``: RIP-44 as written (5.0.0). Brokers are identified by address and
  the controller assigns ids while registering; the first registrant becomes master
  in register (and a registrant in the SyncStateSet of a masterless set, or any
  registrant with unclean election on); an elect reply reports the *old*
  syncStateSetEpoch (#5045).

Everything else is shared. The 5.0 profile models only these differences; the rest
of 5.0.0's behaviour (its response-code numbering, a failed admin election also
clearing the master, ...) is listed in docs/controller.md.
"""
from __future__ import annotations

import attrs

from spec.controller.api import (
    ELECT_POLICY,
    FIRST_ELECTION,
    REGISTER_BROKER_RULES_5_0,
    REGISTER_BROKER_RULES_5_1,
)
from spec.controller.checks import Rule

ALL_APIS = frozenset(
    {
        "get_next_broker_id",
        "apply_broker_id",
        "register_broker",
        "get_replica_info",
        "alter_sync_state_set",
        "elect_master",
        "clean_broker_data",
    }
)


@attrs.frozen(slots=True)
class ControllerProfile:
    name: str
    description: str
    # "broker-id" (5.1: ids survive address changes) or "address" (5.0).
    broker_identity: str
    apis: frozenset[str]
    register_broker_rules: tuple[Rule, ...]
    # Who wins an electMaster, first match: (first_election,) elect_policy.
    elect_winner_rules: tuple[Rule, ...]
    # The elect reply's syncStateSetEpoch is the old one plus this (1; 0 in 5.0, #5045).
    elected_reply_sync_state_set_epoch_increment: int

    def supports(self, api: str) -> bool:
        return api in self.apis


ROCKETMQ_5_1 = ControllerProfile(
    name="rocketmq-5.1",
    description="5.1.1+: broker ids applied before register; first broker-triggered election wins at masterEpoch 0",
    broker_identity="broker-id",
    apis=ALL_APIS,
    register_broker_rules=REGISTER_BROKER_RULES_5_1,
    elect_winner_rules=(FIRST_ELECTION, ELECT_POLICY),
    elected_reply_sync_state_set_epoch_increment=1,
)

ROCKETMQ_5_0 = ControllerProfile(
    name="rocketmq-5.0",
    description="RIP-44 as written: ids assigned in register, first registrant is master, stale elect reply epoch",
    broker_identity="address",
    apis=ALL_APIS - {"get_next_broker_id", "apply_broker_id"},
    register_broker_rules=REGISTER_BROKER_RULES_5_0,
    elect_winner_rules=(ELECT_POLICY,),
    elected_reply_sync_state_set_epoch_increment=0,
)

PROFILES: dict[str, ControllerProfile] = {p.name: p for p in (ROCKETMQ_5_1, ROCKETMQ_5_0)}
DEFAULT_PROFILE = ROCKETMQ_5_1


def get_profile(name: str) -> ControllerProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown controller profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
