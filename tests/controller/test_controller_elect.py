"""electMaster: triggers, the first election, the policy passes and every outcome, both profiles."""
import attrs
import pytest

from controller_cases import CLUSTER, NAME, R50, R51, addr, alive, metadata, state_of
from spec.controller.api import ELECT_MASTER_OUTCOMES
from spec.controller.events import ElectMasterEvent
from spec.controller.records import ControllerConfig, ElectMasterRequest, ResponseCode as RC
from spec.controller.rules import ControllerRules

BROKER = ElectMasterRequest.of_broker_trigger
ADMIN = ElectMasterRequest.of_admin_trigger


def CONTROLLER(name=NAME):
    return ElectMasterRequest.of_controller_trigger(name)


UNCLEAN = attrs.evolve(R51, config=ControllerConfig(enable_elect_unclean_master=True))
FIRST = dict(ids=(1, 2, 3), master=None, master_epoch=0, members=(), ss_epoch=0)
# master 1 at masterEpoch 4, SyncStateSet {1, 2} at syncStateSetEpoch 6, replica 3 outside it
RUNNING = dict(ids=(1, 2, 3), master=1, master_epoch=4, members={1, 2}, ss_epoch=6)

CASES = [
    # id, rules, metadata, request, alive, code, outcome row, winner rule (detail), new master
    ("unknown-set-broker", R51, RUNNING, BROKER(CLUSTER, "other", 1), (1, 2, 3), RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "broker_set_unknown", "", None),
    ("unknown-set-controller", R51, RUNNING, CONTROLLER("other"), (1, 2, 3), RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "broker_set_unknown", "", None),
    # masterEpoch 0: a request naming a broker wins with no further checks, alive or not
    ("first-broker-trigger", R51, FIRST, BROKER(CLUSTER, NAME, 2), (), RC.SUCCESS, "new_master_elected", "first_election", 2),
    ("first-admin-trigger", R51, FIRST, ADMIN(CLUSTER, NAME, 3), (), RC.SUCCESS, "new_master_elected", "first_election", 3),
    ("first-unregistered-id", R51, FIRST, BROKER(CLUSTER, NAME, 7), (), RC.SUCCESS, "new_master_elected", "first_election", 7),
    # ... but the controller trigger goes to the policy (empty SyncStateSet: nobody)
    ("first-controller-trigger", R51, FIRST, CONTROLLER(), (1, 2, 3), RC.CONTROLLER_MASTER_NOT_AVAILABLE, "no_master_available", "elect_policy:none:no_alive_candidate", None),
    ("old-master-alive-broker", R51, RUNNING, BROKER(CLUSTER, NAME, 2), (1, 2), RC.CONTROLLER_MASTER_STILL_EXIST, "old_master_still_exists", "elect_policy:sync_state_set:old_master_still_alive", None),
    ("old-master-alive-controller", R51, RUNNING, CONTROLLER(), (1, 2), RC.CONTROLLER_MASTER_STILL_EXIST, "old_master_still_exists", "elect_policy:sync_state_set:old_master_still_alive", None),
    ("failover-controller", R51, RUNNING, CONTROLLER(), (2, 3), RC.SUCCESS, "new_master_elected", "elect_policy:sync_state_set:best_candidate", 2),
    ("failover-broker", R51, RUNNING, BROKER(CLUSTER, NAME, 2), (2, 3), RC.SUCCESS, "new_master_elected", "elect_policy:sync_state_set:best_candidate", 2),
    ("nobody-controller", R51, RUNNING, CONTROLLER(), (3,), RC.CONTROLLER_MASTER_NOT_AVAILABLE, "no_master_available", "elect_policy:none:no_alive_candidate", None),
    ("nobody-broker", R51, RUNNING, BROKER(CLUSTER, NAME, 3), (3,), RC.CONTROLLER_ELECT_MASTER_FAILED, "elect_master_failed", "elect_policy:none:no_alive_candidate", None),
    ("nobody-admin", R51, RUNNING, ADMIN(CLUSTER, NAME, 3), (3,), RC.CONTROLLER_ELECT_MASTER_FAILED, "elect_master_failed", "elect_policy:none:no_alive_candidate", None),
    ("unclean-controller", UNCLEAN, RUNNING, CONTROLLER(), (3,), RC.SUCCESS, "new_master_elected", "elect_policy:all_replicas:best_candidate", 3),
    ("unclean-not-needed", UNCLEAN, RUNNING, CONTROLLER(), (2, 3), RC.SUCCESS, "new_master_elected", "elect_policy:sync_state_set:best_candidate", 2),
    ("designate-other-than-alive-master", R51, RUNNING, ADMIN(CLUSTER, NAME, 2), (1, 2), RC.SUCCESS, "new_master_elected", "elect_policy:sync_state_set:designated_broker", 2),
    ("designate-old-master", R51, RUNNING, ADMIN(CLUSTER, NAME, 1), (1, 2), RC.CONTROLLER_MASTER_STILL_EXIST, "old_master_still_exists", "elect_policy:sync_state_set:old_master_still_alive", None),
    ("designate-dead", R51, RUNNING, ADMIN(CLUSTER, NAME, 2), (1, 3), RC.CONTROLLER_ELECT_MASTER_FAILED, "elect_master_failed", "elect_policy:none:designated_broker_not_alive", None),
    ("designate-outside-set", R51, RUNNING, ADMIN(CLUSTER, NAME, 3), (1, 2, 3), RC.CONTROLLER_ELECT_MASTER_FAILED, "elect_master_failed", "elect_policy:none:designated_broker_not_alive", None),
    ("designate-outside-set-unclean", UNCLEAN, RUNNING, ADMIN(CLUSTER, NAME, 3), (1, 2, 3), RC.SUCCESS, "new_master_elected", "elect_policy:all_replicas:designated_broker", 3),
    # rocketmq-5.0: no first-election rule (the first master comes from register)
    ("5.0-no-first-election", R50, FIRST, BROKER(CLUSTER, NAME, 2), (1, 2, 3), RC.CONTROLLER_ELECT_MASTER_FAILED, "elect_master_failed", "elect_policy:none:no_alive_candidate", None),
    ("5.0-failover", R50, RUNNING, CONTROLLER(), (2, 3), RC.SUCCESS, "new_master_elected", "elect_policy:sync_state_set:best_candidate", 2),
]


