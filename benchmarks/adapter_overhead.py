"""Adapter overhead: handler-level calls per second through each transport, against the targets.

One call is what a conformance test makes: ``adapter.invoke("dledger.handle_vote", ...)``
(rmqha records encoded to JSON, sent, answered, the answer decoded back to a spec
record). The implementation on the other side is the dependency-free Java shim
(tests/fixtures/java/RmqhaShim.java, compiled here with ``javac``), whose own work per
call is small (its handler 2-3 microseconds; its process 6-8 a call in all, pipe calls
and the JVM's threads included, when it shares a CPU with this one), so the figure is
the transport's and rmqha's overhead:

* ``stdio``: the shim as a process speaking JSON lines (``stdio:java -cp DIR RmqhaShim``);
* ``jvm``: the same class in this process through JPype (``jvm:DIR:RmqhaShim``);
* ``stdio`` to ``rmqha serve-stdio`` (the Python reference) and ``reference`` in process,
  for comparison (not judged).

Calls are timed after a warm-up of up to 1 s (steady state: the JVM's JIT has compiled
the shim). Targets: stdio >= 20,000 calls/s, JPype >= 50,000 calls/s, judged per CPU-second of
this process plus its children (the stdio server runs in a child; on a shared machine
wall time mostly measures the neighbours). Calls are made as ``rmqha check`` makes them:
beside the implementation on one CPU (``adapters.placement``; on two CPUs a call costs
two to three times as much, each request and answer waking the other CPU: docs/performance.md,
"Co-location"); ``RMQHA_COLOCATE=0`` shows the kernel's own placement. JPype calls run
on the calling thread (adapters/jvm_calls.py); ``RMQHA_JVM_WATCHDOG=thread`` shows them
handed to a watchdog thread, as before session 7. Usage:

    python benchmarks/adapter_overhead.py [--seconds S]
"""
from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapters import colocated_with, placement, resolve  # noqa: E402
from benchmarks.throughput import load, process_cpu, verdict  # noqa: E402
from spec.dledger.member_state import MemberView  # noqa: E402
from spec.dledger.records import Role, VoteRequest  # noqa: E402

TARGETS = {"stdio": 20_000, "jvm": 50_000}

MEMBER = MemberView(self_id="n1", peers=frozenset({"n1", "n2", "n3"}), curr_term=3, voted_for=None, leader_id=None,
                    role=Role.FOLLOWER, ledger_end_term=2, ledger_end_index=7, taking_leadership=False)
REQUEST = VoteRequest(term=3, candidate="n2", ledger_end_term=2, ledger_end_index=7, round=1)


def cpu_seconds() -> float:
    """CPU time of this process (threads included: JPype runs the JVM in it)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def bench(spec: str, seconds: float) -> tuple[int, float, float]:
    """(calls, wall s, CPU s) of handle_vote calls through ``spec`` for about ``seconds``."""
    adapter = resolve(spec, fresh=True)
    pid = getattr(getattr(adapter, "proc", None), "pid", None)
    args = {"member": MEMBER, "request": REQUEST, "self_vote": False}
    # as rmqha check calls an implementation: beside it on one CPU (adapters.placement)
    with colocated_with(adapter):
        return _timed(adapter, pid, args, seconds)


def _timed(adapter, pid, args, seconds: float) -> tuple[int, float, float]:
    try:
        # warm-up: the codec's compiled decoders and, above all, the JVM's JIT (after 200
        # calls the Java shim still runs interpreted: 2-3x its steady-state cost per call)
        warm_until = time.perf_counter() + min(1.0, seconds)
        while time.perf_counter() < warm_until:
            for _ in range(100):
                adapter.invoke("dledger.handle_vote", args)
        calls = 0
        child0 = process_cpu(pid) if pid else 0.0
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        end = wall0 + seconds
        while time.perf_counter() < end:
            for _ in range(500):
                adapter.invoke("dledger.handle_vote", args)
            calls += 500
        wall = time.perf_counter() - wall0
        cpu = cpu_seconds() - cpu0 + ((process_cpu(pid) - child0) if pid else 0.0)
    finally:
        adapter.close()
    return calls, wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="timed seconds per transport (default 3)")
    args = ap.parse_args()
    if shutil.which("javac") is None:
        print("javac is not installed: the Java shim cannot be built", file=sys.stderr)
        return 2
    classes = tempfile.mkdtemp(prefix="rmqha-bench-shim-")
    subprocess.run(["javac", "-d", classes, str(ROOT / "tests/fixtures/java/RmqhaShim.java")], check=True)
    rows = [
        ("stdio", "Java shim over stdio", f"stdio:java -cp {classes} RmqhaShim"),
        ("jvm", "Java shim through JPype", f"jvm:{classes}:RmqhaShim"),
        (None, "reference over stdio (rmqha serve-stdio)", f"stdio:{sys.executable} -m cli serve-stdio"),
        (None, "reference in process", "reference"),
    ]
    print(f"dledger.handle_vote through each transport, {args.seconds:g} s each; {load()}")
    home = placement.home_cpu()
    print(f"co-location: {f'on CPU {home} with the implementation' if home is not None else 'off'} "
          f"(adapters.placement; {placement.ENV}=0 turns it off)")
    print(f"{'transport':42s} {'calls':>8s} {'calls/wall s':>12s} {'calls/cpu s':>11s} {'target':>7s} {'x target':>10s}")
    missed = []
    for key, label, spec in rows:
        calls, wall, cpu = bench(spec, args.seconds)
        per_cpu = calls / cpu if cpu > 0 else float("inf")
        if key is None:
            judged = f"{'-':>7s} {'':>10s}"
        else:
            ratio = per_cpu / TARGETS[key]
            judged = f"{TARGETS[key]:7,} {ratio:6.2f} {verdict(ratio):>3s}"
            if ratio < 1:
                missed.append(key)
        print(f"{label:42s} {calls:8,} {calls / wall:12,.0f} {per_cpu:11,.0f} {judged}", flush=True)
    shutil.rmtree(classes, ignore_errors=True)
    print(load())
    print(f"targets MISSED: {', '.join(missed)}" if missed else "targets met (stdio and JPype)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
