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

import random
import time
from collections import Counter
from typing import Callable, Iterable, Iterator, Sequence

import attrs

from adapters import placement
from adapters.remote_node import RemoteNode
from conformance.errors import AdapterError, UserError
from conformance.faults import check_fault_mixes
from conformance.scenarios.base import ExpectationFailed
from conformance.scenarios.registry import Scenario, get_scenario
from conformance.script import Script, Step
from conformance.targets import drives_another_process
from results.runresult import Counterexample, Coverage, Metric, PropertyVerdict, RunConfig, RunResult


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


def execute(script: Script, adapter: str | None = None, record_trace: bool = True,
            until: Callable[[object], bool] | None = None, step_sink=None,
            halt_after_violation_ms: int | None = None) -> Execution:
    """Build the cluster for ``script`` and run its steps (all, or until ``until(cluster)``
    holds after one, or until ``halt_after_violation_ms`` of simulated time after the
    first violation). UserError propagates.

    ``step_sink(event)`` receives every node step (``spec.steps.StepEvent``), for a
    scenario that judges steps (``dledger``); others refuse it.
    """
    scenario = get_scenario(script.scenario)
    check_expectations(script, scenario)
    adapter = adapter or script.adapter or "reference"
    with placement.colocated(drives_another_process(adapter)):
        return _execute(scenario, script, adapter, record_trace, until, step_sink, halt_after_violation_ms)


def _execute(scenario, script, adapter, record_trace, until, step_sink, halt_after_violation_ms) -> Execution:
    cluster = scenario.build(script, adapter, record_trace)
    if step_sink is not None:
        if not hasattr(cluster, "step_sink"):
            raise UserError(f"scenario {script.scenario} does not record node steps (dledger does)")
        cluster.step_sink = step_sink
    cluster.halt_after_violation_ms = halt_after_violation_ms
    error = None
    try:
        cluster.execute(script.steps, until)
    except (UserError, ExpectationFailed):
        raise
    except AdapterError as exc:
        error = str(exc)
    except Exception as exc:  # the implementation under test blew up
        error = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
    finally:
        cluster.finish()
    return Execution(cluster, error)


@attrs.frozen(slots=True)
class ShrinkBudget:
    """How much one counterexample may cost to shrink: replays and wall seconds.

    Shrinking stops at whichever runs out first and keeps the smallest script found so
    far; ``NO_SHRINK`` keeps the generated script, cut after the step that violated.
    """

    replays: int = 200
    seconds: float = 20.0

    def __attrs_post_init__(self):
        if self.replays < 0 or self.seconds < 0:
            raise UserError("the shrink budget (replays, seconds) must not be negative")

    @property
    def enabled(self) -> bool:
        return self.replays > 0 and self.seconds > 0


DEFAULT_SHRINK = ShrinkBudget()
# A campaign's run stops this long (simulated ms) after its first violation: long
# enough for what the same fault breaks at once to be seen (most bugs break several
# properties within a few rounds), short enough that a buggy implementation, which
# often churns (two leaders pushing, a livelock of retries) at many times the event
# rate of a correct one, does not make a failing campaign cost a multiple of a passing
# one. Its properties not violated by then count as holding up to the halt
# (docs/reports.md); ``rmqha replay`` of its script runs every step.
HALT_AFTER_VIOLATION_MS = 2_000
NO_SHRINK = ShrinkBudget(0, 0.0)


def _until_violated(prop: str) -> Callable[[object], bool]:
    return lambda cluster: any(r.violation.property == prop for r in cluster.violations)


def _first_violation(script: Script, adapter: str, prop: str):
    """Replay ``script`` until ``prop`` is violated; the recorded violation, or None."""
    try:
        ex = execute(script, adapter, record_trace=False, until=_until_violated(prop))
    except (UserError, ExpectationFailed):
        return None
    return next((r for r in ex.violations if r.violation.property == prop), None)


def cut_after(script: Script, step: int) -> Script:
    """The script up to and including step ``step``: what comes later cannot matter."""
    return script.with_steps(script.steps[: step + 1])


