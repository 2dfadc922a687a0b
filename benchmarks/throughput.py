"""What the throughput benchmarks share: seeded runs with trace and invariants on, timed
per wall second and per CPU-second, and the machine's load to quote beside them."""
from __future__ import annotations

import os
import time
import tracemalloc

from conformance.campaign import execute, plan_configs
from conformance.scenarios.registry import get_scenario


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def measure(scenario_name: str, runs: int, size: int, mix: str, duration_ms: int) -> dict:
    """Run ``runs`` seeded scripts on the reference with trace and invariants on: simulated
    ms, protocol events (deliveries and timer firings), node wake-ups and the idle ones,
    wall and CPU seconds, and the peak memory of one run (tracemalloc)."""
    scenario = get_scenario(scenario_name)
    scripts = [scenario.generate(c) for c in plan_configs(
        "bench", runs, 0, scenario=scenario_name, group_sizes=(size,), fault_mixes=(mix,), duration_ms=duration_ms)]
    totals = dict(sim_ms=0, events=0, wakeups=0, idle=0)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for script in scripts:
        sim = execute(script, "reference", record_trace=True).cluster.sim
        totals["sim_ms"] += sim.now
        totals["events"] += sim.deliveries + sim.timer_firings
        totals["wakeups"] += sim.ticks
        totals["idle"] += sim.ticks - sim.timer_firings
    totals["wall"] = time.perf_counter() - wall0
    totals["cpu"] = time.process_time() - cpu0
    tracemalloc.start()
    execute(scripts[0], "reference", record_trace=True)
    totals["peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return totals


def verdict(ratio: float) -> str:
    return "ok" if ratio >= 1.0 else "MISS"