@pytest.mark.parametrize(
    "case_id,rules,meta,request_,alive_ids,code,outcome,detail,winner", CASES, ids=[c[0] for c in CASES]
)
def test_elect_master_table(case_id, rules, meta, request_, alive_ids, code, outcome, detail, winner):
    before = metadata(**meta)
    result, after = rules.execute(before, request_, alive(*alive_ids))
    assert (result.code, result.check, result.detail) == (code, outcome, detail)
    r, old = result.response, state_of(before)
    if code == RC.SUCCESS:
        increment = 0 if rules.profile.name == "rocketmq-5.0" else 1
        assert result.events == (ElectMasterEvent(NAME, True, winner),)
        assert (r.master_broker_id, r.master_epoch, r.sync_state_set_epoch, r.sync_state_set) == (
            winner, old.master_epoch + 1, old.sync_state_set_epoch + increment, frozenset({winner}),
        )
        assert r.master_address == (addr(winner) if winner in (1, 2, 3) else None)
        assert r.broker_member_group == {i: addr(i) for i in (1, 2, 3)}
        new = state_of(after)
        assert (new.master_broker_id, new.master_epoch, new.sync_state_set, new.sync_state_set_epoch) == (
            winner, old.master_epoch + 1, frozenset({winner}), old.sync_state_set_epoch + 1,
        )
    elif code == RC.CONTROLLER_MASTER_STILL_EXIST:
        assert result.events == () and after == before
        assert (r.master_broker_id, r.master_address, r.master_epoch, r.sync_state_set_epoch, r.sync_state_set) == (
            1, addr(1), old.master_epoch, old.sync_state_set_epoch, old.sync_state_set,
        )
    else:
        # 2004, 2010 and 2012 carry no master fields, even with a master still recorded
        assert (r.master_broker_id, r.master_address, r.master_epoch, r.sync_state_set_epoch, r.sync_state_set) == (None,) * 5
        if code == RC.CONTROLLER_MASTER_NOT_AVAILABLE:
            assert result.events == (ElectMasterEvent(NAME, False),)
            new = state_of(after)
            assert (new.master_broker_id, new.master_epoch, new.sync_state_set, new.sync_state_set_epoch) == (
                None, old.master_epoch + 1, old.sync_state_set, old.sync_state_set_epoch,
            )
        else:
            assert result.events == () and after == before


def test_every_outcome_is_exercised():
    assert {c[6] for c in CASES} == set(ELECT_MASTER_OUTCOMES) | {"broker_set_unknown"}


def test_first_election_makes_epochs_one_and_set_of_self():
    _, after = R51.execute(metadata(**FIRST), BROKER(CLUSTER, NAME, 2), alive())
    s = state_of(after)
    assert (s.master_broker_id, s.master_epoch, s.sync_state_set, s.sync_state_set_epoch) == (2, 1, {2}, 1)


def test_after_a_failed_controller_election_masterless_set_elects_on_broker_trigger():
    _, cleared = R51.execute(metadata(**RUNNING), CONTROLLER(), alive(3))
    assert state_of(cleared).master_broker_id is None
    result, after = R51.execute(cleared, BROKER(CLUSTER, NAME, 2), alive(2, 3))
    assert result.code == RC.SUCCESS and state_of(after).master_broker_id == 2


@pytest.mark.parametrize(
    "infos,expected",
    [
        ({2: (3, 100), 3: (3, 200)}, 3),  # maxOffset desc
        ({2: (4, 10), 3: (3, 999)}, 2),  # epoch before offset
        ({2: (3, 100, 5), 3: (3, 100, 1)}, 3),  # electionPriority asc
        ({2: (3, 100, 1), 3: (3, 100, 1)}, 2),  # brokerId asc
        ({3: (0, 0)}, 3),  # no heartbeat data ties lowest
        ({}, 2),  # nobody has data: brokerId asc
        ({2: (3, 0), 3: (3, 2**31 + 1)}, 3),  # 64-bit offsets
        ({2: (3, 2**40), 3: (3, 2**40 + 1)}, 3),
    ],
)
def test_policy_order(infos, expected):
    before = metadata(ids=(1, 2, 3), master=1, master_epoch=4, members={1, 2, 3}, ss_epoch=6)
    result = R51.handle(before, CONTROLLER(), alive(2, 3, infos=infos))
    assert (result.code, result.response.master_broker_id) == (RC.SUCCESS, expected)


def test_unclean_pass_runs_only_without_a_clean_winner():
    rules = ControllerRules(config=ControllerConfig(enable_elect_unclean_master=True))
    # 3 is far ahead but outside the set: the clean pass still wins
    result = rules.handle(metadata(**RUNNING), CONTROLLER(), alive(2, 3, infos={2: (1, 1), 3: (9, 9)}))
    assert result.response.master_broker_id == 2