def shrink(script: Script, adapter: str, prop: str, budget: ShrinkBudget = DEFAULT_SHRINK) -> Script:
    """Delta-debug the steps (then the run lengths) while ``prop`` stays violated.

    Every candidate is replayed only until ``prop`` is violated, and a candidate that
    still fails is cut after the violating step, so replays get shorter as the script
    does. A candidate met before is not replayed again (a replay is deterministic; the
    passes at one chunk size meet the same candidates again after a removal elsewhere).
    Stops when the budget's replays or seconds run out.
    """
    deadline = time.perf_counter() + budget.seconds
    tries = 0
    judged: dict[tuple, list[Step] | None] = {}

    def spent() -> bool:
        return tries >= budget.replays or time.perf_counter() >= deadline

    def still_fails(candidate: list[Step]) -> list[Step] | None:
        nonlocal tries
        key = tuple((s.op, s.args) for s in candidate)
        if key not in judged:
            tries += 1
            hit = _first_violation(script.with_steps(candidate), adapter, prop)
            judged[key] = None if hit is None else candidate[: hit.step + 1]
        return judged[key]

    steps = list(script.steps)
    chunk = max(1, len(steps) // 2)
    while chunk >= 1 and not spent():
        i = 0
        removed = False
        while i < len(steps) and not spent():
            candidate = steps[:i] + steps[i + chunk :]
            kept = still_fails(candidate) if candidate else None
            if kept is not None:
                steps = kept
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
    if merged != steps and not spent():
        kept = still_fails(merged)
        if kept is not None:
            steps = kept
    i = 0
    while i < len(steps):
        s = steps[i]
        ms = int(s.args[0]) if s.op == "run" else 0
        while ms > 10 and not spent():
            kept = still_fails(steps[:i] + [Step("run", (str(ms // 2),))] + steps[i + 1 :])
            if kept is None:
                break
            ms //= 2
            steps = kept
        i += 1
    return script.with_steps(steps)


def preceded_by(recorded: Sequence, prop: str) -> tuple[str | None, int | None]:
    """The property violated first among ``recorded`` (a run's violations, in the order
    they happened), when that was strictly earlier in simulated time than ``prop``'s
    first violation, and how many simulated ms earlier; (None, None) when nothing came
    before it. Violations at the same moment are the same step's, none the other's
    consequence."""
    mine = next(r for r in recorded if r.violation.property == prop)
    first = recorded[0]
    if first.time < mine.time:
        return first.violation.property, mine.time - first.time
    return None, None


def _counterexample(script: Script, adapter: str, prop: str, original_steps: int, shrunk: bool,
                    found_by: int) -> Counterexample | None:
    """Replay ``script`` with its trace, and write it down with an ``expect`` line for
    every property it violates; the message is the replay's own (what the shown
    script does), not the original run's. None if the replay does not violate ``prop``
    (an implementation that is not deterministic: its run's own script stands)."""
    found = _counterexamples(script, adapter, prop, (), original_steps, shrunk, found_by)
    return found[0] if found else None


def _counterexamples(script: Script, adapter: str, prop: str, others: Iterable[str], original_steps: int,
                     shrunk: bool, found_by: int) -> tuple[Counterexample, ...]:
    """``_counterexample`` for ``prop``, and from the same replay for each of ``others``
    the script also violates (titled as shrunk for ``prop``); empty if the replay does
    not violate ``prop``."""
    replay = execute(script, adapter, record_trace=True)
    messages: dict[str, str] = {}
    for r in replay.violations:
        messages.setdefault(r.violation.property, r.violation.message)
    if prop not in messages:
        return ()
    violated = [prop] + sorted(set(messages) - {prop})
    trace = replay.cluster.trace_jsonl()
    what = "minimal counterexample" if shrunk else "counterexample (not shrunk)"
    how = (f", shrunk to {len(script.steps)})" if shrunk
           else f", cut after the violating step: {len(script.steps)})")
    found = []
    for p in [prop] + [o for o in others if o in messages and o != prop]:
        title = (f"{what}: {p}\nfound by seed {found_by} ({original_steps} steps{how}" if p == prop else
                 f"counterexample: {p}\nfound by seed {found_by} ({original_steps} steps{how[:-1]} while "
                 f"shrinking for {prop})")
        titled = attrs.evolve(script, adapter=adapter, title=title)
        titled = titled.with_steps(titled.steps + tuple(Step("expect", ("violation", v)) for v in violated))
        before, gap = preceded_by(replay.violations, p)
        found.append(Counterexample(property=p, message=messages[p], script=titled.render(), trace_jsonl=trace,
                                    original_steps=original_steps, shrunk_steps=len(script.steps), shrunk=shrunk,
                                    preceded_by=before, preceded_by_ms=gap))
    return tuple(found)


def shrink_shared(script: Script, adapter: str, prop: str, others: Iterable[str], budget: ShrinkBudget,
                  found_by: int, original_steps: int) -> tuple[Counterexample, ...]:
    """Shrink ``script`` (a failing run's script, cut after the step that violated
    ``prop``) within ``budget`` for ``prop``; the shrunk script is the counterexample of
    ``prop`` and of each of ``others`` it still violates, so one shrink serves every
    property one bug breaks. Empty if the shrunk script no longer violates ``prop``
    on its replay (an implementation that is not deterministic)."""
    if budget.enabled:
        script = shrink(script, adapter, prop, budget)
    return _counterexamples(script, adapter, prop, others, original_steps, budget.enabled, found_by)


def counterexample_for(script: Script, adapter: str, prop: str, budget: ShrinkBudget = DEFAULT_SHRINK,
                       first_step: int | None = None) -> Counterexample | None:
    """The counterexample of one violated property: cut after the step that violated it
    (``first_step``, when known), then shrunk within ``budget``, then replayed once
    with its trace."""
    original = len(script.steps)
    if first_step is not None:
        script = cut_after(script, first_step)
    if budget.enabled:
        script = shrink(script, adapter, prop, budget)
    return _counterexample(script, adapter, prop, original, budget.enabled, script.seed)


def unshrunk_counterexample(script: Script, adapter: str, recorded: Sequence, prop: str) -> Counterexample:
    """What a run knows of a violated property without replaying anything: the script
    cut after the violating step, the run's own message, no trace (campaigns write
    these with the verdicts; shrinking replaces them later)."""
    hit = next(r for r in recorded if r.violation.property == prop)
    cut = cut_after(script, hit.step)
    violated = [prop] + sorted({r.violation.property for r in recorded if r.step <= hit.step} - {prop})
    titled = attrs.evolve(cut, adapter=adapter, title=(
        f"counterexample (not shrunk): {prop}\nfound by seed {script.seed} ({len(script.steps)} steps, "
        f"cut after the violating step: {len(cut.steps)})"))
    titled = titled.with_steps(titled.steps + tuple(Step("expect", ("violation", p)) for p in violated))
    before, gap = preceded_by(recorded, prop)
    return Counterexample(prop, hit.violation.message, titled.render(), "", len(script.steps), len(cut.steps),
                          shrunk=False, preceded_by=before, preceded_by_ms=gap)


def script_for(config: RunConfig) -> Script:
    """The script of a run: generated from its seed, or, for a run of the search, its
    ancestors' script (generated from ``origin[0]`` with the lineage's first group size,
    ``RunConfig.origin_group_size``) mutated once per later ancestor and once by its own
    seed; a mutation may resize the group, so the result names the nodes it runs."""
    scenario = get_scenario(config.scenario)
    if not config.origin:
        return scenario.generate(config)
    if scenario.mutate is None:
        raise UserError(f"scenario {config.scenario!r} has no mutations, so no run of it can have an origin "
                        f"({'>'.join(map(str, config.origin))})")
    script = scenario.generate(attrs.evolve(config, seed=config.origin[0], origin=(), group_size=config.root_group_size,
                                            origin_group_size=None))
    for seed in config.origin[1:] + (config.seed,):
        script = scenario.mutate(script, random.Random(f"{seed}:mutate"), config)
    return attrs.evolve(script, seed=config.seed)


def run_one(config: RunConfig, shrink_budget: ShrinkBudget = NO_SHRINK) -> RunResult:
    """Run one seeded scenario against one adapter and judge every property.

    Every violated property gets a counterexample: the generated script cut after the
    step that first violated it, shrunk within ``shrink_budget`` (campaigns run with
    ``NO_SHRINK`` and shrink after the verdicts are committed: ``shrink_result``).
    """
    started = time.perf_counter()
    scenario = get_scenario(config.scenario)
    script = script_for(config)
    ex = execute(script, config.adapter, record_trace=False, halt_after_violation_ms=HALT_AFTER_VIOLATION_MS)
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
    counterexamples = tuple(
        (shrink_budget.enabled and counterexample_for(script, config.adapter, prop, shrink_budget, r.step))
        or unshrunk_counterexample(script, config.adapter, cluster.violations, prop)
        for prop, r in firsts.items()
    )
    verdict = "error" if ex.error else ("fail" if first else "pass")
    summary = cluster.run_summary()
    sim = cluster.sim
    return RunResult(
        config=config,
        implementation=implementation,
        implementation_version=version,
        verdict=verdict,
        steps=sim.steps,
        simulated_ms=sim.now,
        wall_ms=(time.perf_counter() - started) * 1000.0,
        elections=summary.elections,
        leader_changes=summary.leader_changes,
        max_term=summary.max_term,
        first_violation=first.violation.property if first else None,
        first_violation_step=first.step if first else None,
        properties=properties,
        metrics=tuple(summary.metrics) + deadline_metric(sim),
        coverage=tuple(Coverage(p, o, c) for (p, o), c in sorted(cluster.coverage.items())),
        counterexamples=counterexamples,
        error=ex.error,
    )


def deadline_metric(sim) -> tuple[Metric, ...]:
    """``answers_without_deadline_percent``: the share of the run's node answers (an
    outside implementation's) that gave no ``next_deadline``, so the node was ticked every
    10 ms; none for rmqha's own in-process nodes (they always give one)."""
    remote = [n for n in sim.incarnations() if isinstance(n, RemoteNode)]
    answers = sum(n.answers for n in remote)
    if not answers:
        return ()
    return (Metric("answers_without_deadline_percent",
                   100.0 * (answers - sum(n.answers_with_deadline for n in remote)) / answers),)


def shrink_result(result: RunResult, budget: ShrinkBudget = DEFAULT_SHRINK,
                  properties: Iterable[str] | None = None) -> tuple[Counterexample, ...]:
    """Shrunk counterexamples for a run's violated properties (all, or ``properties``):
    the run's script is generated again from its seed, cut after the violating step
    and shrunk within ``budget`` each."""
    wanted = set(properties) if properties is not None else None
    config = result.config
    script = script_for(config)
    firsts = {p.name: p.first_step for p in result.properties if p.verdict == "fail"}
    found = (
        counterexample_for(script, config.adapter, prop, budget, step)
        for prop, step in sorted(firsts.items(), key=lambda kv: (kv[1] if kv[1] is not None else 1 << 30, kv[0]))
        if wanted is None or prop in wanted
    )
    return tuple(x for x in found if x is not None)


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
