"""``rmqha run``: a seeded randomized campaign, as a Spark job, into a results directory."""
from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

from cli.args import NON_NEGATIVE, POSITIVE, SEED, output_dir, plain_name, stream_name
from conformance.campaign import DEFAULT_SHRINK, NO_SHRINK, ShrinkBudget
from conformance.errors import NotApplicable, UserError
from conformance.targets import check_applicable, combine_adapter_args
from conformance.faults import DEFAULT_FAULT_MIXES
from conformance.scenarios.registry import SCENARIOS, get_scenario
from conformance.search import MAX_SEARCH_WAVES, SEARCH_CHUNKS, SEARCH_WAVES, default_waves
from results.spark import DEFAULT_MASTER

DEFAULTS = {"runs": 200, "out": "rmqha-results"}


def add_campaign_arguments(p) -> None:
    p.add_argument("--adapter", action="append", default=None, metavar="SPEC",
                   help="implementation under test; repeat for several (one campaign, one report). "
                        "ROLE=SPEC names the implementation of one role (controller, broker), e.g. "
                        "--adapter broker=stdio:CMD --adapter controller=reference; a plain SPEC beside "
                        "them runs the other roles. Default: reference")
    p.add_argument("--scenario", default="dledger", metavar="NAME",
                   help=f"scenario family: {', '.join(SCENARIOS)} (default: %(default)s)")
    p.add_argument("--profile", default=None, help=f"spec profile to judge against: {profile_help()}")
    p.add_argument("--runs", type=POSITIVE, default=DEFAULTS["runs"], help="runs per adapter (default: %(default)s)")
    p.add_argument("--seed", type=SEED, default=0, help="first seed (default: %(default)s)")
    p.add_argument("--group-size", type=POSITIVE, action="append", default=None, metavar="N",
                   help=f"group sizes, rotated by seed (default: the scenario's: {group_size_help()})")
    p.add_argument("--fault-mix", action="append", default=None, metavar="MIX",
                   help="fault mixes, rotated by seed: none, crash, partition, lossy, mixed (default: all)")
    p.add_argument("--duration", type=NON_NEGATIVE, default=30_000, metavar="MS",
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


def campaign_spec_from(args):
    from conformance.spark_campaign import CampaignSpec

    if args.runs < 1:
        raise UserError("--runs must be at least 1")
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
                        "(no run lost or duplicated)")
    p.set_defaults(func=run)


def execute_campaign(args, out: str) -> dict | int:
    """Run the campaign; a dead Spark job is one line on stderr and its exit status (3)."""
    from conformance.spark_campaign import CampaignJobFailed, run_campaign

    # --resume takes every campaign setting from the manifest it finishes
    spec = None if args.resume else campaign_spec_from(args)
    master = None if args.no_spark else args.master
    try:
        return run_campaign(out, spec, master=master, resume=args.resume, progress=not args.quiet)
    except CampaignJobFailed as exc:
        print(f"rmqha: error: {exc}", file=sys.stderr)
        return exc.exit_code


def run(args) -> int:
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
          f"{summary['error']} errored; {summary['committed_runs']} runs committed in {args.out}")
    # 1 a property violated; 3 no violation but runs the implementation failed (README's
    # exit statuses: an errored run is not a pass, and not a violation either)
    return 1 if summary["fail"] else 3 if summary["error"] else 0
