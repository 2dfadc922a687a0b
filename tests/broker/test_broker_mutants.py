"""Each broker-layer mutant that an invariant catches, told as a small failover story, is
caught by its invariant; the spec tells the same story without a violation. (The mutants
no invariant catches are caught by step conformance: tests/broker/test_broker_steps.py and
their counterexamples under tests/scenarios/controller/.)"""
import pytest

import broker_scenarios as story
from reference.mutants_controller import BROKER, MUTANTS, broker_rules
from spec.broker.rules import DEFAULT_BROKER_RULES
from spec.steps import PREFIX

STORIES = {
    "expand-counted-after-ack": story.expansion_reply_lost,
    "writes-before-role-confirmed": story.restarted_slave_serves_before_its_role_is_confirmed,
    "consume-queue-past-confirm-offset": story.consumed_past_confirm_offset,
    "queue-offsets-reused-after-restart": story.queue_offsets_after_restart,
    "new-master-adopts-self": story.quick_master_restart,
    "shrink-removes-master": story.shrink_check,
    "confirm-offset-ignores-unconnected-member": story.confirm_offset_with_unconnected_member,
    "confirm-offset-counts-unreported-ack": story.confirm_offset_with_new_connection,
    "apply-role-without-epoch-check": story.stale_notification,
    "confirm-offset-skips-unacked-member": story.confirm_offset_with_reconnecting_member,
}


# Liveness invariants are judged by the harness over simulated time, not over a story's
# observations: their mutants' runs are tested where the property is
# (tests/controller/test_broker_slave_catches_up.py, tests/controller/test_produce_answered.py)
LIVENESS = {"slave_catches_up", "produce_answered"}


def test_every_broker_mutant_has_a_story():
    assert set(STORIES) == {name for name, m in MUTANTS.items()
                            if m.layer == BROKER and not m.violates.startswith(PREFIX) and m.violates not in LIVENESS}
    assert {m.violates for m in MUTANTS.values() if m.layer == BROKER} >= LIVENESS  # each has its mutant


@pytest.mark.parametrize("name", sorted(STORIES))
def test_spec_keeps_the_invariant(name):
    assert STORIES[name](broker=DEFAULT_BROKER_RULES) == []


@pytest.mark.parametrize("name", sorted(STORIES))
def test_mutant_violates_its_invariant(name):
    violations = STORIES[name](broker=broker_rules(name))
    assert violations and {v.invariant for v in violations} == {MUTANTS[name].violates}


def test_7017_default_acks_lose_a_message_that_all_ack_keeps():
    """A documented limit, not a bug: without allAckInSyncStateSet an acknowledged write
    can be lost by a failover to a member that had not replicated it."""
    lost = story.default_acks_failover(all_ack=False)
    assert [v.subject for v in lost] == ["m1"] and lost[0].invariant == "no_acknowledged_message_lost"
    assert story.default_acks_failover(all_ack=True) == []
