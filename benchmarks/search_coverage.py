"""Abstract protocol states reached by campaigns that search, against sampling alone.

Runs the same seeds of a scenario twice, as ``rmqha run --no-spark`` does (its default
chunks and search waves for that many runs, unless given): once sampling every run from
its seed (``--no-search``), once with the search (conformance/search.py), and prints the
distinct abstract states each reached (spec/raft/abstract.py for dledger and raft,
spec/broker/abstract.py for controller, spec/classic/abstract.py for classic,
spec/truncation/abstract.py for truncation: a node's
state in its group's context, per step) with the ratio to the target (the search reaches at least 2x the states of
sampling per 1,000 runs).

Per CPU-second, two figures: states per CPU-second of each campaign at the same runs
(a searched run is longer, so this ratio is below the runs ratio), and the states
sampling reaches when it is given as much CPU as the search spent (it samples on, with
the next seeds, until its runs have used the search's CPU seconds): the search's
states against that is the ratio at an equal CPU budget. CPU seconds are those of the
runs (this process's, per run), the campaigns' bookkeeping aside.

    python benchmarks/search_coverage.py [--scenario dledger|controller|classic|truncation] [--runs 1000]
        [--chunk-size N] [--waves N] [--seed S] [--adapter reference] [--ranges K [--range-step 5000]]
        [--streams K]

``--ranges K`` measures K seed ranges (from S, S + 5000, ...) and sums them up (min and
median ratio, in how many the target is met): one range is not enough to judge a change
of the search, whose figure moves 5-10% between ranges as other lineages win.
``--streams K`` searches each range K times, with the search's own random stream and
K - 1 others (``rmqha run --search-stream``): the sampled runs are the same, only the
search's draws differ, and the stream alone moves a range's figure by 5-15%.

A line before the summary gives the runs' verdicts: every run passed, or each that failed (a run of
the reference that fails is a defect, whatever the coverage says: session 15's search
found one this way, docs/dledger.md "Committed entries lost to a late TRUNCATE").
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cli.commands.run import search_chunk_size  # noqa: E402
from conformance.campaign import run_one  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402
from conformance.search import default_waves  # noqa: E402
from conformance.spark_campaign import CampaignSpec, run_campaign  # noqa: E402
from results import io  # noqa: E402
from results.schema import ABSTRACT_STATE  # noqa: E402

TARGET_RATIO = 2.0


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


FAILED: dict[str, dict[int, list[str]]] = {}  # campaign label -> seed -> what its run violated (or its error)


def campaign(search: bool, args, first_seed: int, stream: str = "",
             label: str = "") -> tuple[dict[str, int], dict[int, float], float]:
    """A campaign of ``args.runs`` runs from ``first_seed`` as ``rmqha run --no-spark``
    runs it (chunks, the search's waves; its draws from ``stream``, as ``--search-stream``
    gives): the state -> the first seed whose run reached
    it (the coverage table says which seed of a chunk first reached a state), each
    run's CPU seconds by seed, and the whole campaign's CPU seconds. Runs that did not
    pass are kept in ``FAILED[label]``: the benchmark counts states, but a run of the
    reference that fails is a defect to look at, and is printed (``verdicts``)."""
    spec = CampaignSpec("bench", args.scenario, (args.adapter,), runs=args.runs, first_seed=first_seed,
                        chunk_size=args.chunk_size, group_sizes=get_scenario(args.scenario).group_sizes,
                        search=search, search_waves=args.waves, shrink_replays=0, shrink_seconds=0.0,
                        search_stream=stream)
    cpu_of: dict[int, float] = {}

    def timed(config):
        started = time.process_time()
        try:
            return run_one(config)
        finally:
            cpu_of[config.seed] = time.process_time() - started

    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        run_campaign(Path(tmp) / "c", spec, master=None, progress=False, run_fn=timed)
        cpu = time.process_time() - cpu
        rows = io.read_table(Path(tmp) / "c", "coverage").to_pylist()
        for r in io.read_table(Path(tmp) / "c", "runs").to_pylist():
            if r["verdict"] != "pass":
                FAILED.setdefault(label, {})[r["seed"]] = list(r["failed_properties"] or ()) or [r["error"] or r["verdict"]]
    first_seen: dict[str, int] = {}
    for r in rows:
        if r["procedure"] == ABSTRACT_STATE:
            first_seen[r["outcome"]] = min(first_seen.get(r["outcome"], r["first_seed"]), r["first_seed"])
    return first_seen, cpu_of, cpu


def known_after(first_seen: dict[str, int], seeds: list[int]) -> list[int]:
    """States known after each of ``seeds`` (in order)."""
    by_seed: dict[int, int] = {}
    for seed in first_seen.values():
        by_seed[seed] = by_seed.get(seed, 0) + 1
    out, known = [], 0
    for seed in seeds:
        known += by_seed.get(seed, 0)
        out.append(known)
    return out


def streams(k: int) -> list[str]:
    """The search's own random stream ("") and ``k - 1`` others: "b", "c", ..."""
    return [""] + [chr(ord("b") + i) for i in range(k - 1)]


