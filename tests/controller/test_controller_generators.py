"""The differential's controller inputs reach the paths where implementations differ.

``conformance.strategies.ARGUMENTS["controller.handle"]`` feeds the differential tests
(and the real classes). Within the Hypothesis profile's budget it must reach the paths
upstream's code and a careless implementation part on: a forced clean with an id list,
an admin-designated election, a policy choice between candidates 2^31 or more bytes apart,
one decided by a configured priority, and one decided among equals by the ids' order in a
Java HashSet (ids from 16 on).
"""
import collections

from hypothesis import given

from adapters.operations import call_spec
from conformance.strategies import ARGUMENTS, admin_call_args, alter_member_args, policy_election_args
from spec.controller.elect_policy import java_hash_set_order
from spec.controller.heartbeat import DEFAULT_ELECTION_PRIORITY
from spec.controller.records import CleanBrokerDataRequest, ElectMasterRequest, ResponseCode

PATHS = ("forced_clean_with_ids", "admin_designated", "offsets_2_31_apart", "configured_priority",
         "tie_among_ids_from_16", "alter_members_in_hash_set_order")


def _paths(args) -> set[str]:
    if not args["is_leader"]:
        return set()
    request, result = args["request"], call_spec("controller.handle", "rocketmq-5.1", args)
    found = set()
    if isinstance(request, CleanBrokerDataRequest) and request.clean_living_broker and request.broker_ids_to_clean \
            and result.code is ResponseCode.SUCCESS:
        assert result.events[0].broker_ids_to_clean is None  # upstream ignores the list
        found.add("forced_clean_with_ids")
    if result.check in ("member_not_registered", "member_not_alive") and \
            java_hash_set_order(request.new_sync_state_set) != sorted(request.new_sync_state_set):
        found.add("alter_members_in_hash_set_order")
    if not isinstance(request, ElectMasterRequest):
        return found
    if request.designate_elect and result.detail.endswith(":designated_broker"):
        found.add("admin_designated")
    if not result.detail.endswith("best_candidate"):
        return found
    live, state = args["liveness"], args["metadata"].get("broker-a").sync_state
    pool = state.sync_state_set if result.detail.startswith("elect_policy:sync_state_set") else \
        args["metadata"].get("broker-a").replicas.all_brokers()
    infos = [live.live_info("", "broker-a", b) for b in sorted(pool) if live.is_alive("", "broker-a", b)]
    offsets = [i.max_offset for i in infos]
    if max(offsets) - min(offsets) >= 2**31:
        found.add("offsets_2_31_apart")
    winner = next(i for i in infos if i.broker_id == result.response.master_broker_id)
    rivals = [i for i in infos if (i.epoch, i.max_offset) == (winner.epoch, winner.max_offset) and i is not winner]
    if winner.election_priority != DEFAULT_ELECTION_PRIORITY and \
            any(r.election_priority != winner.election_priority for r in rivals):
        found.add("configured_priority")
    tied = [r.broker_id for r in rivals if r.election_priority == winner.election_priority] + [winner.broker_id]
    if len(tied) >= 2 and max(tied) >= 16 and winner.broker_id != min(tied):
        found.add("tie_among_ids_from_16")
    return found


def _reached(strategy) -> collections.Counter:
    reached: collections.Counter = collections.Counter()

    @given(strategy)
    def explore(args):
        reached.update(_paths(args))

    explore()
    return reached


# each aimed part of controller_args, and the path it exists to reach
AIMED = {
    "forced_clean_with_ids": admin_call_args(forced=True),
    "admin_designated": policy_election_args("designated"),
    "offsets_2_31_apart": policy_election_args("offsets_far_apart"),
    "configured_priority": policy_election_args("priorities"),
    "tie_among_ids_from_16": policy_election_args("tie"),
    "alter_members_in_hash_set_order": alter_member_args(),
}


def test_each_aimed_input_reaches_its_path():
    for path, strategy in AIMED.items():
        reached = _reached(strategy)
        assert reached[path], f"{path} never reached (reached: {dict(reached)})"


def test_the_differential_inputs_reach_those_paths():
    """The differential's arguments draw the aimed parts (half of the draws): within the profile's
    budget some of those paths are reached (which ones depends on the budget; each part alone
    reaches its own, above)."""
    reached = _reached(ARGUMENTS["controller.handle"])
    print("controller.handle paths reached:", dict(reached))
    assert sum(reached.values()) and set(reached) & set(PATHS)
