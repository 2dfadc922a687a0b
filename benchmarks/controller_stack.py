"""Controller stack benchmark: throughput of the full stack against its target, and the
distribution of simulated time from a master crash to a new master accepting writes
(p50/p95/max) under the default timers.

    python benchmarks/controller_stack.py [--runs N] [--mixes M,...] [--failovers N] [--no-ceiling]

Throughput: seeded ``controller`` campaign runs (3 controllers, a broker set of 3 or 2,
each fault mix, 60 s of faults) on the reference with trace and invariants on; per wall
second and per CPU-second: simulated seconds and protocol events (deliveries and timer
firings; idle wake-ups excluded, their share shown as ``idle%``), the ratio of events
per CPU-second to the target (10x the stack's figure when the target was set), and the
peak memory of one run. Then the ceiling: the same runs (3 brokers, mixed faults) with the
checking switched off part by part, to show where an event's CPU goes.
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

from benchmarks.throughput import checks_off, load, measure, verdict  # noqa: E402
from conformance.campaign import execute  # noqa: E402
from conformance.faults import DEFAULT_FAULT_MIXES  # noqa: E402
from conformance.scenarios.controller import ControllerCluster  # noqa: E402
from conformance.script import Script, Step  # noqa: E402

# Protocol events per CPU-second of the stack when the target was set (commit dd6137e,
# trace and invariants on, every ticking node woken every 10 ms: 5,500-7,300 across the
# rows below); the target is ten times that.
BASELINE_EVENTS_PER_CPU_S = 6_600
TARGET_EVENTS_PER_S = 10 * BASELINE_EVENTS_PER_CPU_S


def throughput(runs: int, mixes: list[str]) -> list[str]:
    """Print one row per fault mix and broker-set size; the rows that missed the target."""
    print(f"controller stack, reference, trace and invariants on, {runs} runs per row; {load()}")
    print(f"target: {TARGET_EVENTS_PER_S:,} protocol events per CPU-second "
          f"(10x {BASELINE_EVENTS_PER_CPU_S:,}, the stack's figure when the target was set)")
    print(f"{'mix':9s} {'brokers':>7s} {'sim s/wall s':>12s} {'sim s/cpu s':>11s} {'events/wall s':>13s} "
          f"{'events/cpu s':>12s} {'x target':>9s} {'idle%':>6s} {'peak MiB':>8s}")
    missed = []
    for mix in mixes:
        for brokers in (3, 2):
            t = measure("controller", runs, brokers, mix, 60_000)
            sim_s = t["sim_ms"] / 1000.0
            ratio = t["events"] / t["cpu"] / TARGET_EVENTS_PER_S
            if ratio < 1:
                missed.append(f"{mix}/{brokers}")
            idle = 100.0 * t["idle"] / t["wakeups"] if t["wakeups"] else 0.0
            print(f"{mix:9s} {brokers:7d} {sim_s / t['wall']:12,.0f} {sim_s / t['cpu']:11,.0f} "
                  f"{t['events'] / t['wall']:13,.0f} {t['events'] / t['cpu']:12,.0f} {ratio:6.3f} {verdict(ratio):>2s} "
                  f"{idle:6.1f} {t['peak_mib']:8.2f}", flush=True)
    print(load())
    print(f"target MISSED: {', '.join(missed)}" if missed else "target met on every row")
    return missed


def ceiling(runs: int, mix: str) -> None:
    """Where the per-event cost goes: the same runs with the checking switched off part by
    part. Not a measurement of the target (that keeps every check on): it shows how far the
    target is even without the checks."""
    print(f"ceiling, 3 brokers, {mix}, the same {runs} runs (NOT the target's conditions): per CPU-second")
    rows = [("every check on (as above)", None, True),
            ("without step conformance", dict(monitors=True), True),
            ("without step conformance and abstract states", dict(monitors=True, abstract_states=False), True),
            ("without any monitor, trace on", {}, True), ("without monitors and trace", {}, False)]
    for label, switches, trace in rows:
        if switches is None:
            t = measure("controller", runs, 3, mix, 60_000, peak=False)
        else:
            with checks_off(ControllerCluster, **switches):
                t = measure("controller", runs, 3, mix, 60_000, trace=trace, peak=False)
        print(f"  {label:46s} {t['events'] / t['cpu']:9,.0f} events ({1e6 * t['cpu'] / t['events']:5.1f} us each, "
              f"{t['events'] / t['cpu'] / TARGET_EVENTS_PER_S:5.3f} x target)", flush=True)


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
    ap.add_argument("--runs", type=int, default=6, help="campaign runs per throughput row (default 6)")
    ap.add_argument("--mixes", default=",".join(DEFAULT_FAULT_MIXES),
                    help=f"fault mixes (default {','.join(DEFAULT_FAULT_MIXES)})")
    ap.add_argument("--failovers", type=int, default=50, help="master crashes measured (default 50; 0: none)")
    ap.add_argument("--no-ceiling", action="store_true",
                    help="leave out the rows that show the ceiling (the same runs with checks off; default: shown)")
    args = ap.parse_args()
    mixes = args.mixes.split(",")
    throughput(args.runs, mixes)
    if not args.no_ceiling:
        ceiling(args.runs, "mixed" if "mixed" in mixes else mixes[0])
        print(load())
    if not args.failovers:
        return
    started = time.perf_counter()
    times = failover_times(args.failovers)
    print(f"master crash -> new master accepting writes, {len(times)} seeds "
          f"({time.perf_counter() - started:.1f} s wall):")
    print(f"  p50 {percentile(times, 0.5):,.0f} ms  p95 {percentile(times, 0.95):,.0f} ms  max {max(times):,.0f} ms  "
          f"mean {statistics.mean(times):,.0f} ms")
    print("  bound from the timers: heartbeat timeout 10,000 ms + scan period 5,000 ms + election and role change")


if __name__ == "__main__":
    main()
