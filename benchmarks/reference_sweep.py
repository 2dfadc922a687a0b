"""Long default campaigns of every scenario, failing on any run that does not pass.

A run of the reference that fails is a defect of rmqha (a rule, a monitor or a checker
that cannot tell a correct implementation from a wrong one), whatever else a benchmark
measures. The default campaign of 200 runs rarely reaches the corners where such defects
hide; a searched campaign of 1,000 runs does (sessions 15 and 16 found a dozen that way:
docs/dledger.md "Committed entries lost to a late TRUNCATE", docs/controller-stack.md
"Findings" 4). This benchmark runs, per scenario and first seed, the campaign
``rmqha run --no-spark --no-shrink --scenario S --seed F --runs N`` runs (its default
search, group sizes and fault mixes), and prints per campaign the failing and erroring
runs against the target (none), the runs showing each documented finding, and the CPU and
wall seconds. It exits 1 when any run failed or errored, naming each (seed, what it
violated) and where its results are kept, with the command that builds their report
(each counterexample's script and replay command). ``--shrink REPLAYS[/SECONDS]`` then
shrinks each failing run's first counterexample within that budget (as ``rmqha run
--shrink-budget`` would have) into ``shrunk/`` beside its results and prints the
``rmqha replay`` command of each: the start of the regression script a fix adds.
``--streams b,c`` runs each (scenario, first seed) again with those random streams of
the search (``rmqha run --search-stream``): the same seeds, other lineages, so other
corners (session 19's seed 5980 came from a search whose draws differed).
``--reached FILE`` adds the node states each campaign reached to FILE
(``conformance/scenarios/reference_reached.json`` is the one reports set a campaign's
coverage against: the node states the reference reaches, conformance/scenarios/reached.py),
with a line naming the sweep; only campaigns of the reference in which every run passed add theirs.

    python benchmarks/reference_sweep.py [--scenarios dledger,controller,classic,truncation]
        [--runs 1000] [--seeds 0,5000] [--streams own,b,c] [--adapter reference] [--out DIR]
        [--shrink 3000/300] [--reached conformance/scenarios/reference_reached.json]

About 25 minutes of 2 cores for the four scenarios at one first seed and 1,000 runs: a
nightly job, not CI's. ``raft`` is not in the default list: the reference is DLedger
seen as a Raft node there, and runs that fail only the differences the campaign knew of
(its hello says its raft nodes are DLedger nodes: commit-monotonic, follower-progress,
docs/dledger.md) are counted as the verdict counts them (``reports.build.known_difference``):
not failing, shown in the findings column as ``known difference NAME``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cli.args import stream_name  # noqa: E402
from cli.commands.run import search_chunk_size, shrink_budget_from  # noqa: E402
from conformance.campaign import ShrinkBudget, counterexample_for  # noqa: E402
from conformance.errors import UserError  # noqa: E402
from conformance.script import parse_script  # noqa: E402
from conformance.scenarios.reached import add_reached, read_reached  # noqa: E402
from conformance.scenarios.registry import SCENARIOS, get_scenario  # noqa: E402
from conformance.search import default_waves  # noqa: E402
from conformance.spark_campaign import CampaignSpec, run_campaign  # noqa: E402
from conformance.targets import rmqha_version  # noqa: E402
from reports.build import FINDING_PREFIX, known_difference  # noqa: E402
from results import io  # noqa: E402
from results.schema import ABSTRACT_STATE  # noqa: E402

DEFAULT_SCENARIOS = ("dledger", "controller", "classic", "truncation")
TARGET_FAILING = 0


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def source_commit() -> str:
    """`` at COMMIT`` of the code this sweep runs, when it runs from a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return f" at {done.stdout.strip()}" if done.returncode == 0 and done.stdout.strip() else ""


