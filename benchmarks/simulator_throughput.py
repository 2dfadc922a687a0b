"""Simulator and campaign throughput, single process.

Prints, for each scenario/fault mix: runs per second, node activations per second,
simulated seconds per wall second, and peak memory of one run (tracemalloc), for the
reference adapter with every invariant checked after every step. Usage:

    python benchmarks/simulator_throughput.py [--runs N]
"""
from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.campaign import execute, plan_configs, run_one  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    print(f"{'mix':10s} {'size':>4s} {'runs/s':>8s} {'steps/s':>10s} {'sim s/wall s':>12s} {'peak MiB/run':>12s}")
    for mix in ("none", "crash", "partition", "lossy", "mixed"):
        for size in (3, 5):
            configs = list(plan_configs("bench", args.runs, 0, group_sizes=(size,), fault_mixes=(mix,)))
            start = time.perf_counter()
            steps = sim_ms = 0
            for c in configs:
                r = run_one(c)
                steps += r.steps
                sim_ms += r.simulated_ms
            wall = time.perf_counter() - start
            script = get_scenario("dledger").generate(configs[0])
            tracemalloc.start()
            execute(script, "reference", record_trace=False)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            print(f"{mix:10s} {size:4d} {len(configs) / wall:8.1f} {steps / wall:10.0f} "
                  f"{sim_ms / 1000 / wall:12.0f} {peak:12.2f}")


if __name__ == "__main__":
    main()
