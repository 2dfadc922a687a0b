"""Controller stack benchmark: simulated events per second of the full stack, and the
distribution of simulated time from a master crash to a new master accepting writes
(p50/p95/max) under the default timers.

    python benchmarks/controller_stack.py [--runs N] [--failovers N]

Events are node activations (ticks, deliveries, client requests) of the 3 controllers
and 3 brokers, over seeded ``controller`` campaign runs (mixed faults, 60 s of faults).
Failover: boot, wait for a master, write, crash the master, wait for the next master
that accepts writes (an unfenced master of the controller's new masterEpoch). With the
default timers that is bounded by the heartbeat timeout (10 s) plus the scan period
(5 s) plus the election and the role change.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.campaign import execute, get_scenario  # noqa: E402
from results.runresult import RunConfig  # noqa: E402
from conformance.script import Script, Step  # noqa: E402


def throughput(runs: int) -> tuple[int, float, float]:
    scenario = get_scenario("controller")
    events = simulated = 0
    started = time.perf_counter()
    for seed in range(runs):
        config = RunConfig("bench", seed, "reference", "controller", "rocketmq-5.1", (3, 2)[seed % 2], "mixed", 60_000)
        ex = execute(scenario.generate(config), "reference", record_trace=False)
        events += ex.cluster.sim.steps
        simulated += ex.cluster.sim.now
    return events, time.perf_counter() - started, simulated / 1000.0


def failover_times(n: int) -> list[float]:
    out = []
    for seed in range(n):
        steps = (Step("await-master", ("30000",)), Step("write", ("3",)), Step("run", ("3000",)),
                 Step("crash-master"), Step("await-master", ("60000",)), Step("write", ("1",)))
        script = Script("controller", ("c1", "c2", "c3", "b1", "b2", "b3"), seed, "rocketmq-5.1", "reference",
                        start_spread_ms=500, steps=steps, options=(("acks", "all"),))
        ex = execute(script, "reference", record_trace=False)
        if ex.error or ex.violations:
            raise SystemExit(f"seed {seed}: the failover run went wrong: {ex.error or ex.violations[0].violation.message}")
        times = ex.cluster.failovers
        if not times:
            raise SystemExit(f"seed {seed}: no new master within 60 s of the crash")
        out.append(times[0])
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="campaign runs for events/s (default 20)")
    ap.add_argument("--failovers", type=int, default=50, help="master crashes measured (default 50)")
    args = ap.parse_args()
    events, wall, simulated = throughput(args.runs)
    print(f"full stack (3 controllers, 2-3 brokers, mixed faults): {args.runs} runs, {events} events, "
          f"{simulated:.0f} s simulated in {wall:.1f} s wall")
    print(f"  {events / wall:,.0f} events/s; {simulated / wall:.1f}x real time; {args.runs / wall:.2f} runs/s")
    started = time.perf_counter()
    times = failover_times(args.failovers)
    print(f"master crash -> new master accepting writes, {len(times)} seeds "
          f"({time.perf_counter() - started:.1f} s wall):")
    print(f"  p50 {percentile(times, 0.5):,.0f} ms  p95 {percentile(times, 0.95):,.0f} ms  max {max(times):,.0f} ms  "
          f"mean {statistics.mean(times):,.0f} ms")
    print("  bound from the timers: heartbeat timeout 10,000 ms + scan period 5,000 ms + election and role change")


if __name__ == "__main__":
    main()