def cpu_seconds() -> float:
    """This process's CPU seconds and its finished children's (an implementation over stdio)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def sweep(scenario: str, first_seed: int, args, out: Path,
          stream: str = "") -> tuple[list[tuple[int, str, str]], Counter, float, float]:
    """One campaign as ``rmqha run --no-spark --no-shrink [--search-stream STREAM]`` runs
    it: its runs that did not pass (seed, verdict, what), the runs showing each finding,
    CPU and wall seconds."""
    chunk = search_chunk_size(args.runs)
    spec = CampaignSpec("sweep", scenario, (args.adapter,), runs=args.runs, first_seed=first_seed, chunk_size=chunk,
                        group_sizes=get_scenario(scenario).group_sizes, search=True,
                        search_waves=default_waves(-(-args.runs // chunk)), shrink_replays=0, shrink_seconds=0.0,
                        search_stream=stream)
    cpu, wall = cpu_seconds(), time.perf_counter()
    run_campaign(out, spec, master=None, progress=False)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    manifest = io.read_manifest(out)
    bad, findings = [], Counter()
    for r in io.read_table(out, "runs").to_pylist():
        failed = r["failed_properties"] or ()
        if r["verdict"] == "fail" and failed and \
                all(known_difference(manifest, r["adapter"], r["profile"], p) for p in failed):
            findings.update(f"known difference {p}" for p in failed)  # reported, not counted (as the verdict)
        elif r["verdict"] != "pass":
            bad.append((r["seed"], r["verdict"], ", ".join(failed) or r["error"] or r["verdict"]))
    findings.update(r["metric"][len(FINDING_PREFIX):] for r in io.read_table(out, "metrics").to_pylist()
                    if r["metric"].startswith(FINDING_PREFIX) and r["value"] > 0)
    return sorted(bad), findings, cpu, wall


def shrink_failures(out: Path, bad: list, adapter: str, budget: ShrinkBudget) -> None:
    """Shrink the first counterexample of each failing run in ``out`` into ``out/shrunk``
    and print its replay command (an erroring run has none: its error is the report's)."""
    rows = {}
    for r in io.read_table(out, "counterexamples").to_pylist():
        rows.setdefault(r["seed"], r)
    (out / "shrunk").mkdir(exist_ok=True)
    for seed, verdict, _ in bad:
        row = rows.get(seed)
        if row is None:
            print(f"  seed {seed} ({verdict}): no counterexample to shrink")
            continue
        started = time.perf_counter()
        script = parse_script(row["script"], f"seed {seed}")
        found = counterexample_for(script, adapter, row["property"], budget)
        path = out / "shrunk" / f"seed-{seed}.rmqha"
        path.write_text(found.script)
        print(f"  seed {seed}, {row['property']}: {found.original_steps} steps shrunk to "
              f"{found.shrunk_steps} in {time.perf_counter() - started:.1f} s: "
              f"rmqha replay {path}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS),
                    help=f"comma-separated (default: {','.join(DEFAULT_SCENARIOS)})")
    ap.add_argument("--runs", type=int, default=1000, help="runs per campaign (default: 1000)")
    ap.add_argument("--seeds", default="0", help="comma-separated first seeds, one campaign each (default: 0)")
    ap.add_argument("--streams", default="own", metavar="STREAMS",
                    help="comma-separated random streams of the search, one campaign each per scenario and "
                         "first seed ('own': the search's own; default: own)")
    ap.add_argument("--adapter", default="reference")
    ap.add_argument("--out", default=None,
                    help="keep every campaign's results under this directory (default: a temporary one, "
                         "kept only for campaigns with a run that did not pass)")
    ap.add_argument("--reached", default=None, metavar="FILE",
                    help="add the node states each campaign reached to FILE "
                         "(conformance/scenarios/reference_reached.json: what reports set coverage against)")
    ap.add_argument("--shrink", default=None, metavar="REPLAYS[/SECONDS]",
                    help="then shrink each failing run's first counterexample within this budget "
                         "(default: no shrinking)")
    args = ap.parse_args()
    if args.reached and args.adapter != "reference":
        ap.error("--reached records what rmqha's reference reaches: with --adapter reference only")
    if args.reached:
        try:
            read_reached(Path(args.reached))  # a file it cannot add to is refused before any campaign
        except UserError as exc:
            ap.error(f"--reached: {exc}")
    budget = None
    if args.shrink is not None:
        try:
            budget = shrink_budget_from(argparse.Namespace(no_shrink=False, shrink_budget=args.shrink))
        except UserError as exc:
            ap.error(str(exc).replace("--shrink-budget", "--shrink").replace(
                "--no-shrink turns shrinking off", "without --shrink nothing is shrunk"))
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown or not scenarios:
        ap.error(f"unknown scenario {', '.join(unknown) or '(none given)'}; choose from {', '.join(SCENARIOS)}")
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s]
    except ValueError:
        ap.error(f"--seeds takes comma-separated integers, not {args.seeds!r}")
    if args.runs < 1 or not seeds:
        ap.error("--runs is at least 1 and --seeds names at least one first seed")
    streams = [s for s in args.streams.split(",") if s]
    try:
        streams = [s if s == "own" else stream_name(s) for s in streams]
    except argparse.ArgumentTypeError as exc:
        ap.error(f"--streams: {exc} ('own': the search's own stream)")
    if not streams:
        ap.error("--streams names at least one stream ('own': the search's own)")
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="rmqha-sweep-"))
    shrinking = ("shrinking off" if budget is None else
                 f"shrinking off during the campaigns (failing runs shrunk after them, "
                 f"{budget.replays}/{budget.seconds:g})")
    print(f"{args.adapter}: default searched campaigns of {args.runs} runs, {shrinking}; "
          f"target {TARGET_FAILING} failing or erroring runs; {load()}", flush=True)
    print(f"{'scenario':11s} {'seed':>6s} {'stream':>6s} {'runs':>5s} {'failed':>6s} {'errors':>6s} {'CPU s':>7s} "
          f"{'wall s':>7s}  verdict  findings (runs)", flush=True)
    failures = []
    for scenario in scenarios:
        for first in seeds:
            for stream in streams:
                salt = "" if stream == "own" else stream
                out = root / (f"{scenario}-{first}" + (f"-{salt}" if salt else ""))
                if out.exists():
                    shutil.rmtree(out)
                bad, findings, cpu, wall = sweep(scenario, first, args, out, salt)
                errors = sum(1 for _, verdict, _ in bad if verdict == "error")
                shown = ", ".join(f"{name} {n}" for name, n in sorted(findings.items())) or "-"
                print(f"{scenario:11s} {first:6d} {stream:>6s} {args.runs:5d} {len(bad) - errors:6d} {errors:6d} "
                      f"{cpu:7.1f} {wall:7.1f}  {'ok  ' if len(bad) <= TARGET_FAILING else 'MISS'}     {shown}",
                      flush=True)
                if args.reached and not bad and args.adapter == "reference":
                    coverage = io.read_table(out, "coverage").to_pylist()
                    new = add_reached(Path(args.reached), scenario,
                                      (r["outcome"] for r in coverage if r["procedure"] == ABSTRACT_STATE),
                                      f"{scenario} from seed {first}, stream {stream}, {args.runs} runs "
                                      f"(rmqha {rmqha_version()}{source_commit()}, {time.strftime('%Y-%m-%d')})",
                                      get_scenario(scenario).abstract_universe)
                    print(f"  {new} node states new to {args.reached}", flush=True)
                if bad:
                    failures.append((scenario, f"seed {first}" + (f" (stream {salt})" if salt else ""), out, bad))
                elif not args.out:
                    shutil.rmtree(out)
    print(load())
    if not failures:
        print(f"verdict: every run of {args.adapter} passed")
        if not args.out:
            shutil.rmtree(root, ignore_errors=True)
        return 0
    for scenario, first, out, bad in failures:
        named = "; ".join(f"seed {seed} ({verdict}: {what})" for seed, verdict, what in bad[:10])
        more = f"; and {len(bad) - 10} more" if len(bad) > 10 else ""
        print(f"{scenario} from {first}: {len(bad)} run{'s' if len(bad) > 1 else ''} did not pass: {named}{more}")
        print(f"  results: {out}; their report, with each run's script and replay command: "
              f"rmqha report {out} --no-spark --out {out}/report")
        if budget is not None:
            shrink_failures(out, bad, args.adapter, budget)
    return 1


if __name__ == "__main__":
    sys.exit(main())
