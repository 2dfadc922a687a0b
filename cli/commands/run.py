"""``rmqha run``: a seeded randomized campaign, as a Spark job, into a results directory."""
from __future__ import annotations

import argparse
import datetime as _dt
import shlex
import sys
from pathlib import Path

from cli.args import MAX_SEED, POSITIVE, SEED, Named, output_dir, plain_name, stream_name, whole
from conformance.campaign import DEFAULT_SHRINK, NO_SHRINK, ShrinkBudget
from conformance.errors import NotApplicable, UserError
from conformance.targets import check_applicable, combine_adapter_args, drives_another_process
from conformance.faults import DEFAULT_FAULT_MIXES
from conformance.scenarios.registry import SCENARIOS, get_scenario
from conformance.script import MAX_STEP_MS
from conformance.search import MAX_SEARCH_WAVES, SEARCH_CHUNKS, SEARCH_WAVES, default_waves
from results.spark import DEFAULT_MASTER

DEFAULTS = {"runs": 200, "out": "rmqha-results"}
MAX_RUNS = 100_000_000  # per adapter: months of one core; more is a typo, not a campaign
RUNS = whole(1, MAX_RUNS)
# a run's fault phase: at most an hour, as a script's step (a reference run simulates it in
# about a minute at most; a typo such as 999999999999 generated blocks for ever)
DURATION = whole(0, MAX_STEP_MS)


