"""``rmqha mutants --scenario S``: does the suite kill every known-bad variant of S?

Mutation testing of the suite itself. A scenario's registry of known-bad variants
(``Scenario.mutants`` in conformance/scenarios/registry.py: name, upstream issue, description,
the invariant expected to catch it) names the mutants; each one runs as adapter
``mutant:NAME`` through the same seeded campaign runs as ``rmqha run`` (one generated
script per seed, every invariant checked after every step), seed after seed, and
stops at its first failing run, which is shrunk to a minimal replayable script.

Verdicts: KILLED (a run violated a property, and the reference passes that same run),
SURVIVED (no run failed within --runs), ERROR (the mutant raised instead of violating a
property). A failing run that the reference fails too proves nothing about the mutant:
it is counted as inconclusive, reported, and the search goes on.

Exit status: 0 when every selected mutant was killed, 1 when one survived or errored,
2 for bad input (unknown scenario or mutant).
"""
from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import attrs

from cli.args import POSITIVE, SEED, output_dir, output_file
from cli.commands.run import DURATION, group_size_help, profile_help
from conformance.scenarios.registry import SCENARIOS
from conformance.errors import UserError
from conformance.faults import DEFAULT_FAULT_MIXES, check_fault_mixes
from cli.commands.run import add_shrink_arguments, shrink_budget_from
from conformance import campaign
from conformance.campaign import DEFAULT_SHRINK, ShrinkBudget

DEFAULT_RUNS = 200
DEFAULT_DURATION_MS = 30_000


