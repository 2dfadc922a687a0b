"""What shrinking costs: time from a failing run to its shrunk script, and a failing
campaign against a passing one.

1. For every DLedger mutant (and, with ``--adapter``, any implementation), the first
   failing run among the first seeds is shrunk with the default budget; prints the wall
   and CPU seconds of each shrink and the median and maximum against the target (median
   <= 5 s).
2. A campaign of ``--runs`` runs (in this process, as ``rmqha check --no-spark`` runs it,
   verdicts then shrinking) on the reference and on a failing mutant; prints both times
   and the ratio against the target (a failing campaign within 2x a passing one).

    python benchmarks/shrinking.py [--seeds 40] [--runs 200] [--mutant double-vote]
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

from conformance.campaign import DEFAULT_SHRINK, plan_configs, run_one, shrink_result  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402
from conformance.spark_campaign import CampaignSpec, run_campaign  # noqa: E402

TARGET_MEDIAN_S = 5.0
TARGET_FAILING_RATIO = 2.0


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def shrink_times(adapters, seeds: int) -> list[tuple[str, float, float, int, int]]:
    sc = get_scenario("dledger")
    out = []
    for adapter in adapters:
        for config in plan_configs("bench", seeds, 0, "dledger", (adapter,), None, sc.group_sizes,
                                   ("crash", "partition", "lossy", "mixed")):
            result = run_one(config)
            if result.first_violation is None:
                continue
            wall, cpu = time.perf_counter(), time.process_time()
            cx = shrink_result(result, DEFAULT_SHRINK, (result.first_violation,))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if cx:
                out.append((adapter, wall, cpu, cx[0].original_steps, cx[0].shrunk_steps))
            break
    return out


def campaign_seconds(adapter: str, runs: int) -> tuple[float, float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        spec = CampaignSpec("bench", "dledger", (adapter,), runs=runs, chunk_size=max(10, runs // 8),
                            group_sizes=(3, 4, 5))
        wall, cpu = time.perf_counter(), time.process_time()
        summary = run_campaign(Path(tmp) / "c", spec, master=None, progress=False)
        return time.perf_counter() - wall, time.process_time() - cpu, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40, help="seeds tried per implementation for a failing run")
    ap.add_argument("--runs", type=int, default=200, help="runs of each campaign in part 2")
    ap.add_argument("--mutant", default="double-vote", help="the failing implementation of part 2")
    ap.add_argument("--adapter", action="append", default=None,
                    help="implementations to shrink a failure of (default: every DLedger mutant)")
    args = ap.parse_args()
    adapters = args.adapter or [f"mutant:{m.name}" for m in get_scenario("dledger").mutants]
    print(f"1. failing run -> shrunk script (budget {DEFAULT_SHRINK.replays} replays / {DEFAULT_SHRINK.seconds:g} s); "
          f"{load()}")
    print(f"{'implementation':45s} {'wall s':>7s} {'cpu s':>7s} {'steps':>11s}")
    rows = shrink_times(adapters, args.seeds)
    for adapter, wall, cpu, before, after in rows:
        print(f"{adapter:45s} {wall:7.2f} {cpu:7.2f} {before:5d} -> {after:<3d}", flush=True)
    if rows:
        walls, cpus = [r[1] for r in rows], [r[2] for r in rows]
        med = statistics.median(cpus)
        print(f"median {statistics.median(walls):.2f} s wall, {med:.2f} CPU s; max {max(walls):.2f} s wall, "
              f"{max(cpus):.2f} CPU s; target median <= {TARGET_MEDIAN_S:g} s: {'ok' if med <= TARGET_MEDIAN_S else 'MISS'} "
              f"(per CPU-second)")
    print(f"2. a campaign of {args.runs} runs, verdicts then shrinking, in this process; {load()}")
    passing = campaign_seconds("reference", args.runs)
    failing = campaign_seconds(f"mutant:{args.mutant}", args.runs)
    for name, (wall, cpu, summary) in (("reference", passing), (f"mutant:{args.mutant}", failing)):
        print(f"{name:45s} {wall:7.1f} s wall {cpu:7.1f} CPU s  {summary['fail']} failed of {summary['runs']}")
    ratio = failing[1] / passing[1]
    print(f"failing / passing: {ratio:.2f}x per CPU-second, {failing[0] / passing[0]:.2f}x wall; target <= "
          f"{TARGET_FAILING_RATIO:g}x: {'ok' if ratio <= TARGET_FAILING_RATIO else 'MISS'}; {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
