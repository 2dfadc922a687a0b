"""Campaigns that search (conformance/search.py): mutated runs are reproducible from their
seeds, every scenario's mutations stay runnable scripts that keep their opening and
healing suffix, and runs report the abstract states the search steers by."""
from __future__ import annotations

import random

import attrs
import pytest

from conformance.campaign import run_one, script_for
from conformance.faults import DEFAULT_FAULT_MIXES
from conformance.scenarios.registry import SCENARIOS, get_scenario
from conformance.script import parse_script
from conformance.search import MUTATE_SHARE, WARMUP_RUNS, reached, searched
from results.runresult import RunConfig

SEARCHING = sorted(name for name, sc in SCENARIOS.items() if sc.mutate is not None)


def ops(steps):
    return [(s.op, s.args) for s in steps]


def config(scenario: str, seed: int, **kw) -> RunConfig:
    sc = get_scenario(scenario)
    return RunConfig(campaign="t", seed=seed, adapter="reference", scenario=scenario, profile=sc.profile(None),
                     group_size=sc.group_sizes[seed % len(sc.group_sizes)],
                     fault_mix=DEFAULT_FAULT_MIXES[seed % len(DEFAULT_FAULT_MIXES)], duration_ms=kw.get("duration_ms", 8_000))


def test_dledger_raft_and_controller_search():
    assert {"dledger", "raft", "controller"} <= set(SEARCHING)
    for name in SEARCHING:
        assert get_scenario(name).abstract_universe, f"{name}: the report needs the universe of node states"


@pytest.mark.parametrize("scenario", SEARCHING)
def test_mutations_are_scripts_of_the_same_shape(scenario):
    """A mutation parses back from its rendering, keeps the script's header, and is
    reproduced exactly from the same random stream."""
    sc = get_scenario(scenario)
    for seed in range(4):
        c = config(scenario, seed)
        script = sc.generate(c)
        mutated = sc.mutate(script, random.Random(f"{seed}:mutate"), c)
        again = sc.mutate(script, random.Random(f"{seed}:mutate"), c)
        assert mutated == again
        assert (mutated.nodes, mutated.profile, mutated.options) == (script.nodes, script.profile, script.options)
        assert ops(parse_script(mutated.render()).steps) == ops(mutated.steps)
        # the healing end of the script stays: liveness is still judged after the faults
        assert ops(mutated.steps[-3:]) == ops(script.steps[-3:])


@pytest.mark.parametrize("scenario", SEARCHING)
def test_a_mutated_run_is_rebuilt_from_its_lineage(scenario):
    """script_for rebuilds a searched run's script from its seeds (origin + own seed), so
    the run replays with the same verdict and the same abstract states."""
    c = attrs.evolve(config(scenario, 7), origin=(3, 5))
    sc = get_scenario(scenario)
    expected = sc.generate(attrs.evolve(c, seed=3, origin=()))
    for seed in (5, 7):
        expected = sc.mutate(expected, random.Random(f"{seed}:mutate"), c)
    assert ops(script_for(c).steps) == ops(expected.steps)
    first, second = run_one(c), run_one(c)
    assert first.verdict == second.verdict == "pass", first.first_violation
    assert reached(first) and reached(first) == reached(second)


def test_searched_mutates_after_the_warm_up_and_favours_new_states():
    """The first WARMUP_RUNS runs sample; later ones are mutations of corpus runs in about
    MUTATE_SHARE of cases, each naming its ancestors; the same inputs choose the same."""
    configs = [config("dledger", s, duration_ms=4_000) for s in range(12)]
    runs = list(searched(configs, run_one))
    again = list(searched(configs, run_one))
    assert [r.config for r in runs] == [r.config for r in again]
    assert all(not r.config.origin for r in runs[:WARMUP_RUNS])
    mutated = [r for r in runs[WARMUP_RUNS:] if r.config.origin]
    assert mutated, "no run was a mutation"
    assert len(mutated) <= len(runs) - WARMUP_RUNS
    seeds = {c.seed for c in configs}
    assert all(set(r.config.origin) <= seeds for r in mutated)
    assert 0 < MUTATE_SHARE < 1
    # without mutation (a scenario that has none), the configs run as given
    plain = list(searched(configs[:5], run_one, can_mutate=False))
    assert [r.config for r in plain] == configs[:5]
