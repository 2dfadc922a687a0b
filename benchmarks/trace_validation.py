"""``rmqha validate`` over a long trace: steps judged per second and peak memory.

Writes the step trace of one long run of the reference (3 DLedger nodes; a client
append every few seconds, a crashed leader or a partition now and then, each healed)
until it holds ``--events`` steps (default 10 million), then validates it in a child
process (``rmqha validate``) at two lengths, a tenth and the whole, and prints the rate
(per wall and per CPU second) and the child's peak RSS for each: memory must not grow
with the trace (target: the whole trace in at most 1.2x the peak of its tenth). The
trace goes to a temporary directory (about 260 bytes a step) unless ``--keep FILE``.

    python benchmarks/trace_validation.py [--events N] [--keep FILE]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.scenarios.dledger import DLedgerCluster  # noqa: E402
from conformance.script import Script, Step  # noqa: E402
from conformance.targets import dledger_target  # noqa: E402
from conformance.traces import TraceWriter  # noqa: E402
from spec.dledger.profiles import DEFAULT_TIMING  # noqa: E402

MEMORY_TARGET = 1.2  # peak RSS over the whole trace / over its first tenth


class _Enough(Exception):
    pass


def write_trace(path: Path, events: int) -> float:
    """One long run's steps, cut at ``events`` steps; returns the seconds it took."""
    nodes = ("n1", "n2", "n3")
    script = Script("dledger", nodes, 1, "dledger-0.4", "reference", start_spread_ms=500)
    started = time.perf_counter()
    with path.open("w", encoding="utf-8") as f:
        writer = TraceWriter(f, "dledger", nodes, "dledger-0.4", "rmqha reference (benchmark)", "each-step")
        written = 0

        def sink(event):
            nonlocal written
            writer.write(event)
            written += 1
            if written >= events:
                raise _Enough

        cluster = DLedgerCluster(script, dledger_target("reference", "dledger-0.4", DEFAULT_TIMING),
                                 record_trace=False)
        cluster.steps = None  # the run only writes; validation judges
        cluster.step_sink = sink
        rng = random.Random(1)
        body = 0
        try:
            while True:
                body += 1
                cluster.do(Step("append-leader", (f"m{body}",)))
                cluster.do(Step("run", (str(rng.randint(500, 4000)),)))
                roll = rng.random()
                if roll < 0.03:
                    cluster.do(Step("crash-leader"))
                    cluster.do(Step("run", (str(rng.randint(100, 3000)),)))
                    cluster.do(Step("restart-all"))
                elif roll < 0.06:
                    cluster.do(Step("isolate-leader"))
                    cluster.do(Step("run", (str(rng.randint(1000, 9000)),)))
                    cluster.do(Step("heal"))
        except _Enough:
            pass
    return time.perf_counter() - started


def validate_prefix(path: Path, lines: int) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MiB, last output line) of ``rmqha validate`` on the first ``lines`` lines."""
    prefix = path if lines <= 0 else path.with_suffix(f".{lines}.jsonl")
    if lines > 0:
        with path.open(encoding="utf-8") as src, prefix.open("w", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                if i > lines:
                    break
                dst.write(line)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cli", "validate", str(prefix)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"validate failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024, proc.stdout.splitlines()[-2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--keep", metavar="FILE", default=None, help="write the trace here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "bench.trace.jsonl"
        seconds = write_trace(path, args.events)
        size = path.stat().st_size
        print(f"trace: {args.events} steps, {size / 2**20:.0f} MiB ({size / args.events:.0f} bytes a step), "
              f"written in {seconds:.0f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        # RUSAGE_CHILDREN's peak is the largest child so far: the tenth runs first
        tenth = validate_prefix(path, args.events // 10)
        whole = validate_prefix(path, 0)
        print(f"{'steps':>12s} {'wall s':>8s} {'CPU s':>8s} {'steps/wall s':>13s} {'steps/CPU s':>12s} {'peak MiB':>9s}")
        for n, (wall, cpu, peak, _) in ((args.events // 10, tenth), (args.events, whole)):
            print(f"{n:12d} {wall:8.1f} {cpu:8.1f} {n / wall:13.0f} {n / cpu:12.0f} {peak:9.1f}")
        print(f"  {whole[3].strip()}")
        ratio = whole[2] / tenth[2]
        verdict = "met" if ratio <= MEMORY_TARGET else "MISSED"
        print(f"memory: the whole trace peaks at {ratio:.2f}x its tenth; target <= {MEMORY_TARGET}x: {verdict}")


if __name__ == "__main__":
    main()
