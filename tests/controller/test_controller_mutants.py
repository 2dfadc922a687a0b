"""Each controller-layer mutant is caught by the invariant it names; the spec passes the same case.

Every test runs one concrete case twice -- with the spec and with the mutant -- and
asserts the invariant holds for the first and fails for the second.
"""
import pytest

from controller_cases import CLUSTER, NAME, R51, addr, alive, code, metadata
from reference.mutants_controller import BROKER, CONTROLLER, MUTANTS, controller_rules, get_mutant
from spec.controller.heartbeat import BrokerHeartbeat, HeartbeatTable
from spec.controller.records import (
    AlterSyncStateSetRequest,
    ApplyBrokerIdRequest,
    ControllerMetadata,
    ElectMasterRequest,
    ResponseCode as RC,
)
from spec.controller.scheduling import scan_inactive_master_and_reelect, scan_not_active_broker_and_elect
from spec.invariants import controller as inv
from spec.steps import broker as broker_steps
from spec.steps import controller as controller_steps

RUNNING = dict(ids=(1, 2, 3), master=1, master_epoch=4, members={1, 2}, ss_epoch=6)

# Issues the semantic note lists: each must have a mutant (#7017 is a documented limit).
NOTE_ISSUES = {"#5663", "#6662", "#6728", "#6342", "#7219", "#7293", "#5045", "#6382", "#5712", "#10578", "#6508", "#6609", "#7689"}


def both(mutant_name):
    """(spec rules, mutant rules)."""
    return R51, controller_rules(mutant_name)


def names(violations):
    return {v.invariant for v in violations}


def test_registry_covers_every_listed_issue_and_every_invariant():
    assert {m.issue for m in MUTANTS.values() if m.issue} == NOTE_ISSUES
    # every invariant has a mutant, and so has every step property (spec/steps/controller.py),
    # some killed first by another one (tests/scenarios/controller/mutant-*.rmqha)
    steps = set(controller_steps.PROPERTIES) | set(broker_steps.PROPERTIES)
    assert set(inv.INVARIANTS) <= {m.violates for m in MUTANTS.values()} <= set(inv.INVARIANTS) | steps
    for mutant in MUTANTS.values():
        assert mutant.layer in (CONTROLLER, BROKER) and mutant.replaces and mutant.description
    with pytest.raises(ValueError, match="unknown controller mutant"):
        get_mutant("nope")


def test_controller_rules_of_a_broker_mutant_are_the_spec():
    assert controller_rules("expand-counted-after-ack") == R51 and controller_rules(None) == R51


def test_7293_alter_without_master_crashes():
    before = metadata(master=None, master_epoch=3, members={1, 2}, ss_epoch=4)
    request = AlterSyncStateSetRequest(NAME, 1, 3, {1}, 4)
    for rules, caught in zip(both("alter-without-master-crashes"), (False, True)):
        result = rules.handle(before, request, alive(1, 2))
        assert bool(inv.reply_code_allowed("alter_sync_state_set", result.code)) == caught
    assert R51.handle(before, request, alive(1, 2)).code == RC.CONTROLLER_INVALID_MASTER


def test_5045_elect_reply_with_old_sync_state_set_epoch():
    before, request = metadata(**RUNNING), ElectMasterRequest.of_controller_trigger(NAME)
    for rules, caught in zip(both("elect-reply-old-sync-state-set-epoch"), (False, True)):
        result, after = rules.execute(before, request, alive(2))
        assert names(inv.reply_matches_state(NAME, result.response, after)) == ({"reply_matches_state"} if caught else set())


def _heartbeat(broker_id):
    return BrokerHeartbeat(CLUSTER, NAME, addr(broker_id), broker_id, 1, 100, 100)


def _controller_ticks(rules, metadata_, beats, now):
    """One leader: heartbeats arrive, then both 5-second scans run."""
    table = HeartbeatTable()
    for broker_id, at in beats:
        table = rules.on_broker_heartbeat(table, _heartbeat(broker_id), at)
    scanned = scan_not_active_broker_and_elect(metadata_, table, now, rules)
    return scan_inactive_master_and_reelect(scanned.metadata, scanned.table, now, rules).metadata


