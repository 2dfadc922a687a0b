"""A controller that applies several committed entries in one step (a lagging follower catching
up) is compared with its previous metadata only for sets that stayed known in between: an
admin clean can remove a set and the next entries create it again with epochs from the start
(tests/scenarios/controller/lagging-controller-applies-a-clean-and-the-recreated-set-at-once.rmqha).
A decrease with no such gap is still a violation; a controller still behind the clean is not
judged against the histories of the set created again."""
from pathlib import Path

import pytest

from conformance.scenarios.controller import build_controller
from conformance.script import read_script
from spec.controller.records import (BrokerRegistration, BrokerReplicaInfo, BrokerSetMetadata, ControllerMetadata,
                                     SyncStateInfo)
from spec.invariants import controller as inv

SCRIPT = Path(__file__).parent / "controller" / "lagging-controller-applies-a-clean-and-the-recreated-set-at-once.rmqha"
NAME = "broker-a"


def metadata(ids, master, master_epoch, ss_epoch) -> ControllerMetadata:
    replicas = BrokerReplicaInfo(max(ids) + 1, {i: BrokerRegistration(f"b{i}", f"b{i};0") for i in ids})
    return ControllerMetadata({NAME: BrokerSetMetadata("cluster-a", replicas, SyncStateInfo(master, master_epoch, {master}, ss_epoch))})


BEFORE = metadata((1, 2), 1, 4, 6)
RECREATED = metadata((3,), 3, 1, 1)


@pytest.fixture
def cluster():
    c = build_controller(read_script(str(SCRIPT)), "reference", record_trace=False)
    c._set_unknown = {NAME: {(5, 6)}}  # some controller's metadata lacked the set at applied count 6
    return c


def test_a_set_unknown_between_the_two_observations_is_not_compared(cluster):
    assert inv.epochs_never_decrease(cluster._comparable(BEFORE, 4, 8), RECREATED) == []


@pytest.mark.parametrize("applied", [(6, 8), (2, 6), (6, 7), (0, 5)])
def test_a_decrease_with_the_set_known_throughout_is_a_violation(cluster, applied):
    found = inv.epochs_never_decrease(cluster._comparable(BEFORE, *applied), RECREATED)
    assert {v.invariant for v in found} == {"epochs_never_decrease"}


@pytest.mark.parametrize("applied, judged", [(4, False), (5, False), (6, True), (8, True)])
def test_the_histories_judge_a_set_only_after_the_removals_the_controller_has_applied(cluster, applied, judged):
    """A controller behind the clean (applied count 4 or 5, the set unknown at 6) holds the
    set as it was before: the histories, which hold the set created again, do not judge it."""
    assert (NAME in cluster._current_sets(BEFORE, applied).sets) == judged
