"""Replaced brokers and admin cleans in the controller stack (``replace``, ``clean [living]``).

``controller/crash-looping-broker-ids-past-16.rmqha`` takes broker ids past 16 and elects
in Java HashSet order; here: what the steps do to the controller's metadata, their bad
inputs, and that generated campaigns reach ids of 16 and more and a forced clean with an
id list (``cleanLivingBroker``), which the handler-level strategies reach on their own.
"""
import random
from collections import Counter
from pathlib import Path

import pytest

from conformance.errors import UserError
from conformance.faults import FAULT_MIXES
from conformance.scenarios.controller import (
    BROKER_NAME,
    build_controller,
    generate_controller_script,
    mutate_controller_script,
)
from conformance.script import Step, read_script
from results.runresult import RunConfig
from spec.controller.records import CleanBrokerDataRequest, ResponseCode

SCRIPT = Path(__file__).parent / "controller" / "crash-looping-broker-ids-past-16.rmqha"


def run(script, steps=None):
    """The cluster after ``steps`` (default: the script's), and the clean requests its
    controllers decided, with their answers."""
    cluster = build_controller(script, "reference", record_trace=False)
    cleans, judge = [], cluster._check_decision

    def spy(decision, config):
        if isinstance(decision.request, CleanBrokerDataRequest):
            cleans.append((decision.request, decision.response.code))
        return judge(decision, config)

    cluster._check_decision = spy
    cluster.execute(script.steps if steps is None else steps)
    return cluster, cleans


def registered(cluster):
    known = cluster.views[cluster.active_controller()].metadata.known(BROKER_NAME)
    return None if known is None else sorted(known.replicas.brokers)


def test_a_replaced_broker_gets_a_new_id_and_a_clean_removes_the_old_ones():
    script = read_script(str(SCRIPT))
    first_clean = next(i for i, s in enumerate(script.steps) if s.op == "clean")
    cluster, cleans = run(script, script.steps[:first_clean])
    assert registered(cluster) == list(range(1, 18))  # b2 went through ids 3..17, all still registered
    assert cluster._broker_id_of("b2") == 17 and cluster._broker_id_of("b3") == 2
    cluster.execute(script.steps[first_clean:first_clean + 2])
    assert registered(cluster) == [1, 2, 17]


def test_the_script_elects_17_over_2_and_the_forced_clean_removes_the_set():
    cluster, cleans = run(read_script(str(SCRIPT)))
    assert not cluster.violations
    assert cluster.current_master() == "b2" and cluster._broker_id_of("b2") == 17
    forced = [(r, code) for r, code in cleans if r.clean_living_broker]
    assert [(sorted(r.broker_ids_to_clean), code) for r, code in forced] == [([1], ResponseCode.SUCCESS)]
    assert registered(cluster) is None  # the whole set, not only id 1
    assert cluster.coverage[("election_broker_ids", "past_16")] == 1  # b1's failover: {1, 2, 17}
    assert cluster.coverage[("admin_clean", "dead_ids")] == cluster.coverage[("admin_clean", "forced_with_ids")] == 1
    # each decision's row, read by the scenario whichever controller decided (reports list them)
    assert cluster.coverage[("clean_broker_data", "cleaned")] == 2
    assert cluster.coverage[("elect_master", "new_master_elected")] >= 2  # the first master, b1's failover


@pytest.mark.parametrize("step, message", [
    (Step("clean", ("now",)), "clean: want 'clean' or 'clean living'"),
    (Step("clean", ("living", "x")), "clean: want 'clean' or 'clean living'"),
    (Step("replace", ("c1",)), "replace: 'c1' is not a broker"),
    (Step("replace", ("b9",)), "unknown node 'b9'"),
])
def test_bad_steps_are_one_line_of_bad_input(step, message):
    script = read_script(str(SCRIPT))
    with pytest.raises(UserError, match=message):
        run(script, script.steps[:1] + (step,))


def test_campaigns_reach_ids_past_16_and_forced_cleans_with_a_list():
    """Generated plans, run on the reference: elections over a SyncStateSet holding an id of
    16 or more, and forced cleans with an id list, counted as the outcomes reports list."""
    plans = {s: generate_controller_script(RunConfig("t", s, "reference", "controller", "rocketmq-5.1", 2, "crash",
                                                     30_000), FAULT_MIXES) for s in range(200)}
    churned = [s for s, p in plans.items() if any(st.op == "replace" for st in p.steps)]
    assert 25 <= len(churned) <= 75  # about a quarter of the seeds
    long_churn = [s for s in churned if sum(st.op == "replace" for st in plans[s].steps) >= 15
                  and any(st.op == "clean" and st.args == ("living",) for st in plans[s].steps)]
    assert len(long_churn) >= 2
    reached = Counter()
    for seed in long_churn:
        cluster, cleans = run(plans[seed])
        cluster.finish()
        assert not cluster.violations, seed
        assert max(cluster._broker_id_of(b) or 0 for b in cluster.brokers) >= 16
        reached.update(k for k, n in cluster.coverage.items() if n and k[0] in ("election_broker_ids", "admin_clean"))
    assert reached[("admin_clean", "forced_with_ids")] == len(long_churn)
    assert reached[("election_broker_ids", "past_16")] >= 1


def test_plans_without_crashes_have_no_replacements():
    for seed in range(20):
        plan = generate_controller_script(RunConfig("t", seed, "reference", "controller", "rocketmq-5.1", 3,
                                                    "partition", 30_000), FAULT_MIXES)
        assert not any(st.op in ("replace", "clean") for st in plan.steps)


def test_the_search_keeps_a_forced_clean_at_the_end():
    """A whole-set clean ends a run (nothing after it would meet a set to judge): the
    search's neighbours keep it last, with the closing steps before it."""
    config = RunConfig("t", 121, "reference", "controller", "rocketmq-5.1", 2, "crash", 30_000)
    plan = generate_controller_script(config, FAULT_MIXES)
    assert [(s.op, s.args) for s in plan.steps[-2:]] == [("clean", ("living",)), ("run", ("2000",))]
    for seed in range(10):
        neighbour = mutate_controller_script(plan, config, random.Random(seed), FAULT_MIXES)
        assert neighbour.steps[-9:] == plan.steps[-9:]
        assert ("clean", ("living",)) not in [(s.op, s.args) for s in neighbour.steps[:-2]]