def register(sub) -> None:
    p = sub.add_parser(
        "mutants",
        help="mutation testing: run every known-bad variant of a scenario until the suite kills it",
        description=__doc__,
    )
    p.add_argument("--scenario", required=True, metavar="NAME",
                   help=f"scenario family whose mutant registry to run: "
                        f"{', '.join(n for n, s in SCENARIOS.items() if s.mutants)}")
    p.add_argument("--mutant", action="append", default=None, metavar="NAME",
                   help="run only this mutant; repeat for several (default: every mutant of the scenario)")
    p.add_argument("--runs", type=POSITIVE, default=DEFAULT_RUNS,
                   help="most runs (seeds) per mutant before it is declared SURVIVED (default: %(default)s)")
    p.add_argument("--seed", type=SEED, default=0, help="first seed (default: %(default)s)")
    p.add_argument("--profile", default=None, help=f"spec profile to judge against: {profile_help()}")
    p.add_argument("--group-size", type=POSITIVE, action="append", default=None, metavar="N",
                   help=f"group sizes, rotated by seed (default: the scenario's: {group_size_help()})")
    p.add_argument("--fault-mix", action="append", default=None, metavar="MIX",
                   help="fault mixes, rotated by seed: none, crash, partition, lossy, mixed (default: all)")
    p.add_argument("--duration-ms", "--duration", dest="duration_ms", type=DURATION, default=DEFAULT_DURATION_MS,
                   metavar="MS", help="simulated length of each run's fault phase (default: %(default)s ms)")
    p.add_argument("--out", default=None, metavar="FILE.json", type=output_file,
                   help="write a JSON summary to FILE.json (default: none written)")
    p.add_argument("--replay-dir", default=None, metavar="DIR", type=output_dir,
                   help="write each killing counterexample to DIR/<scenario>-<mutant>.rmqha (default: none written)")
    p.add_argument("--over-stdio", action="store_true",
                   help="run each mutant, and the reference it is compared with, as rmqha's reference served "
                        "over the stdio adapter protocol ('rmqha serve-stdio --mutant NAME', a subprocess): the "
                        "protocol path is then what must kill every mutant (default: in process)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_shrink_arguments(p)
    p.set_defaults(func=run)


def served_over_stdio(mutant: str | None) -> str:
    """The adapter spec of rmqha's reference (with ``mutant``) as a stdio subprocess."""
    command = [sys.executable, "-m", "cli", "serve-stdio"] + (["--mutant", mutant] if mutant else [])
    return "stdio:" + shlex.join(command)


# ---------------------------------------------------------------- one mutant


@attrs.frozen(slots=True)
class MutantOutcome:
    name: str
    issue: str | None
    description: str
    violates: str | None  # what the registry expects to catch it
    verdict: str  # KILLED, SURVIVED, ERROR
    killed_by: str | None  # the run's first violated property
    violated: tuple[str, ...]  # every property the killing run violated
    seed: int | None  # the killing (or erroring) seed
    runs: int  # runs used
    shrunk_steps: int | None
    original_steps: int | None
    seconds: float
    error: str | None
    config: dict | None  # the killing run's RunConfig
    script: str | None  # the shrunk counterexample (replayable .rmqha)
    inconclusive: tuple[tuple[int, str], ...]  # (seed, why) of failing runs the reference fails too

    @property
    def as_registered(self) -> bool | None:
        """Whether the registry's invariant is among those the killing run violated."""
        if self.verdict != "KILLED" or self.violates is None:
            return None
        return self.violates in self.violated


def hunt(info, configs, on_run=None, controls: dict | None = None,
         shrink: ShrinkBudget = DEFAULT_SHRINK, control_adapter: str = "reference") -> MutantOutcome:
    """Run ``configs`` (one per seed, adapter ``mutant:NAME``) until one fails where the
    reference (``control_adapter``) passes. ``controls`` caches the reference's verdict per
    run across mutants."""
    started = time.perf_counter()
    used = 0
    inconclusive: list[tuple[int, str]] = []
    controls = {} if controls is None else controls

    def outcome(verdict, **kw) -> MutantOutcome:
        fields = dict(killed_by=None, violated=(), seed=None, shrunk_steps=None, original_steps=None,
                      error=None, config=None, script=None)
        fields.update(kw)
        return MutantOutcome(info.name, info.issue, info.description, info.violates, verdict, runs=used,
                             seconds=time.perf_counter() - started, inconclusive=tuple(inconclusive), **fields)

    def reference_fails(config) -> str | None:
        """Why the reference fails this very run (so it proves nothing), or None."""
        key = attrs.evolve(config, adapter=control_adapter)
        if key not in controls:
            control = campaign.run_one(key)
            controls[key] = None if control.verdict == "pass" else (control.first_violation or control.error)
        return controls[key]

    for config in configs:
        used += 1
        try:
            # unshrunk first: a run the reference fails too is not worth shrinking
            result = campaign.run_one(config)
        except UserError:
            raise
        except Exception as exc:  # the run could not even be built or generated
            return outcome("ERROR", seed=config.seed, config=attrs.asdict(config),
                           error=f"{type(exc).__name__}: {exc}".splitlines()[0][:500])
        if on_run is not None:
            on_run()
        if result.first_violation is None and result.verdict != "error":
            continue
        why = reference_fails(config)
        if why is not None:
            inconclusive.append((config.seed, why))
            continue
        if result.first_violation is None:  # the mutant raised instead of violating a property
            return outcome("ERROR", seed=config.seed, config=attrs.asdict(config), error=result.error)
        # its counterexample, shrunk to a minimal script (or as generated, with --no-shrink)
        cx = next(iter(campaign.shrink_result(result, shrink, (result.first_violation,)) if shrink.enabled
                       else result.counterexamples), None)
        return outcome(
            "KILLED",
            killed_by=result.first_violation,
            violated=tuple(p.name for p in result.properties if p.verdict == "fail"),
            seed=config.seed,
            shrunk_steps=cx.shrunk_steps if cx else None,
            original_steps=cx.original_steps if cx else None,
            error=result.error,
            config=attrs.asdict(config),
            script=cx.script if cx else None,
        )
    return outcome("SURVIVED")


# ---------------------------------------------------------------- the command


def select(scenario, names: list[str] | None):
    registry = scenario.mutants
    if not registry:
        raise UserError(f"scenario {scenario.name!r} has no registered mutants")
    if not names:
        return registry
    by_name = {m.name: m for m in registry}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise UserError(f"unknown mutant {unknown[0]!r} for scenario {scenario.name} "
                        f"(known: {', '.join(by_name)})")
    return tuple(by_name[n] for n in dict.fromkeys(names))


def _replay_dir(args) -> Path | None:
    """``--replay-dir``, made (its flag's type has checked that it can be)."""
    if args.replay_dir is None:
        return None
    d = Path(args.replay_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--replay-dir {d}: {exc.strerror or exc}") from None
    return d


def run(args) -> int:
    from tabulate import tabulate
    from tqdm import tqdm

    from conformance.campaign import plan_configs
    from conformance.scenarios.registry import get_scenario

    scenario = get_scenario(args.scenario)
    selected = select(scenario, args.mutant)
    if args.runs < 1:
        raise UserError("--runs must be at least 1")
    if args.duration_ms < 0:
        raise UserError("--duration-ms must not be negative")
    check_fault_mixes(args.fault_mix or ())
    replay_dir = _replay_dir(args)
    shrink = shrink_budget_from(args)
    group_sizes = tuple(args.group_size or scenario.group_sizes)
    fault_mixes = tuple(args.fault_mix or DEFAULT_FAULT_MIXES)

    started = time.perf_counter()
    outcomes: list[MutantOutcome] = []
    controls: dict = {}  # the reference's verdict per run, shared by every mutant
    for k, info in enumerate(selected, 1):
        adapter = served_over_stdio(info.name) if args.over_stdio else f"mutant:{info.name}"
        configs = plan_configs("mutants", args.runs, args.seed, scenario.name, (adapter,),
                               args.profile, group_sizes, fault_mixes, args.duration_ms)
        # a bar per mutant (only on a terminal), a line per finished mutant (always, unless --quiet)
        bar = tqdm(total=args.runs, desc=f"[{k}/{len(selected)}] {info.name}", unit="run", leave=False,
                   file=sys.stderr, disable=True if args.quiet else None)
        try:
            o = hunt(info, configs, on_run=bar.update, controls=controls, shrink=shrink,
                     control_adapter=served_over_stdio(None) if args.over_stdio else "reference")
        finally:
            bar.close()
        outcomes.append(o)
        if not args.quiet:
            what = {"KILLED": f"KILLED by {o.killed_by} at seed {o.seed}", "SURVIVED": "SURVIVED",
                    "ERROR": f"ERROR at seed {o.seed}"}[o.verdict]
            also = f", {len(o.inconclusive)} failing runs the reference fails too" if o.inconclusive else ""
            print(f"[{k}/{len(selected)}] {info.name}: {what} ({o.runs} runs{also}, {o.seconds:.1f} s)",
                  file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started

    files: dict[str, str] = {}
    if replay_dir is not None:
        for o in outcomes:
            if o.verdict == "KILLED" and o.script is not None:
                path = replay_dir / f"{scenario.name}-{o.name}.rmqha"
                path.write_text(o.script if o.script.endswith("\n") else o.script + "\n", encoding="utf-8")
                files[o.name] = str(path)

    rows = []
    for o in outcomes:
        killed_by = o.killed_by or "-"
        if o.as_registered is False:
            killed_by += " *"
        rows.append([o.name, o.issue or "-", o.violates or "-", o.verdict, killed_by,
                     "-" if o.seed is None else o.seed, o.runs,
                     "-" if o.shrunk_steps is None else o.shrunk_steps, f"{o.seconds:.1f}"])
    print(tabulate(rows, headers=["mutant", "upstream issue", "violates", "verdict", "killed by", "seed", "runs",
                                  "shrunk steps", "seconds"]))
    if any(o.as_registered is False for o in outcomes):
        print("* the killing run did not violate the invariant the registry names")
    for o in outcomes:
        if o.verdict == "ERROR":
            print(f"{o.name}: {o.error}")
    reference_fails = sorted({(seed, why) for o in outcomes for seed, why in o.inconclusive})
    if reference_fails:
        print(f"warning: the reference itself fails {len(reference_fails)} of these runs, which count for no "
              f"mutant: " + ", ".join(f"seed {seed} ({why})" for seed, why in reference_fails))
    for name, path in files.items():
        print(f"rmqha replay {shlex.quote(path)}")
    counts = {v: sum(o.verdict == v for o in outcomes) for v in ("KILLED", "SURVIVED", "ERROR")}
    print(f"{len(outcomes)} mutants of {scenario.name}: {counts['KILLED']} killed, {counts['SURVIVED']} survived, "
          f"{counts['ERROR']} errors (at most {args.runs} runs each from seed {args.seed}; {seconds:.1f} s"
          f"{'; served over stdio' if args.over_stdio else ''})")

    if args.out is not None:
        summary = {
            "scenario": scenario.name,
            "runs": args.runs,
            "first_seed": args.seed,
            "profile": args.profile or scenario.default_profile,
            "group_sizes": list(group_sizes),
            "fault_mixes": list(fault_mixes),
            "duration_ms": args.duration_ms,
            "seconds": round(seconds, 3),
            "killed": counts["KILLED"],
            "survived": counts["SURVIVED"],
            "errors": counts["ERROR"],
            "reference_fails": [{"seed": seed, "why": why} for seed, why in reference_fails],
            "mutants": [
                {
                    "mutant": o.name, "issue": o.issue, "description": o.description, "violates": o.violates,
                    "verdict": o.verdict, "killed_by": o.killed_by, "violated": list(o.violated),
                    "as_registered": o.as_registered, "seed": o.seed, "runs": o.runs,
                    "shrunk_steps": o.shrunk_steps, "original_steps": o.original_steps,
                    "seconds": round(o.seconds, 3), "error": o.error, "config": o.config,
                    "script": o.script, "script_file": files.get(o.name),
                    "inconclusive": [{"seed": seed, "reference_fails": why} for seed, why in o.inconclusive],
                    "replay": f"rmqha replay {shlex.quote(files[o.name])}" if o.name in files else None,
                }
                for o in outcomes
            ],
        }
        try:
            Path(args.out).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--out {args.out}: {exc.strerror or exc}") from None
    if counts["KILLED"] == len(outcomes):
        return 0
    print(f"exit status 1: {why_not_all_killed(outcomes, args.runs)}", file=sys.stderr)
    return 1


def why_not_all_killed(outcomes, runs: int) -> str:
    """One line saying which mutants were not killed and what that means."""
    survived = [o.name for o in outcomes if o.verdict == "SURVIVED"]
    errored = [o.name for o in outcomes if o.verdict == "ERROR"]
    parts = []
    if survived:
        parts.append(f"{len(survived)} survived ({', '.join(survived)}): no property caught them in {runs} runs "
                     f"each, so a property is missing or --runs is too small")
    if errored:
        parts.append(f"{len(errored)} raised instead of violating a property ({', '.join(errored)}; messages above)")
    return "; ".join(parts) + " (docs/mutants.md)"
