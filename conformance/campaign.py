"""Seeded randomized campaigns: one run = one generated scenario script, executed
against an adapter with every invariant checked after every step.

What each scenario is (generator, cluster, properties, mutants) lives in its
``Scenario`` record (``conformance/scenarios/registry.py``); fault mixes in
``conformance/faults.py``. This module executes runs.

``run_one(config)`` is the unit of work (in-process, or inside Spark executors):
it generates the script from the seed, runs it, and, when something is violated,
shrinks the script to a minimal counterexample that replays deterministically.
``plan_configs`` expands a campaign's parameters into one ``RunConfig`` per seed.
"""
from __future__ import annotations

import time
from collections import Counter
from typing import Iterable, Iterator, Sequence

import attrs

from conformance.errors import AdapterError, UserError
from conformance.faults import check_fault_mixes
from conformance.scenarios.base import ExpectationFailed
from conformance.scenarios.registry import Scenario, get_scenario
from conformance.script import Script, Step
from results.runresult import Counterexample, Coverage, PropertyVerdict, RunConfig, RunResult


# ---------------------------------------------------------------- execution


@attrs.frozen(slots=True)
class Execution:
    cluster: object
    error: str | None  # the implementation failed (exception); one line

    @property
    def violations(self):
        return self.cluster.violations


def check_expectations(script: Script, scenario: Scenario) -> None:
    """``expect violation NAME`` must name a property of the scenario: a typo would
    otherwise be an expectation that can never hold (exit 1) instead of bad input."""
    for step in script.steps:
        if step.op == "expect" and step.args[:1] == ("violation",):
            name = step.args[1] if len(step.args) > 1 else ""
            if name not in scenario.properties:
                raise UserError(f"line {step.line}: expect violation {name!r}: no such property of scenario "
                                f"{scenario.name} (known: {', '.join(scenario.properties)})")


def execute(script: Script, adapter: str | None = None, record_trace: bool = True) -> Execution:
    """Build the cluster for ``script`` and run every step. UserError propagates."""
    scenario = get_scenario(script.scenario)
    check_expectations(script, scenario)
    adapter = adapter or script.adapter or "reference"
    cluster = scenario.build(script, adapter, record_trace)
    error = None
    try:
        cluster.execute(script.steps)
    except (UserError, ExpectationFailed):
        raise
    except AdapterError as exc:
        error = str(exc)
    except Exception as exc:  # the implementation under test blew up
        error = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
    finally:
        cluster.finish()
    return Execution(cluster, error)


def _violates(script: Script, adapter: str, prop: str) -> bool:
    try:
        ex = execute(script, adapter, record_trace=False)
    except (UserError, ExpectationFailed):
        return False
    return any(r.violation.property == prop for r in ex.violations)


