"""Deadline scheduling: a node is woken only when its tick can do something, and the
run is the one a simulator ticking every node every 10 ms gives, byte for byte.

* every scenario script and a range of generated runs (reference and each mutant) give
  the same trace with deadlines as with a tick at every grid time;
* an audited run ticks every grid time and checks that each tick before the node's
  own deadline is a no-op (nothing sent or persisted, no random draw, the same state,
  summary and deadline): a deadline is never late;
* a quiet group is woken a small fraction of the grid times.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from adapters.errors import AdapterError
from adapters.remote_node import RemoteNode
from conformance.campaign import execute, get_scenario, plan_configs
from conformance.script import read_script
from reference.node_api import TICK_MS
from reference.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
# every scenario script but PySyncObj's (its nodes give no deadlines: nothing to compare)
SCRIPTS = sorted(p for p in (ROOT / "tests" / "scenarios").rglob("*.rmqha") if "pysyncobj" not in p.name)


def trace(script, adapter=None, deadlines=True) -> tuple[str, dict]:
    """The run's trace, and each distinct violation with the step and time it was first
    reported (a monitor may report a standing violation again on each activation: there
    are fewer activations with deadlines)."""
    Simulator.use_deadlines = deadlines
    try:
        ex = execute(script, adapter, record_trace=True)
    finally:
        Simulator.use_deadlines = True
    first: dict = {}
    for r in ex.violations:
        first.setdefault((r.violation.property, r.violation.message), (r.step, r.time))
    return ex.cluster.trace_jsonl(), first


def generated(scenario: str, seeds: int, adapters=("reference",), sizes=(3, 5), mixes=("mixed",), first_seed=0):
    """(script, adapter) of ``seeds`` generated runs from ``first_seed``; sizes and mixes rotate with the seed."""
    sc = get_scenario(scenario)
    return [(sc.generate(c), c.adapter) for c in plan_configs(
        "deadlines", seeds, first_seed, scenario=scenario, adapters=adapters, group_sizes=sizes, fault_mixes=mixes)]


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_scripts_give_the_same_trace_as_ticking_every_10_ms(path):
    script = read_script(str(path))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    assert trace(script) == trace(script, deadlines=False)


def runs():
    mutants = tuple(f"mutant:{m.name}" for m in get_scenario("dledger").mutants)
    return (generated("dledger", 8, mixes=("mixed", "crash", "partition", "lossy"))
            + generated("dledger", 1, adapters=mutants)
            + generated("truncation", 3, sizes=(2, 3)) + generated("controller", 2, sizes=(3, 2))
            + generated("classic", 2, sizes=(3, 2), mixes=("mixed", "lossy"))
            + generated("classic", 1, sizes=(3,), adapters=tuple(f"mutant:{m.name}" for m in
                                                                  get_scenario("classic").mutants))
            + generated("raft", 1, sizes=(3,)))  # the reference as remote nodes, deadlines over the protocol


def run_id(x) -> str:
    return f"{x.scenario}-{x.seed}" if hasattr(x, "seed") else str(x)


@pytest.mark.parametrize("script,adapter", runs(), ids=run_id)
def test_generated_runs_give_the_same_trace_as_ticking_every_10_ms(script, adapter):
    assert trace(script, adapter) == trace(script, adapter, deadlines=False)


class Audited:
    """A node whose every tick before its own deadline must change nothing."""

    def __init__(self, node, draws: list):
        self._node = node
        self._draws = draws

    def __getattr__(self, name):
        return getattr(self._node, name)

    def _state(self, now):
        """What must not change: the summary, the version, the draws, and the grid tick the
        deadline falls on (an idle maintainer run may move a deadline within one tick)."""
        node = self._node
        deadline = node.next_deadline()
        on_grid = None if deadline is None else now + max(0, -(-(deadline - now) // TICK_MS)) * TICK_MS
        return node.summary(), getattr(node, "version", None), on_grid, len(self._draws)

    def tick(self, now):
        deadline = self._node.next_deadline()
        before = self._state(now)
        ready = self._node.tick(now)
        if deadline is None or now < deadline:
            assert not ready.messages and ready.persist is None, f"{self._node.node_id} acted at {now} before its deadline {deadline}"
            assert self._state(now) == before, f"{self._node.node_id} changed at {now} before its deadline {deadline}"
        return ready


def audited_run(script, adapter):
    scenario = get_scenario(script.scenario)
    Simulator.use_deadlines = False
    try:
        cluster = scenario.build(script, adapter, False)
        factory = cluster.sim.factory

        def audited(node_id, durable, now, draw):
            draws: list = []

            def counted(bound):
                draws.append(bound)
                return draw(bound)

            return Audited(factory(node_id, durable, now, counted), draws)

        cluster.sim.factory = audited
        cluster.execute(script.steps)
        return cluster
    finally:
        Simulator.use_deadlines = True


@pytest.mark.parametrize("script,adapter", runs()[::2], ids=run_id)
def test_no_tick_before_a_deadline_does_anything(script, adapter):
    cluster = audited_run(script, adapter)
    assert cluster.sim.ticks > 0


def test_a_quiet_group_is_woken_a_fraction_of_the_grid_times():
    script, adapter = generated("dledger", 1, sizes=(3,), mixes=("none",))[0]
    sim = execute(script, adapter, record_trace=False).cluster.sim
    grid_ticks = 3 * sim.now // TICK_MS
    assert sim.ticks < grid_ticks / 20, (sim.ticks, grid_ticks)
    assert sim.ticks - sim.timer_firings < sim.timer_firings  # most wake-ups do something


class Answers:
    """An adapter whose node answers are given by the test."""

    spec = "fake"
    last_exchange = None

    def __init__(self):
        self.answer: dict = {}

    def request(self, op, args):
        return {} if op == "node.create" else self.answer


def test_a_remote_node_gives_its_deadline_in_its_answers_or_is_ticked_every_10_ms():
    adapter = Answers()
    node = RemoteNode(adapter, "dledger", "n1", ("n1",), 7, None, 100, "n1#1")
    assert node.next_deadline() == 100  # before it said anything: its next tick
    adapter.answer = {"messages": [], "next_deadline": 2_101}
    node.tick(110)
    assert node.next_deadline() == 2_101
    adapter.answer = {"messages": [], "next_deadline": None}
    node.tick(120)
    assert node.next_deadline() is None  # no timer: only a message wakes it
    adapter.answer = {"messages": []}
    node.tick(130)
    assert node.next_deadline() == 130  # left out: the next 10 ms tick
    for bad in ("soon", 1.5, True):
        adapter.answer = {"messages": [], "next_deadline": bad}
        with pytest.raises(AdapterError, match="next_deadline must be a time in ms or null"):
            node.tick(140)
