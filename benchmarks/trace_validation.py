"""``rmqha validate`` over a long trace: steps judged per second and peak memory.

Writes the step trace of one long run of the reference (3 DLedger nodes; a client
append every few seconds, a crashed leader or a partition now and then, each healed)
until it holds ``--events`` steps (default 10 million), then validates it in a child
process (``rmqha validate``) at two lengths, a tenth and the whole, and prints the rate
(per wall and per CPU second) and the child's peak RSS for each: memory must not grow
with the trace (target: the whole trace in at most 1.2x the peak of its tenth). The
trace goes to a temporary directory (about 260 bytes a step) unless ``--keep FILE``;
with ``--pipe`` it is never stored: each length is generated again (the run is seeded)
straight into ``rmqha validate -``'s standard input, so 10 million steps need no disk.
``--pipe --chunk N`` runs the simulation for N steps only and pipes that run again and
again (every node crashed between two copies, then booted afresh, times shifted on), so
the rate measured is the validator's, not the simulator's.

    python benchmarks/trace_validation.py [--events N] [--keep FILE | --pipe [--chunk N]]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
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
    with path.open("w", encoding="utf-8") as f:
        return trace_into(f, events)


def trace_into(f, events: int) -> float:
    """One long run's steps written to ``f``, cut at ``events`` steps; returns the seconds it took."""
    nodes = ("n1", "n2", "n3")
    script = Script("dledger", nodes, 1, "dledger-0.4", "reference", start_spread_ms=500)
    started = time.perf_counter()
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


class _Repeat:
    """A file-like sink that keeps the first chunk's event lines, for ``repeat``."""

    def __init__(self):
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)


_TIME = re.compile(r'"time":(\d+)')


def repeat(out, chunk: list[str], events: int) -> None:
    """``events`` steps: the chunk's header, then its events again and again, every node
    crashed between two copies (a boot starts each node afresh) and times shifted on."""
    header, body = chunk[0], chunk[1:]
    nodes = json.loads(header)["nodes"]
    span = max(int(m.group(1)) for m in map(_TIME.search, body[-50:]) if m) + 1000
    out.write(header)
    written, shift = 0, 0
    while written < events:
        if shift:
            for n in nodes:
                out.write(json.dumps({"node": n, "time": shift, "input": "crash"}, separators=(",", ":")) + "\n")
            written += len(nodes)
        for line in body[:max(0, events - written)]:
            out.write(_TIME.sub(lambda m: f'"time":{int(m.group(1)) + shift}', line, count=1) if shift else line)
        written += min(len(body), max(0, events - written))
        shift += span


def validate_piped(events: int, chunk: list[str] | None = None) -> tuple[float, float, float, str]:
    """(wall s, CPU s of the validator, its peak RSS MiB, last output line): ``events`` steps
    generated into ``rmqha validate -`` through a pipe (nothing stored)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "cli", "validate", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent)
    if chunk is None:
        trace_into(proc.stdin, events)
    else:
        repeat(proc.stdin, chunk, events)
    proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()  # (validate prints only at the end)
    proc.wait()
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"validate failed ({proc.returncode}): {out[-500:]} {err[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024, out.splitlines()[-2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--keep", metavar="FILE", default=None, help="write the trace here and keep it")
    ap.add_argument("--pipe", action="store_true",
                    help="generate each length into rmqha validate's standard input; store nothing")
    ap.add_argument("--chunk", type=int, default=0, metavar="N",
                    help="with --pipe: simulate N steps once and pipe them again and again (default: simulate all)")
    args = ap.parse_args()
    if args.pipe:
        chunk = None
        if args.chunk:
            sink = _Repeat()
            trace_into(sink, args.chunk)
            chunk = sink.lines
        print(f"trace: {args.events} steps through a pipe (nothing stored"
              + (f"; a run of {args.chunk} steps repeated" if chunk else "") + f"); load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        report(args.events, validate_piped(args.events // 10, chunk), validate_piped(args.events, chunk))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "bench.trace.jsonl"
        seconds = write_trace(path, args.events)
        size = path.stat().st_size
        print(f"trace: {args.events} steps, {size / 2**20:.0f} MiB ({size / args.events:.0f} bytes a step), "
              f"written in {seconds:.0f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        # RUSAGE_CHILDREN's peak is the largest child so far: the tenth runs first
        report(args.events, validate_prefix(path, args.events // 10), validate_prefix(path, 0))


def report(events: int, tenth: tuple, whole: tuple) -> None:
    print(f"{'steps':>12s} {'wall s':>8s} {'CPU s':>8s} {'steps/wall s':>13s} {'steps/CPU s':>12s} {'peak MiB':>9s}")
    for n, (wall, cpu, peak, _) in ((events // 10, tenth), (events, whole)):
        print(f"{n:12d} {wall:8.1f} {cpu:8.1f} {n / wall:13.0f} {n / cpu:12.0f} {peak:9.1f}")
    print(f"  {whole[3].strip()}")
    ratio = whole[2] / tenth[2]
    verdict = "met" if ratio <= MEMORY_TARGET else "MISSED"
    print(f"memory: the whole trace peaks at {ratio:.2f}x its tenth; target <= {MEMORY_TARGET}x: {verdict}")


if __name__ == "__main__":
    main()
