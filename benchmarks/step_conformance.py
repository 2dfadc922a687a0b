"""What step conformance costs a campaign: the same seeded runs with every node step
judged (spec/steps) and without, wall and CPU time, against the target.

Target (issue 14): a campaign with step conformance takes at most 1.5x its time
without. Scenarios whose nodes are judged step by step: dledger (default), classic,
truncation, controller (its controllers and brokers).

Two measurements, each printed with the target, the figure and the ratio per CPU-second
and wall:

- the runs alone (the verdict is judged on this one): the campaign's generated scripts
  executed as a campaign executes them (``conformance.campaign.execute``, no trace, no
  shrinking: both sides pass). Everything a campaign does besides running its scripts
  costs the same with and without step checks, so leaving it out gives the largest
  ratio: the strictest reading of "a campaign's time".
- ``--as-campaign``: the same runs as a whole campaign in this process (what
  ``rmqha run --no-spark`` does: planning, the coverage-guided search in waves, each run's
  script from its seed, halting, every verdict and result committed to Parquet files in a
  temporary directory), shown beside it; Spark's own start-up is not in it either.

Usage:

    python benchmarks/step_conformance.py [--scenario S] [--runs N] [--repeat N] [--adapter SPEC] [--as-campaign]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.campaign import execute, plan_configs  # noqa: E402
from conformance.scenarios.classic import ClassicCluster  # noqa: E402
from conformance.scenarios.controller import ControllerCluster  # noqa: E402
from conformance.scenarios.dledger import DLedgerCluster  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402
from conformance.scenarios.truncation import TruncationCluster  # noqa: E402
from conformance.spark_campaign import CampaignSpec, run_campaign  # noqa: E402

TARGET = 1.5  # at most this many times a campaign's time without step conformance
# the cluster class whose new_steps() builds each scenario's step checker
CLUSTERS = {"dledger": DLedgerCluster, "classic": ClassicCluster, "truncation": TruncationCluster,
            "controller": ControllerCluster}


FAULT_MIXES = ("none", "crash", "partition", "lossy", "mixed")


def timed(scripts, adapter: str) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    steps = 0
    for script in scripts:
        ex = execute(script, adapter, record_trace=False)
        steps += ex.cluster.sim.steps
        assert not ex.error, ex.error
    return time.perf_counter() - wall, time.process_time() - cpu, steps


def campaign_timed(spec: CampaignSpec) -> tuple[float, float, int]:
    """The campaign run in this process into a temporary results directory: (wall s, CPU s, runs)."""
    with tempfile.TemporaryDirectory(prefix="rmqha-bench-") as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        summary = run_campaign(Path(tmp) / spec.campaign, spec, master=None, progress=False)
        took = time.perf_counter() - wall, time.process_time() - cpu
    assert not summary["fail"] and not summary["error"], summary
    return took[0], took[1], summary["runs"]


def report(title: str, unit: str, pairs: list[tuple[tuple, tuple]], judged: bool) -> None:
    """``pairs``: (without, with) measured one after the other, each (wall s, CPU s, work done).
    The figure is the median of the pairs' ratios (pairs cancel the neighbours' load drifting)."""
    off = [p[0] for p in pairs]
    on = [p[1] for p in pairs]
    print(title + (f" (median of {len(pairs)} pairs, with and without in turn)" if len(pairs) > 1 else ""))
    print(f"  {'':24s} {'wall s':>8s} {'CPU s':>8s} {unit + '/CPU s':>12s}")
    for name, side in (("without step checks", off), ("with step checks", on)):
        wall, cpu = median(x[0] for x in side), median(x[1] for x in side)
        print(f"  {name:24s} {wall:8.2f} {cpu:8.2f} {side[0][2] / cpu:12.0f}")
    cpu_ratios = sorted(b[1] / a[1] for a, b in pairs)
    ratio_cpu, ratio_wall = median(cpu_ratios), median(b[0] / a[0] for a, b in pairs)
    spread = f", pairs {cpu_ratios[0]:.2f}-{cpu_ratios[-1]:.2f}x" if len(pairs) > 1 else ""
    verdict = "met" if ratio_cpu <= TARGET else "MISSED"
    print(f"  cost: {ratio_cpu:.2f}x per CPU-second ({ratio_wall:.2f}x wall{spread}); target <= {TARGET}x: "
          f"{verdict} (ratio to target {ratio_cpu / TARGET:.2f})" + ("" if judged else " [shown beside; not the verdict]"))


def without_step_checks(cluster, measure):
    with_steps = cluster.new_steps
    cluster.new_steps = lambda self: None
    try:
        return measure()
    finally:
        cluster.new_steps = with_steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--adapter", default="reference")
    ap.add_argument("--scenario", default="dledger", choices=sorted(CLUSTERS))
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="pairs of measurements (with, then without), the figure their median ratio (default 3)")
    ap.add_argument("--as-campaign", action="store_true",
                    help="also time the same runs as a whole campaign in this process (rmqha run --no-spark)")
    args = ap.parse_args()
    if args.repeat < 1 or args.runs < 1:
        ap.error("--runs and --repeat must be at least 1")
    scenario = get_scenario(args.scenario)
    cluster = CLUSTERS[args.scenario]
    configs = plan_configs("bench", args.runs, 0, args.scenario, (args.adapter,), group_sizes=scenario.group_sizes,
                           fault_mixes=FAULT_MIXES)
    scripts = [scenario.generate(c) for c in configs]
    timed(scripts[:3], args.adapter)  # warm-up (imports, caches)
    load = os.getloadavg()[0]
    pairs = []
    for _ in range(args.repeat):
        on = timed(scripts, args.adapter)
        pairs.append((without_step_checks(cluster, lambda: timed(scripts, args.adapter)), on))
    print(f"{args.scenario} campaign, {args.runs} runs of {args.adapter} (every group size and fault mix), "
          f"load average {load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    report("the runs alone (conformance.campaign.execute; the target is judged on this)", "steps", pairs, True)
    if args.as_campaign:
        spec = CampaignSpec("bench", args.scenario, (args.adapter,), args.runs, group_sizes=scenario.group_sizes,
                            fault_mixes=FAULT_MIXES, shrink_replays=0)
        campaign_timed(attrs.evolve(spec, runs=2))  # warm-up (the results writer's imports: seconds)
        on = campaign_timed(spec)
        pairs = [(without_step_checks(cluster, lambda: campaign_timed(spec)), on)]
        report("as a campaign (rmqha run --no-spark in this process: search, verdicts, results written)",
               "runs", pairs, False)


if __name__ == "__main__":
    main()