@pytest.mark.parametrize("mutant", ["no-periodic-reelect", "heartbeat-of-unknown-broker-ignored"])
def test_6382_and_5712_new_leader_must_still_fail_over(mutant):
    # The new controller leader never saw master 1 (it died before the switch), so no
    # expiry fires for it; replica 2 heartbeats the new leader.
    before = metadata(**RUNNING)
    for rules, caught in zip(both(mutant), (False, True)):
        after = _controller_ticks(rules, before, [(2, 9_000)], 10_000)
        violations = inv.no_stuck_dead_master(after, truly_alive={(NAME, 2)})
        assert names(violations) == ({"no_stuck_dead_master"} if caught else set())


def test_10578_offset_comparator_overflow():
    before = metadata(ids=(1, 2, 3), master=1, master_epoch=4, members={1, 2, 3}, ss_epoch=6)
    live = alive(2, 3, infos={2: (3, 0), 3: (3, 2**31 + 1)})
    request = ElectMasterRequest.of_controller_trigger(NAME)
    for rules, caught in zip(both("elect-offset-comparator-overflow"), (False, True)):
        result = rules.handle(before, request, live)
        assert result.response.master_broker_id == (2 if caught else 3)
        found = inv.elected_master_most_up_to_date(before, request, result.response, live)
        assert names(found) == ({"elected_master_most_up_to_date"} if caught else set())


def test_stale_alter_accepted_is_not_a_compare_and_set():
    before = metadata(**RUNNING)
    request = AlterSyncStateSetRequest(NAME, 1, 4, {1, 2, 3}, 5)  # syncStateSetEpoch 5 is stale
    for rules, caught in zip(both("alter-ignores-sync-state-set-epoch"), (False, True)):
        result, after = rules.execute(before, request, alive(1, 2, 3))
        assert names(inv.alter_is_compare_and_set(before, request, result.response, after)) == (
            {"alter_is_compare_and_set"} if caught else set()
        )


def test_unclean_pass_without_unclean_election():
    before = metadata(**RUNNING)
    for rules, caught in zip(both("unclean-pass-always"), (False, True)):
        result = rules.handle(before, ElectMasterRequest.of_controller_trigger(NAME), alive(3))
        found = inv.elected_master_was_eligible(before, result.events, rules.config)
        assert names(found) == ({"elected_master_was_eligible"} if caught else set())


def test_broker_id_taken_over_breaks_check_code_stability():
    before = metadata(ids=(1, 2))
    history, _ = inv.CheckCodeHistory().observe(before)
    request = ApplyBrokerIdRequest(CLUSTER, NAME, 2, code(7, 99))
    for rules, caught in zip(both("apply-broker-id-ignores-check-code"), (False, True)):
        _, after = rules.execute(before, request, alive())
        _, found = history.observe(after)
        assert names(found) == ({"broker_id_check_code_stable"} if caught else set())


def test_election_reusing_master_epoch_gives_two_masters_one_epoch():
    before = metadata(**RUNNING)
    for rules, caught in zip(both("elect-keeps-master-epoch"), (False, True)):
        history, _ = inv.MasterEpochHistory().observe_controller(before)
        _, after = rules.execute(before, ElectMasterRequest.of_controller_trigger(NAME), alive(2))
        _, found = history.observe_controller(after)
        assert names(found) == ({"one_master_per_master_epoch"} if caught else set())


def test_election_resetting_sync_state_set_epoch_goes_backwards():
    before = metadata(**RUNNING)  # syncStateSetEpoch 6 > masterEpoch 5 after the election
    for rules, caught in zip(both("elect-resets-sync-state-set-epoch"), (False, True)):
        _, after = rules.execute(before, ElectMasterRequest.of_controller_trigger(NAME), alive(2))
        assert names(inv.epochs_never_decrease(before, after)) == ({"epochs_never_decrease"} if caught else set())


def test_master_epoch_history_judges_brokers_too():
    from spec.broker.records import BrokerRoleState, Role

    history = inv.MasterEpochHistory()
    history, first = history.observe(NAME, BrokerRoleState(1, Role.MASTER, 4, 1, addr(1), fenced=False))
    history, fenced = history.observe(NAME, BrokerRoleState(2, Role.MASTER, 4, 2, addr(2), fenced=True))
    _, second = history.observe(NAME, BrokerRoleState(2, Role.MASTER, 4, 2, addr(2), fenced=False))
    assert first == fenced == [] and names(second) == {"one_master_per_master_epoch"}


def test_master_in_sync_state_set_predicate_and_clean_exemption():
    broken = ControllerMetadata({NAME: metadata(master=1, members={2}).get(NAME)})
    assert names(inv.master_in_sync_state_set(broken)) == {"master_in_sync_state_set"}
    assert inv.master_in_sync_state_set(broken, exempt={NAME}) == []