def add_campaign_arguments(p) -> None:
    p.add_argument("--adapter", action="append", default=None, metavar="SPEC",
                   help="implementation under test; repeat for several (one campaign, one report). "
                        "ROLE=SPEC names the implementation of one role (controller, broker), e.g. "
                        "--adapter broker=stdio:CMD --adapter controller=reference; a plain SPEC beside "
                        "them runs the other roles. Default: reference")
    p.add_argument("--scenario", default="dledger", metavar="NAME", action=Named,
                   help=f"scenario family: {', '.join(SCENARIOS)} (default: %(default)s)")
    # (a setting whose default is a value a user may also type notes that it was named:
    # --resume refuses it either way)
    p.set_defaults(scenario_named=False, runs_named=False, seed_named=False, duration_named=False)
    p.add_argument("--profile", default=None, help=f"spec profile to judge against: {profile_help()}")
    p.add_argument("--runs", type=RUNS, default=DEFAULTS["runs"], action=Named, help="runs per adapter (default: %(default)s)")
    p.add_argument("--seed", type=SEED, default=0, action=Named, help="first seed (default: %(default)s)")
    p.add_argument("--group-size", type=POSITIVE, action="append", default=None, metavar="N",
                   help=f"group sizes, rotated by seed (default: the scenario's: {group_size_help()})")
    p.add_argument("--fault-mix", action="append", default=None, metavar="MIX",
                   help="fault mixes, rotated by seed: none, crash, partition, lossy, mixed (default: all)")
    p.add_argument("--duration", type=DURATION, default=30_000, action=Named, metavar="MS",
                   help="simulated length of each run's fault phase (default: %(default)s ms)")
    p.add_argument("--chunk-size", type=POSITIVE, default=None, metavar="N",
                   help="runs per committed chunk (default: chosen from --runs)")
    p.add_argument("--master", default=DEFAULT_MASTER,
                   help="Spark master (default: %(default)s); a cluster URL runs the same job there")
    p.add_argument("--no-spark", action="store_true", help="run in this process instead of a Spark job")
    p.add_argument("--campaign", default=None, type=plain_name, metavar="NAME",
                   help="campaign name, one path component (default: derived from the time)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_shrink_arguments(p)
    p.add_argument("--no-search", action="store_true",
                   help="sample every run from its seed; by default most runs (80%%-95%%, by scenario) mutate runs "
                        "that reached new abstract protocol states (docs/scenarios.md)")
    p.add_argument("--search-waves", type=POSITIVE, default=None, metavar="N",
                   help="the search runs the chunks in N waves, each starting from what the earlier ones found "
                        f"(default: two chunks a wave, {SEARCH_WAVES} to {MAX_SEARCH_WAVES} waves; 1: every chunk "
                        "searches alone, all in parallel)")
    p.add_argument("--search-stream", type=stream_name, default=None, metavar="NAME",
                   help="another random stream for the search's own draws (which runs mutate, and their parents): "
                        "the same seeds searched differently, to tell a change of the search from its luck "
                        "(default: the search's own stream)")


def add_shrink_arguments(p) -> None:
    p.add_argument("--shrink-budget", default=None, metavar="REPLAYS[/SECONDS]",
                   help="most replays and wall seconds spent shrinking one counterexample (default: "
                        f"{DEFAULT_SHRINK.replays}/{DEFAULT_SHRINK.seconds:g}); shrinking starts after the "
                        "verdicts are committed")
    p.add_argument("--no-shrink", action="store_true",
                   help="keep each counterexample as generated, cut after the step that violated")


def shrink_budget_from(args) -> ShrinkBudget:
    if args.no_shrink:
        if args.shrink_budget is not None:
            raise UserError("--no-shrink and --shrink-budget contradict each other: give one")
        return NO_SHRINK
    if args.shrink_budget is None:
        return DEFAULT_SHRINK
    replays, _, seconds = args.shrink_budget.partition("/")
    try:
        budget = ShrinkBudget(int(replays), float(seconds) if seconds else DEFAULT_SHRINK.seconds)
    except ValueError:
        raise UserError(f"--shrink-budget {args.shrink_budget!r}: want REPLAYS or REPLAYS/SECONDS, "
                        f"e.g. {DEFAULT_SHRINK.replays}/{DEFAULT_SHRINK.seconds:g}") from None
    if not budget.enabled:
        raise UserError(f"--shrink-budget {args.shrink_budget!r}: replays and seconds must be positive "
                        f"(--no-shrink turns shrinking off)")
    return budget


def profile_help() -> str:
    """Each scenario's profiles, its default first (for ``--profile`` help)."""
    def listed(s) -> str:
        others = [p for p in s.profiles if p != s.default_profile]
        return ", ".join([f"{s.default_profile} (default)"] + others)

    return "; ".join(f"{s.name}: {listed(s)}" for s in SCENARIOS.values())


def group_size_help() -> str:
    """Each scenario's default group sizes (for ``--group-size`` help), in the order they rotate."""
    return "; ".join(f"{s.name} {', '.join(map(str, s.group_sizes))}" for s in SCENARIOS.values())


MAX_CHUNK = 20_000  # runs: about a quarter of an hour of one core, the most a kill may lose per core


def default_chunk_size(runs: int) -> int:
    """Runs per chunk: about eight chunks per adapter for small campaigns (every core busy,
    the progress bar moves), 100 runs for mid-sized ones (a kill loses little), and about
    a hundred chunks per adapter for large ones, because every chunk is a part file per
    table and reading thousands of small files costs Spark more than their rows (at
    3,000 chunks a count over 1M runs took 7 s, at 300 chunks under 1 s)."""
    return max(10, min(-(-runs // 8), max(100, -(-runs // 100)), MAX_CHUNK))


def search_chunk_size(runs: int) -> int:
    """Runs per chunk of a campaign that searches: as ``default_chunk_size``, but cut into
    at least ``SEARCH_CHUNKS`` chunks of 25 runs or more, so that the search has waves to
    learn in (1,000 dledger runs: 20 chunks of 50 in 10 waves reach 1.7-2.0x the states
    of sampling, 10 chunks of 100 in 4 waves 1.5-1.8x; docs/performance.md)."""
    return min(default_chunk_size(runs), max(25, runs // SEARCH_CHUNKS))


def campaign_name(parent: Path | None = None) -> str:
    """A name from the time (UTC, to the second), not yet taken under ``parent``."""
    name = _dt.datetime.now(_dt.timezone.utc).strftime("c%Y%m%dT%H%M%SZ")
    taken, n = name, 1
    while parent is not None and (parent / taken).exists():
        n += 1
        taken = f"{name}-{n}"
    return taken


def check_seed_range(first_seed: int, runs: int) -> None:
    """A campaign's seeds are int64 in the results tables: the last one too."""
    if first_seed + runs - 1 > MAX_SEED:
        raise UserError(f"--seed {first_seed} with --runs {runs} goes past the largest seed, {MAX_SEED}")


def campaign_spec_from(args):
    from conformance.spark_campaign import CampaignSpec

    if args.runs < 1:
        raise UserError("--runs must be at least 1")
    check_seed_range(args.seed, args.runs)
    chunk = args.chunk_size or (default_chunk_size(args.runs) if args.no_search else search_chunk_size(args.runs))
    budget = shrink_budget_from(args)
    adapters = applicable_adapters(combine_adapter_args(args.adapter or ("reference",), args.scenario), args.scenario,
                                   args.profile)
    return CampaignSpec(
        campaign=args.campaign or campaign_name(),
        scenario=args.scenario,
        adapters=adapters,
        runs=args.runs,
        first_seed=args.seed,
        profile=args.profile,
        group_sizes=tuple(args.group_size or get_scenario(args.scenario).group_sizes),
        fault_mixes=tuple(args.fault_mix or DEFAULT_FAULT_MIXES),
        duration_ms=args.duration,
        chunk_size=chunk,
        shrink_replays=budget.replays,
        shrink_seconds=budget.seconds,
        search=not args.no_search,
        search_waves=args.search_waves or default_waves(-(-args.runs // chunk)),
        search_stream=args.search_stream or "",
    )


def applicable_adapters(adapters, scenario: str, profile: str | None) -> tuple[str, ...]:
    """The adapters that can run ``scenario``; each one that cannot is named on stderr with
    the reason (not applicable), and none at all raises NotApplicable."""
    kept, reasons = [], []
    for adapter in adapters:
        try:
            check_applicable(scenario, adapter, profile)
        except NotApplicable as exc:
            reasons.append(exc)
            continue
        kept.append(adapter)
    if not kept:
        raise NotApplicable("; ".join(r.reason for r in reasons))
    for reason in reasons:
        print(f"rmqha: {reason} (skipped)", file=sys.stderr)
    return tuple(kept)


def register(sub) -> None:
    p = sub.add_parser(
        "run",
        help="run a seeded randomized campaign into a results directory (Spark job)",
        description="Run a campaign: every seed is one generated scenario run against each adapter, "
        "with every invariant checked after every step; failing runs are shrunk to minimal scripts. "
        "Results are Parquet datasets (docs/results-schema.md), committed chunk by chunk.",
    )
    add_campaign_arguments(p)
    p.add_argument("--out", default=None, metavar="DIR", type=output_dir,
                   help=f"results directory, new or empty (default: {DEFAULTS['out']}/<campaign name>, a new one "
                        f"per campaign, as rmqha check makes); --resume needs it")
    p.add_argument("--resume", action="store_true",
                   help="finish the interrupted campaign in --out with the settings of its manifest "
                        "(no run lost or duplicated); an adapter of the manifest that starts a process or loads "
                        "code (stdio:, python:, jvm:) runs only when --adapter names it again")
    p.add_argument("--use-manifest-adapters", action="store_true",
                   help="with --resume: run the manifest's adapters even if they start a process or load code "
                        "(stdio:, python:, jvm:); only for campaign directories you trust")
    p.set_defaults(func=run, setting_defaults={name: p.get_default(name) for name in SETTINGS})


# the campaign settings of the command line, each the manifest's field it is stored in
# (--resume takes them all from the manifest: giving one is an error)
SETTINGS = ("scenario", "profile", "runs", "seed", "group_size", "fault_mix", "duration", "chunk_size", "campaign",
            "shrink_budget", "no_shrink", "no_search", "search_waves", "search_stream")


def _whole_number(flag_type):
    """A manifest field checked as its flag checks its text: a JSON whole number first."""
    def check(value):
        if type(value) is not int:  # noqa: E721 - not a bool, not 2.5, not "4"
            raise UserError(f"{value!r} is not a whole number")
        try:
            return flag_type(str(value))
        except argparse.ArgumentTypeError as exc:
            raise UserError(str(exc)) from None
    return check


def _text(flag_type=None):
    def check(value):
        if not isinstance(value, str):
            raise UserError(f"{value!r} is not a string")
        try:
            return flag_type(value) if flag_type else value
        except argparse.ArgumentTypeError as exc:
            raise UserError(str(exc)) from None
    return check


def _list_of(check_one):
    def check(value):
        if not isinstance(value, list) or not value:
            raise UserError(f"{value!r} is not a non-empty list")
        return tuple(check_one(v) for v in value)
    return check


def _optional(check_one):
    return lambda value: None if value is None else check_one(value)


def _flag(value):
    if not isinstance(value, bool):
        raise UserError(f"{value!r} is not true or false")
    return value


# each field of a manifest's "spec", checked by the type of the flag that sets it
# (the rules that span fields, and the scenario's own, are conformance.spark_campaign.check_settings')
MANIFEST_FIELDS = {
    "campaign": _text(plain_name),
    "scenario": _text(),
    "adapters": _list_of(_text()),
    "runs": _whole_number(RUNS),
    "first_seed": _whole_number(SEED),
    "profile": _optional(_text()),
    "group_sizes": _list_of(_whole_number(POSITIVE)),
    "fault_mixes": _list_of(_text()),
    "duration_ms": _whole_number(DURATION),
    "chunk_size": _whole_number(POSITIVE),
    "search": _flag,
    "search_waves": _whole_number(POSITIVE),
    "search_stream": _text(lambda text: text and stream_name(text)),
}
REQUIRED_FIELDS = ("campaign", "scenario", "adapters", "runs")  # the others have defaults (older manifests)


def manifest_spec(args, out: str):
    """The settings of the campaign in ``out``, as its manifest stores them, each field
    checked as the flag that sets it is, and adapters that would start a process or
    load code only when the command line names them (rmqha starts nothing a file names)."""
    from conformance.spark_campaign import CampaignSpec
    from results.io import MANIFEST, read_manifest

    where = Path(out) / MANIFEST
    given = [name for name in SETTINGS if getattr(args, name) != args.setting_defaults[name]
             # named with its default's value (--scenario dledger on a controller campaign,
             # --runs 200 on one of 1000) is named all the same
             or getattr(args, f"{name}_named", False)]
    if given:
        raise UserError(f"--resume takes every campaign setting from {where}: leave out "
                        f"--{given[0].replace('_', '-')} (or use a new --out)")
    stored = read_manifest(out)["spec"]
    fields = {}
    for name, check in MANIFEST_FIELDS.items():
        if name not in stored:
            if name in REQUIRED_FIELDS:
                raise UserError(f"{where}: spec.{name} is missing")
            continue
        try:
            fields[name] = check(stored[name])
        except UserError as exc:
            raise UserError(f"{where}: spec.{name}: {exc}") from None
    replays, seconds = stored.get("shrink_replays", DEFAULT_SHRINK.replays), \
        stored.get("shrink_seconds", DEFAULT_SHRINK.seconds)
    if type(replays) is not int or type(seconds) not in (int, float):  # noqa: E721
        raise UserError(f"{where}: spec.shrink_replays, spec.shrink_seconds: {replays!r}, {seconds!r} "
                        f"are not a number of replays and of seconds")
    try:
        budget = shrink_budget_from(argparse.Namespace(no_shrink=replays == 0,
                                                       shrink_budget=None if replays == 0 else f"{replays}/{seconds}"))
        check_seed_range(fields.get("first_seed", 0), fields["runs"])
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    spec = CampaignSpec.from_json({**fields, "shrink_replays": budget.replays, "shrink_seconds": budget.seconds})
    _resumed_adapters(args, spec, where)
    return spec


def _resumed_adapters(args, spec, where: Path) -> None:
    """A resumed campaign runs adapters that start a process or load code (``stdio:``,
    ``python:``, ``jvm:``) only when the command line names them (``--adapter``) or says
    to use the manifest's (``--use-manifest-adapters``), as ``rmqha replay`` does a
    script's ``adapter`` line."""
    named = combine_adapter_args(args.adapter, spec.scenario) if args.adapter else []
    foreign = [a for a in named if a not in spec.adapters]
    if foreign:
        raise UserError(f"{where}: --resume finishes the campaign with its own adapters "
                        f"({', '.join(spec.adapters)}); --adapter {foreign[0]!r} is not one of them")
    unnamed = [a for a in spec.adapters if drives_another_process(a) and a not in named]
    if unnamed and not args.use_manifest_adapters:
        raise UserError(f"{where}: its adapters name {unnamed[0]!r}, which would start a process or load code: "
                        f"rmqha starts nothing a file names. To resume, pass it yourself: "
                        f"{' '.join(f'--adapter {shlex.quote(a)}' for a in unnamed)} (or --use-manifest-adapters)")


def execute_campaign(args, out: str) -> dict | int:
    """Run the campaign; a dead Spark job is one line on stderr and its exit status (3)."""
    from conformance.spark_campaign import CampaignJobFailed, run_campaign

    # --resume takes every campaign setting from the manifest it finishes
    spec = manifest_spec(args, out) if args.resume else campaign_spec_from(args)
    master = None if args.no_spark else args.master
    try:
        return run_campaign(out, spec, master=master, resume=args.resume, progress=not args.quiet)
    except CampaignJobFailed as exc:
        print(f"rmqha: error: {exc}", file=sys.stderr)
        return exc.exit_code


def run(args) -> int:
    if args.use_manifest_adapters and not args.resume:
        raise UserError("--use-manifest-adapters goes with --resume (a new campaign runs the adapters it is given)")
    if args.out is None:
        if args.resume:
            raise UserError("--resume needs --out DIR: the campaign directory to finish")
        # a new directory per campaign: a second 'rmqha run' (or one after 'rmqha check')
        # never meets the first one's results
        args.campaign = args.campaign or campaign_name(Path(DEFAULTS["out"]))
        args.out = str(Path(DEFAULTS["out"]) / args.campaign)
    summary = execute_campaign(args, args.out)
    if isinstance(summary, int):
        return summary
    print(f"{summary['runs']} runs in {summary['seconds']:.1f} s: {summary['fail']} failed, "
          f"{summary['error']} errored; {summary['committed_runs']} runs committed in {args.out}"
          + (f" ({summary['committed_fail']} failed, {summary['committed_error']} errored)"
             if summary["committed_runs"] != summary["runs"] else ""))
    # the campaign's committed verdicts, earlier sessions' too (--resume): 1 a property
    # violated; 3 no violation but runs the implementation failed (README's exit
    # statuses: an errored run is not a pass, and not a violation either)
    return 1 if summary["committed_fail"] else 3 if summary["committed_error"] else 0