def row(name: str, runs: int, states: int, cpu: float, growth: list[int]) -> None:
    q = [growth[int(len(growth) * f) - 1] for f in (0.25, 0.5, 0.75)]
    print(f"{name:10s} {runs:5d} {states:7d} {1000 * states / runs:11.0f} {cpu:9.1f} {states / cpu:12.1f} "
          f"{q[0]:7d} {q[1]:7d} {q[2]:7d}", flush=True)


def measure(args, first: int) -> list[tuple[float, float]]:
    """One seed range: sampling, and the search with each of ``args.streams`` random
    streams, from ``first``; prints their rows and returns, per stream, the ratio per
    ``args.runs`` runs and at an equal CPU budget."""
    seeds = list(range(first, first + args.runs))
    sampled, sampled_cpu, _ = campaign(False, args, first, label=f"sampling from {first}")
    row("sampling", args.runs, len(sampled), sum(sampled_cpu.values()), known_after(sampled, seeds))
    searches = []
    for stream in streams(args.streams):
        label = f"search {stream}".strip()  # "search", "search b", ...
        first_seen, cpu_of, _ = campaign(True, args, first, stream, label=f"{label} from {first}")
        searches.append((label, len(first_seen), sum(cpu_of.values())))
        row(label, args.runs, len(first_seen), searches[-1][2], known_after(first_seen, seeds))
    # sampling on, with the next seeds, until it has spent the costliest search's CPU seconds
    first_seen, cpu_of = dict(sampled), dict(sampled_cpu)
    start = first
    while sum(cpu_of.values()) < max(cpu for _, _, cpu in searches):
        start += args.runs
        more, more_cpu, _ = campaign(False, args, start, label=f"sampling from {start}")
        for s, seed in more.items():
            first_seen.setdefault(s, seed)
        cpu_of.update(more_cpu)
    figures = []
    for label, states, budget in searches:
        spent, runs = 0.0, 0
        for seed in sorted(cpu_of):
            if spent + cpu_of[seed] > budget:
                break
            spent += cpu_of[seed]
            runs += 1
        equal_cpu = known_after(first_seen, sorted(cpu_of)[:runs])[-1]
        print(f"{'sampling':10s} {runs:5d} {equal_cpu:7d} {'':11s} {spent:9.1f} {equal_cpu / spent:12.1f}   "
              f"(sampling on to the CPU seconds of {label})")
        ratio = states / len(sampled)
        per_cpu = (states / budget) / (len(sampled) / sum(sampled_cpu.values()))
        print(f"{label} / sampling: {ratio:.2f}x states per {args.runs} runs (target {TARGET_RATIO:.1f}x: "
              f"{'ok' if ratio >= TARGET_RATIO else 'MISS'}); per CPU-second: "
              f"{states / equal_cpu:.2f}x the states of sampling given the same CPU seconds "
              f"({'ok' if states / equal_cpu >= TARGET_RATIO else 'MISS'}), "
              f"{per_cpu:.2f}x states per CPU-second at equal runs; {load()}")
        figures.append((ratio, states / equal_cpu))
    return figures


