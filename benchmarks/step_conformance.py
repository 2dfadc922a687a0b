"""What step conformance costs a campaign: the same seeded runs with every node step
judged (spec/steps) and without, wall and CPU time, against the target.

Target (issue 14): a campaign with step conformance takes at most 1.5x its time
without. Runs are executed as a campaign executes them (no shrinking: both sides pass).
Scenarios whose nodes are judged step by step: dledger (default), classic, truncation,
controller (its controllers and brokers).
Usage:

    python benchmarks/step_conformance.py [--scenario S] [--runs N] [--adapter SPEC]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.campaign import execute, plan_configs  # noqa: E402
from conformance.scenarios.classic import ClassicCluster  # noqa: E402
from conformance.scenarios.controller import ControllerCluster  # noqa: E402
from conformance.scenarios.dledger import DLedgerCluster  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402
from conformance.scenarios.truncation import TruncationCluster  # noqa: E402

TARGET = 1.5  # at most this many times a campaign's time without step conformance
# the cluster class whose new_steps() builds each scenario's step checker
CLUSTERS = {"dledger": DLedgerCluster, "classic": ClassicCluster, "truncation": TruncationCluster,
            "controller": ControllerCluster}


def timed(scripts, adapter: str) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    steps = 0
    for script in scripts:
        ex = execute(script, adapter, record_trace=False)
        steps += ex.cluster.sim.steps
        assert not ex.error, ex.error
    return time.perf_counter() - wall, time.process_time() - cpu, steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--adapter", default="reference")
    ap.add_argument("--scenario", default="dledger", choices=sorted(CLUSTERS))
    args = ap.parse_args()
    scenario = get_scenario(args.scenario)
    cluster = CLUSTERS[args.scenario]
    configs = plan_configs("bench", args.runs, 0, args.scenario, (args.adapter,), group_sizes=scenario.group_sizes,
                           fault_mixes=("none", "crash", "partition", "lossy", "mixed"))
    scripts = [scenario.generate(c) for c in configs]
    with_steps = cluster.new_steps
    timed(scripts[:3], args.adapter)  # warm-up (imports, caches)
    on = timed(scripts, args.adapter)
    cluster.new_steps = lambda self: None
    try:
        off = timed(scripts, args.adapter)
    finally:
        cluster.new_steps = with_steps
    load = os.getloadavg()[0]
    print(f"{args.scenario} campaign, {args.runs} runs of {args.adapter} (every group size and fault mix), "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"{'':24s} {'wall s':>8s} {'CPU s':>8s} {'steps/CPU s':>12s}")
    print(f"{'without step checks':24s} {off[0]:8.2f} {off[1]:8.2f} {off[2] / off[1]:12.0f}")
    print(f"{'with step checks':24s} {on[0]:8.2f} {on[1]:8.2f} {on[2] / on[1]:12.0f}")
    ratio_wall, ratio_cpu = on[0] / off[0], on[1] / off[1]
    verdict = "met" if ratio_cpu <= TARGET else "MISSED"
    print(f"cost: {ratio_cpu:.2f}x per CPU-second ({ratio_wall:.2f}x wall); target <= {TARGET}x: {verdict} "
          f"(ratio to target {ratio_cpu / TARGET:.2f})")


if __name__ == "__main__":
    main()