def shrink(script: Script, adapter: str, prop: str, budget: int = 250) -> Script:
    """Delta-debug the steps (then the run lengths) while ``prop`` stays violated."""
    tries = 0

    def still_fails(candidate: Script) -> bool:
        nonlocal tries
        tries += 1
        return _violates(candidate, adapter, prop)

    steps = list(script.steps)
    chunk = max(1, len(steps) // 2)
    while chunk >= 1 and tries < budget:
        i = 0
        removed = False
        while i < len(steps) and tries < budget:
            candidate = steps[:i] + steps[i + chunk :]
            if candidate and still_fails(script.with_steps(candidate)):
                steps = candidate
                removed = True
            else:
                i += chunk
        if not removed:
            chunk //= 2
    # merge adjacent waits, then shorten them
    merged: list[Step] = []
    for s in steps:
        if s.op == "run" and merged and merged[-1].op == "run":
            merged[-1] = Step("run", (str(int(merged[-1].args[0]) + int(s.args[0])),))
        else:
            merged.append(s)
    if merged != steps and still_fails(script.with_steps(merged)):
        steps = merged
    for i, s in enumerate(steps):
        if s.op != "run" or tries >= budget:
            continue
        ms = int(s.args[0])
        while ms > 10 and tries < budget:
            shorter = steps[:i] + [Step("run", (str(ms // 2),))] + steps[i + 1 :]
            if not still_fails(script.with_steps(shorter)):
                break
            ms //= 2
            steps = shorter
    return script.with_steps(steps)


def counterexample_for(script: Script, adapter: str, prop: str, message: str, budget: int = 250) -> Counterexample:
    small = shrink(script, adapter, prop, budget)
    small = attrs.evolve(
        small,
        adapter=adapter,
        title=f"minimal counterexample: {prop}\nfound by seed {script.seed} ({len(script.steps)} steps, shrunk to {len(small.steps)})",
    )
    replay = execute(small, adapter, record_trace=True)
    violated = [prop] + sorted({r.violation.property for r in replay.violations} - {prop})
    small = small.with_steps(small.steps + tuple(Step("expect", ("violation", p)) for p in violated))
    return Counterexample(
        property=prop,
        message=message,
        script=small.render(),
        trace_jsonl=replay.cluster.trace_jsonl(),
        original_steps=len(script.steps),
        shrunk_steps=len(small.steps) - 1,
    )


def run_one(config: RunConfig, shrink_budget: int = 250) -> RunResult:
    """Run one seeded scenario against one adapter and judge every property."""
    started = time.perf_counter()
    scenario = get_scenario(config.scenario)
    script = scenario.generate(config)
    ex = execute(script, config.adapter, record_trace=False)
    cluster = ex.cluster
    implementation, version = cluster.target.implementation, cluster.target.version
    firsts: dict[str, object] = {}
    counts: Counter = Counter()
    for r in cluster.violations:
        counts[r.violation.property] += 1
        firsts.setdefault(r.violation.property, r)
    not_applicable = getattr(cluster, "not_applicable", set)()
    properties = tuple(
        PropertyVerdict(
            name,
            "not_applicable" if name in not_applicable and name not in counts
            else "fail" if name in counts else ("error" if ex.error else "pass"),
            counts.get(name, 0),
            firsts[name].step if name in firsts else None,
        )
        for name in scenario.properties
    )
    first = cluster.violations[0] if cluster.violations else None
    counterexample = None
    if first is not None:
        counterexample = counterexample_for(
            script, config.adapter, first.violation.property, first.violation.message, shrink_budget
        )
    verdict = "error" if ex.error else ("fail" if first else "pass")
    summary = cluster.run_summary()
    return RunResult(
        config=config,
        implementation=implementation,
        implementation_version=version,
        verdict=verdict,
        steps=cluster.sim.steps,
        simulated_ms=cluster.sim.now,
        wall_ms=(time.perf_counter() - started) * 1000.0,
        elections=summary.elections,
        leader_changes=summary.leader_changes,
        max_term=summary.max_term,
        first_violation=first.violation.property if first else None,
        first_violation_step=first.step if first else None,
        properties=properties,
        metrics=summary.metrics,
        coverage=tuple(Coverage(p, o, c) for (p, o), c in sorted(cluster.coverage.items())),
        counterexample=counterexample,
        error=ex.error,
    )


def plan_configs(
    campaign: str,
    runs: int,
    first_seed: int = 0,
    scenario: str = "dledger",
    adapters: Sequence[str] = ("reference",),
    profile: str | None = None,
    group_sizes: Sequence[int] = (3,),
    fault_mixes: Sequence[str] = ("mixed",),
    duration_ms: int = 30_000,
) -> Iterator[RunConfig]:
    """One RunConfig per (adapter, seed); group size and fault mix rotate with the seed."""
    sc = get_scenario(scenario)
    profile = sc.profile(profile)
    check_fault_mixes(fault_mixes)
    for adapter in adapters:
        for seed in range(first_seed, first_seed + runs):
            yield RunConfig(
                campaign=campaign,
                seed=seed,
                adapter=adapter,
                scenario=scenario,
                profile=profile,
                group_size=group_sizes[seed % len(group_sizes)],
                fault_mix=fault_mixes[(seed // len(group_sizes)) % len(fault_mixes)],
                duration_ms=duration_ms,
            )


def run_many(configs: Iterable[RunConfig]) -> Iterator[RunResult]:
    for c in configs:
        yield run_one(c)