def verdicts(adapter: str) -> str:
    """What the campaigns' runs said: none failed, or each failing run (seed, what it violated)."""
    failed = [(label, seed, what) for label, runs in FAILED.items() for seed, what in sorted(runs.items())]
    if not failed:
        return f"verdicts: every run of {adapter} passed"
    shown = "; ".join(f"{label}: seed {seed} ({', '.join(what)})" for label, seed, what in failed[:10])
    more = f"; and {len(failed) - 10} more" if len(failed) > 10 else ""
    return f"verdicts: {len(failed)} run{'s' if len(failed) > 1 else ''} of {adapter} failed: {shown}{more}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--chunk-size", type=int, default=None, help="default: rmqha run's for a searched campaign")
    ap.add_argument("--scenario", default="dledger")
    ap.add_argument("--adapter", default="reference")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--waves", type=int, default=None, help="the search's waves (default: rmqha run's)")
    ap.add_argument("--ranges", type=int, default=1,
                    help="seed ranges to measure (the search's figure moves 5-10%% from one range to another: "
                         "judge a change of the search on several)")
    ap.add_argument("--range-step", type=int, default=5000, help="seeds between the first seeds of two ranges")
    ap.add_argument("--streams", type=int, default=1,
                    help="search each range with this many random streams (rmqha run --search-stream: the "
                         "search's own, then b, c, ...): the stream alone moves a range's figure by 5-15%%")
    args = ap.parse_args()
    if args.ranges < 1 or args.range_step < args.runs:
        ap.error("--ranges is at least 1 and --range-step at least --runs (ranges of seeds that do not overlap)")
    if not 1 <= args.streams <= 25:
        ap.error("--streams is from 1 to 25")
    args.chunk_size = args.chunk_size or search_chunk_size(args.runs)
    args.waves = args.waves or default_waves(-(-args.runs // args.chunk_size))
    print(f"{args.scenario} on {args.adapter}: {args.runs} runs from seed {args.seed} in chunks of {args.chunk_size} "
          f"({args.waves} waves), group sizes {'/'.join(map(str, get_scenario(args.scenario).group_sizes))}, "
          f"every fault mix; {args.streams} random stream{'s' if args.streams > 1 else ''} of the search; {load()}")
    print(f"{'campaign':10s} {'runs':>5s} {'states':>7s} {'per 1k runs':>11s} {'run cpu s':>9s} {'states/cpu s':>12s} "
          f"{'at 25%':>7s} {'at 50%':>7s} {'at 75%':>7s}")
    ratios = []
    for k in range(args.ranges):
        if args.ranges > 1:
            print(f"-- seed range {k + 1} of {args.ranges}: seeds from {args.seed + k * args.range_step}")
        ratios += measure(args, args.seed + k * args.range_step)
    print(verdicts(args.adapter))
    if len(ratios) > 1:
        per_runs = sorted(r for r, _ in ratios)
        same_cpu = sorted(c for _, c in ratios)
        met = sum(r >= TARGET_RATIO for r in per_runs)
        what = f"{args.ranges} seed range{'s' if args.ranges > 1 else ''} x {args.streams} stream{'s' if args.streams > 1 else ''}"
        print(f"over {what}: per {args.runs} runs {' '.join(f'{r:.2f}x' for r, _ in ratios)} "
              f"(min {per_runs[0]:.2f}x, median {statistics.median(per_runs):.2f}x; target {TARGET_RATIO:.1f}x met in "
              f"{met} of {len(ratios)}: {'ok' if met == len(ratios) else 'MISS'}); same CPU min {same_cpu[0]:.2f}x, "
              f"median {statistics.median(same_cpu):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
