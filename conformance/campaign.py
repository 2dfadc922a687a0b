"""Seeded randomized campaigns: one run = one generated scenario script, executed
against an adapter with every invariant checked after every step.

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

from conformance.errors import AdapterError, UserError
from results.runresult import Counterexample, Coverage, PropertyVerdict, RunConfig, RunResult
from conformance.scenarios.base import ExpectationFailed
from conformance.scenarios.dledger import DLedgerCluster
from conformance.scenarios.controller import build_controller, controller_outcomes, generate_controller_script
from conformance.scenarios.truncation import build_truncation, generate_truncation_script, truncation_outcomes
from spec.invariants import controller as controller_inv
from spec.invariants import truncation as truncation_inv
from conformance.script import Script, Step
from conformance.targets import dledger_target
from spec.dledger.candidate import CandidateAction
from spec.dledger.heartbeat import HEARTBEAT_OUTCOMES, HEARTBEAT_ROUND_OUTCOMES
from spec.dledger.log import PUSH_ROWS
from spec.dledger.profiles import DEFAULT_TIMING, Timing
from spec.dledger.records import ParseResult, VoteResult
from spec.invariants import dledger as dledger_inv
from spec.invariants import raft as raft_inv

FAULT_MIXES: dict[str, tuple[str, ...]] = {
    "none": (),
    "crash": ("crash", "crash-leader"),
    "partition": ("partition", "block", "isolate-leader"),
    "lossy": ("lossy",),
    "mixed": ("crash", "crash-leader", "partition", "block", "isolate-leader", "lossy"),
}


# ---------------------------------------------------------------- scenarios


@attrs.frozen(slots=True)
class MutantInfo:
    """One known-bad variant a scenario runs as adapter ``mutant:NAME`` (``rmqha mutants``)."""

    name: str
    issue: str | None  # the upstream issue or PR it reproduces; None for a synthetic one
    description: str
    violates: str | None  # the scenario invariant expected to catch it; None: none is recorded


def _no_mutants() -> tuple[MutantInfo, ...]:
    return ()


def _controller_mutants() -> tuple[MutantInfo, ...]:
    """reference/mutants_controller.py: each names the invariant that catches it."""
    from reference.mutants_controller import MUTANTS

    return tuple(MutantInfo(m.name, m.issue, m.description, m.violates) for m in MUTANTS.values())


@attrs.frozen(slots=True)
class Scenario:
    """What a campaign needs to know about one scenario family."""

    name: str
    default_profile: str
    properties: tuple[str, ...]
    outcomes: dict  # procedure -> every outcome the spec can produce (for coverage)
    generate: Callable[[RunConfig], Script]
    build: Callable[..., object]  # build(script, adapter, record_trace) -> cluster
    # the scenario's registry of known-bad variants, each runnable as adapter mutant:NAME
    mutants: Callable[[], tuple[MutantInfo, ...]] = _no_mutants
    group_sizes: tuple[int, ...] = (3, 5)  # group sizes its generator accepts, rotated by seed


def _dledger_mutants() -> tuple[MutantInfo, ...]:
    """reference/mutants.py; ``violates`` is the first of a mutant's ``breaks`` that is an
    invariant of the scenario (None for those only the fingerprint or a script shows)."""
    import re

    from reference.mutants import MUTANTS

    infos = []
    for m in MUTANTS.values():
        issue = re.search(r"(?:PR )?#\d+", m.description)
        infos.append(MutantInfo(
            name=m.name,
            issue=f"dledger {issue.group(0)}" if issue else None,
            description=m.description,
            violates=next((b for b in m.breaks if b in dledger_inv.INVARIANTS), None),
        ))
    return tuple(infos)


# what is known of each truncation variant (spec/proofs/truncation_model.py VARIANTS):
# (upstream issue, description, the scenario invariant its tests/scenarios/truncation
# counterexample breaks, or None when no campaign counterexample is recorded)
_TRUNCATION_VARIANT_NOTES: dict[str, tuple[str | None, str, str | None]] = {
    "epoch-only-match": (None, "entries match on epoch alone, ignoring the start offset "
                               "(equivalent inside the model: docs/truncation.md)", None),
    "max-of-end-offsets": (None, "the consistent point takes the max instead of the min of two end offsets",
                           "prefix-agreement"),
    "ascending-scan": (None, "entries are scanned by ascending epoch: the first match is the oldest",
                       "acknowledged-not-lost"),
    "end-off-by-one": (None, "an entry's end offset is one past the next entry's start", None),
    "equal-start-append": (None, "an epoch entry whose start equals the last start is appended",
                           "epoch-file-well-formed"),
    "label-switched-before-header": (None, "the last chunk of an epoch is labelled with the next epoch",
                                     "positions-covered"),
    "finite-end-after-suffix-truncation": (None, "suffix truncation leaves the survivor's old end", None),
    "upstream-empty-epoch": ("rocketmq PR #9942", "entries holding no data take part in the comparison "
                                                  "(upstream before PR #9942)", "handshake-progress"),
}


def _truncation_mutants() -> tuple[MutantInfo, ...]:
    from spec.proofs.truncation_model import VARIANTS

    infos = []
    for name, variant in VARIANTS.items():
        issue, description, violates = _TRUNCATION_VARIANT_NOTES.get(name, (None, variant.name(), None))
        infos.append(MutantInfo(name, issue, description, violates))
    return tuple(infos)


def _dledger_outcomes() -> dict[str, tuple[str, ...]]:
    return {
        "handle_vote": tuple(r.value for r in VoteResult if r is not VoteResult.UNKNOWN),
        "handle_heartbeat": HEARTBEAT_OUTCOMES,
        "candidate_round": tuple(a.value for a in CandidateAction if a is not CandidateAction.WAIT),
        "parse_vote_result": tuple(r.value for r in ParseResult),
        "heartbeat_round": HEARTBEAT_ROUND_OUTCOMES,
        "follower_timeout": ("TIMED_OUT",),
        "handle_push": PUSH_ROWS,
        "client_append": ("APPENDED", "NOT_LEADER"),
    }


def generate_dledger_script(config: RunConfig, timing: Timing = DEFAULT_TIMING) -> Script:
    """A random but seed-determined fault schedule, then healing and a liveness check."""
    if config.fault_mix not in FAULT_MIXES:
        raise UserError(f"unknown fault mix {config.fault_mix!r} (known: {', '.join(FAULT_MIXES)})")
    if not 1 <= config.group_size <= 9:
        raise UserError(f"group size must be between 1 and 9, not {config.group_size}")
    rng = random.Random(f"{config.seed}:plan")
    nodes = tuple(f"n{i}" for i in range(1, config.group_size + 1))
    faults = FAULT_MIXES[config.fault_mix]
    steps: list[Step] = [Step("run", (str(rng.randint(2000, 6000)),))]
    down: set[str] = set()
    elapsed = 0
    body = 0
    while elapsed < config.duration_ms:
        choice = rng.choice(faults + ("append", "append", "run", "run"))
        if choice == "crash":
            up = [n for n in nodes if n not in down]
            if down and rng.random() < 0.5:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
            elif up:
                n = rng.choice(up)
                down.add(n)
                steps.append(Step("crash", (n,)))
        elif choice == "crash-leader":
            # an unknown number of nodes may be down after this: restart one first
            if down:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
            steps.append(Step("crash-leader"))
            steps.append(Step("run", (str(rng.randint(50, 3000)),)))
            steps.append(Step("restart-all"))
            down.clear()
        elif choice == "isolate-leader":
            steps.append(Step("isolate-leader"))
            body += 1
            steps.append(Step("append-leader", (f"m{body}",)))
        elif choice == "partition" and len(nodes) > 1:
            shuffled = list(nodes)
            rng.shuffle(shuffled)
            cut = rng.randint(1, len(nodes) - 1)
            steps.append(Step("partition", tuple(shuffled[:cut]) + ("|",) + tuple(shuffled[cut:])))
        elif choice == "block" and len(nodes) > 1:
            a, b = rng.sample(nodes, 2)
            steps.append(Step("block", (a, b)))
        elif choice == "lossy":
            if rng.random() < 0.5:
                drop = rng.choice(("0.05", "0.2", "0.5"))
                steps.append(Step("net", (f"1..{rng.choice((20, 100, 400))}", f"drop={drop}", "dup=0.05")))
            else:
                steps.append(Step("net", ("default",)))
        elif choice == "append":
            body += 1
            if rng.random() < 0.25:  # clients sometimes reach a node that does not lead
                steps.append(Step("append", (rng.choice(nodes), f"m{body}")))
            else:
                steps.append(Step("append-leader", (f"m{body}",)))
        if choice in ("partition", "block", "isolate-leader") and rng.random() < 0.3:
            steps.append(Step("heal"))
        ms = rng.randint(100, 4000)
        steps.append(Step("run", (str(ms),)))
        elapsed += ms
    # the last fault heals: everything restarts, the network is clean
    steps.append(Step("heal"))
    steps.append(Step("restart-all"))
    steps.append(Step("net", ("default",)))
    steps.append(Step("await-leader"))
    for i in range(3):
        body += 1
        steps.append(Step("append-leader", (f"m{body}",)))
    steps.append(Step("run", ("3000",)))
    return Script(
        scenario="dledger",
        nodes=nodes,
        seed=config.seed,
        profile=config.profile,
        adapter=config.adapter,
        start_spread_ms=1000,
        steps=tuple(steps),
    )


def build_dledger(script: Script, adapter: str, record_trace: bool = True, timing: Timing = DEFAULT_TIMING):
    target = dledger_target(adapter, script.profile, timing)
    return DLedgerCluster(script, target, timing, record_trace)


def build_raft(script: Script, adapter: str, record_trace: bool = True):
    from conformance.scenarios.raft import RaftCluster
    from conformance.targets import raft_target

    return RaftCluster(script, raft_target(adapter), record_trace)


def generate_raft_script(config: RunConfig) -> Script:
    """The DLedger fault schedules (their steps are generic Raft steps), for a ``raft`` group."""
    return attrs.evolve(generate_dledger_script(config), scenario="raft")


SCENARIOS: dict[str, Scenario] = {
    "dledger": Scenario(
        name="dledger",
        default_profile="dledger-0.4",
        properties=tuple(dledger_inv.INVARIANTS),
        outcomes=_dledger_outcomes(),
        generate=generate_dledger_script,
        build=build_dledger,
        mutants=_dledger_mutants,
    ),
    "raft": Scenario(
        name="raft",
        default_profile="raft",
        properties=tuple(raft_inv.INVARIANTS),
        outcomes={},  # the implementation's decisions are opaque: only invariants are judged
        generate=generate_raft_script,
        build=build_raft,
    ),
    "truncation": Scenario(
        name="truncation",
        default_profile="rocketmq-5.1",
        properties=tuple(truncation_inv.INVARIANTS),
        outcomes=truncation_outcomes(),
        generate=lambda config: generate_truncation_script(config, FAULT_MIXES),
        build=build_truncation,
        mutants=_truncation_mutants,
        group_sizes=(2, 3),
    ),
    "controller": Scenario(
        name="controller",
        default_profile="rocketmq-5.1",
        properties=tuple(controller_inv.INVARIANTS),
        outcomes=controller_outcomes(),
        generate=lambda config: generate_controller_script(config, FAULT_MIXES),
        build=build_controller,
        mutants=_controller_mutants,
        group_sizes=(3, 2),
    ),
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UserError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})") from None


# ---------------------------------------------------------------- execution


@attrs.frozen(slots=True)
class Execution:
    cluster: object
    error: str | None  # the implementation failed (exception); one line

    @property
    def violations(self):
        return self.cluster.violations


def execute(script: Script, adapter: str | None = None, record_trace: bool = True) -> Execution:
    """Build the cluster for ``script`` and run every step. UserError propagates."""
    scenario = get_scenario(script.scenario)
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
    for mix in fault_mixes:
        if mix not in FAULT_MIXES:
            raise UserError(f"unknown fault mix {mix!r} (known: {', '.join(FAULT_MIXES)})")
    for adapter in adapters:
        for seed in range(first_seed, first_seed + runs):
            yield RunConfig(
                campaign=campaign,
                seed=seed,
                adapter=adapter,
                scenario=scenario,
                profile=profile or sc.default_profile,
                group_size=group_sizes[seed % len(group_sizes)],
                fault_mix=fault_mixes[(seed // len(group_sizes)) % len(fault_mixes)],
                duration_ms=duration_ms,
            )


def run_many(configs: Iterable[RunConfig]) -> Iterator[RunResult]:
    for c in configs:
        yield run_one(c)
