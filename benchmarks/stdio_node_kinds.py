"""Node kinds over stdio: the controller and truncation campaigns on rmqha's reference, in
process and behind ``rmqha serve-stdio`` (the same seeds, so the same runs), timed per
wall second and per CPU-second (this process and the server's; the server started
beforehand, as a campaign keeps it; the runs beside it on one CPU, as every run against an
implementation in another process is: ``adapters.placement``), against the target:
the stdio reference within 3x of the in-process campaign speed for the controller
scenario (issue 12). The truncation row is printed for information.

    python benchmarks/stdio_node_kinds.py [--runs N] [--duration MS]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import adapters  # noqa: E402
from adapters import placement  # noqa: E402
from benchmarks.throughput import load, process_cpu, verdict  # noqa: E402
from conformance.campaign import execute, plan_configs  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402

TARGET_SLOWDOWN = 3.0  # stdio / in process, wall and CPU, controller scenario
STDIO = f"stdio:{sys.executable} -m cli serve-stdio"


def outcome(e) -> str:
    return "error" if e.error else "fail" if e.violations else "pass"


def server_cpu(adapter: str) -> float:
    """CPU seconds the stdio server has used so far (0 in process)."""
    proc = getattr(adapters.resolve(adapter), "proc", None)
    return 0.0 if proc is None else process_cpu(proc.pid)


def timed(scripts, adapter: str) -> tuple[float, float, str]:
    """Wall and CPU seconds (this process and the server's) for every script, the server
    already started (its start-up is not the campaign's speed); the verdicts."""
    server0 = server_cpu(adapter)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    verdicts = [outcome(execute(s, adapter, record_trace=True)) for s in scripts]
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0 + server_cpu(adapter) - server0
    adapters.close_all()
    return wall, cpu, ",".join(sorted(set(verdicts)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # 40: the plan's mix of group sizes and fault mixes, as a campaign runs them (over 40 and
    # over 100 runs the ratio agrees; 4 or 10 runs weigh the first few configurations)
    parser.add_argument("--runs", type=int, default=40, help="seeded runs per scenario (default: 40)")
    parser.add_argument("--duration", type=int, default=20_000, help="fault phase of each run, ms (default: 20000)")
    args = parser.parse_args()
    print(f"reference in process vs {STDIO!r}, {args.runs} runs per scenario, {args.duration} ms of faults; {load()}")
    print(f"target: the controller scenario over stdio within {TARGET_SLOWDOWN:g}x of in process (wall and CPU)")
    print(f"co-location: {'off' if placement.home_cpu() is None else 'on'} (runs over stdio beside the server on "
          f"one CPU, as rmqha runs them: adapters.placement; {placement.ENV}=0 turns it off)")
    print(f"{'scenario':10s} {'in-proc wall s':>14s} {'stdio wall s':>12s} {'x wall':>7s} {'in-proc cpu s':>13s} "
          f"{'stdio cpu s':>11s} {'x cpu':>6s} {'verdicts':>9s}")
    missed = []
    for name in ("controller", "truncation"):
        scenario = get_scenario(name)
        scripts = [scenario.generate(c) for c in plan_configs(
            "bench", args.runs, 0, scenario=name, duration_ms=args.duration)]
        wall_in, cpu_in, v_in = timed(scripts, "reference")
        wall_io, cpu_io, v_io = timed(scripts, STDIO)
        x_wall, x_cpu = wall_io / wall_in, cpu_io / cpu_in
        judged = ""
        if name == "controller":
            ok = max(x_wall, x_cpu) <= TARGET_SLOWDOWN
            judged = f" {verdict(1.0 if ok else 0.0)}"
            if not ok:
                missed.append(name)
        same = v_in == v_io
        print(f"{name:10s} {wall_in:14.2f} {wall_io:12.2f} {x_wall:7.2f} {cpu_in:13.2f} {cpu_io:11.2f} {x_cpu:6.2f} "
              f"{v_in if same else v_in + '/' + v_io:>9s}{judged}", flush=True)
        if not same:
            missed.append(f"{name} (verdicts differ)")
    print(load())
    print(f"target MISSED: {', '.join(missed)}" if missed else "target met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
