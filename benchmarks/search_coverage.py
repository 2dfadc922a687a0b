"""Abstract protocol states reached by campaigns that search, against sampling alone.

Runs the same seeds of a scenario twice, as ``rmqha run --no-spark`` does (chunks, the
search's waves): once sampling every run from its seed (``--no-search``), once with the
search (conformance/search.py), and
prints the distinct abstract states each reached (spec/raft/abstract.py for dledger and raft,
spec/broker/abstract.py for controller: a node's state
in its group's context, per step), per 1,000 runs and per CPU-second, with the ratio to
the target (the search reaches at least 2x the states of sampling per 1,000 runs).

    python benchmarks/search_coverage.py [--runs 1000] [--chunk-size 100] [--waves 4] [--adapter reference]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.scenarios.registry import get_scenario  # noqa: E402
from conformance.search import SEARCH_WAVES  # noqa: E402
from conformance.spark_campaign import CampaignSpec, run_campaign  # noqa: E402
from results import io  # noqa: E402
from results.schema import ABSTRACT_STATE  # noqa: E402

TARGET_RATIO = 2.0


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def campaign(search: bool, args) -> tuple[set[str], float, float, list[int]]:
    """A campaign as ``rmqha run --no-spark`` runs it (chunks, the search's waves);
    the states it reached, its wall and CPU seconds, and the states known after each
    seed (the coverage table says which seed of a chunk first reached a state)."""
    spec = CampaignSpec("bench", args.scenario, (args.adapter,), runs=args.runs, chunk_size=args.chunk_size,
                        group_sizes=get_scenario(args.scenario).group_sizes, search=search,
                        search_waves=args.waves, shrink_replays=0, shrink_seconds=0.0)
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        run_campaign(Path(tmp) / "c", spec, master=None, progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rows = io.read_table(Path(tmp) / "c", "coverage").to_pylist()
    first_seen: dict[str, int] = {}  # state -> the first seed whose run reached it
    for r in rows:
        if r["procedure"] == ABSTRACT_STATE:
            first_seen[r["outcome"]] = min(first_seen.get(r["outcome"], r["first_seed"]), r["first_seed"])
    states = set(first_seen)
    by_seed = Counter(first_seen.values())
    growth, known = [], 0
    for seed in range(args.runs):
        known += by_seed.get(seed, 0)
        growth.append(known)
    return states, wall, cpu, growth[: args.runs]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--chunk-size", type=int, default=100)
    ap.add_argument("--scenario", default="dledger")
    ap.add_argument("--adapter", default="reference")
    ap.add_argument("--waves", type=int, default=SEARCH_WAVES, help="the search's waves (campaign default)")
    args = ap.parse_args()
    print(f"{args.scenario} on {args.adapter}: {args.runs} runs in chunks of {args.chunk_size} ({args.waves} waves), group sizes "
          f"{'/'.join(map(str, get_scenario(args.scenario).group_sizes))}, "
          f"every fault mix; {load()}")
    print(f"{'campaign':10s} {'states':>7s} {'per 1k runs':>11s} {'cpu s':>7s} {'states/cpu s':>12s} "
          f"{'at 25%':>7s} {'at 50%':>7s} {'at 75%':>7s}")
    rows = {}
    for search in (False, True):
        states, wall, cpu, growth = campaign(search, args)
        rows[search] = (len(states), cpu)
        q = [growth[int(len(growth) * f) - 1] for f in (0.25, 0.5, 0.75)]
        print(f"{'search' if search else 'sampling':10s} {len(states):7d} {1000 * len(states) / args.runs:11.0f} "
              f"{cpu:7.1f} {len(states) / cpu:12.1f} {q[0]:7d} {q[1]:7d} {q[2]:7d}", flush=True)
    ratio = rows[True][0] / rows[False][0]
    per_cpu = (rows[True][0] / rows[True][1]) / (rows[False][0] / rows[False][1])
    print(f"search / sampling: {ratio:.2f}x states per {args.runs} runs (target {TARGET_RATIO:.1f}x: "
          f"{'ok' if ratio >= TARGET_RATIO else 'MISS'}), {per_cpu:.2f}x per CPU-second; {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
