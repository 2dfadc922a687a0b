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

    python benchmarks/step_conformance.py [--scenario S] [--runs N] [--adapter SPEC] [--as-campaign]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

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


def report(title: str, unit: str, off: tuple, on: tuple, judged: bool) -> None:
    print(title)
    print(f"  {'':24s} {'wall s':>8s} {'CPU s':>8s} {unit + '/CPU s':>12s}")
    print(f"  {'without step checks':24s} {off[0]:8.2f} {off[1]:8.2f} {off[2] / off[1]:12.0f}")
    print(f"  {'with step checks':24s} {on[0]:8.2f} {on[1]:8.2f} {on[2] / on[1]:12.0f}")
    ratio_wall, ratio_cpu = on[0] / off[0], on[1] / off[1]
    verdict = "met" if ratio_cpu <= TARGET else "MISSED"
    print(f"  cost: {ratio_cpu:.2f}x per CPU-second ({ratio_wall:.2f}x wall); target <= {TARGET}x: {verdict} "
          f"(ratio to target {ratio_cpu / TARGET:.2f})" + ("" if judged else " [shown beside; not the verdict]"))


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
    ap.add_argument("--as-campaign", action="store_true",
                    help="also time the same runs as a whole campaign in this process (rmqha run --no-spark)")
    args = ap.parse_args()
    scenario = get_scenario(args.scenario)
    cluster = CLUSTERS[args.scenario]
    configs = plan_configs("bench", args.runs, 0, args.scenario, (args.adapter,), group_sizes=scenario.group_sizes,
                           fault_mixes=FAULT_MIXES)
    scripts = [scenario.generate(c) for c in configs]
    timed(scripts[:3], args.adapter)  # warm-up (imports, caches)
    on = timed(scripts, args.adapter)
    off = without_step_checks(cluster, lambda: timed(scripts, args.adapter))
    load = os.getloadavg()[0]
    print(f"{args.scenario} campaign, {args.runs} runs of {args.adapter} (every group size and fault mix), "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
    report("the runs alone (conformance.campaign.execute; the target is judged on this):", "steps", off, on, True)
    if args.as_campaign:
        spec = CampaignSpec("bench", args.scenario, (args.adapter,), args.runs, group_sizes=scenario.group_sizes,
                            fault_mixes=FAULT_MIXES, shrink_replays=0)
        campaign_timed(attrs.evolve(spec, runs=2))  # warm-up (the results writer's imports: seconds)
        on = campaign_timed(spec)
        off = without_step_checks(cluster, lambda: campaign_timed(spec))
        report("as a campaign (rmqha run --no-spark in this process: search, verdicts, results written):",
               "runs", off, on, False)


if __name__ == "__main__":
    main()
