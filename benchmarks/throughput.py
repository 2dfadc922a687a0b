"""What the throughput benchmarks share: seeded runs with trace and invariants on, timed
per wall second and per CPU-second, and the machine's load to quote beside them."""
from __future__ import annotations

import os
import resource
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import adapters
from conformance.campaign import execute, plan_configs
from conformance.scenarios.dledger import DLedgerCluster
from conformance.scenarios.registry import get_scenario
from reference.node_api import NOTHING, TICK_MS, Message, Ready
from reference.simulator import Simulator


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def process_cpu(pid: int) -> float:
    """CPU seconds a live process (a stdio implementation's server) has used so far, read
    from /proc; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_with_implementations() -> float:
    """CPU seconds of this process and of the implementations' processes: the live ones
    rmqha's adapters keep open between runs (read from /proc: a live child is in no
    rusage) and those already ended."""
    me, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    live = sum(process_cpu(proc.pid) for a in adapters.open_adapters() if (proc := getattr(a, "proc", None)))
    return me.ru_utime + me.ru_stime + ended.ru_utime + ended.ru_stime + live


def measure(scenario_name: str, runs: int, size: int, mix: str, duration_ms: int, trace: bool = True,
            peak: bool = True) -> dict:
    """Run ``runs`` seeded scripts on the reference with trace and invariants on: simulated
    ms, protocol events (deliveries and timer firings), node wake-ups and the idle ones,
    wall and CPU seconds, and the peak memory of one run (tracemalloc)."""
    scenario = get_scenario(scenario_name)
    scripts = [scenario.generate(c) for c in plan_configs(
        "bench", runs, 0, scenario=scenario_name, group_sizes=(size,), fault_mixes=(mix,), duration_ms=duration_ms)]
    totals = dict(sim_ms=0, events=0, wakeups=0, idle=0)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for script in scripts:
        sim = execute(script, "reference", record_trace=trace).cluster.sim
        totals["sim_ms"] += sim.now
        totals["events"] += sim.deliveries + sim.timer_firings
        totals["wakeups"] += sim.ticks
        totals["idle"] += sim.ticks - sim.timer_firings
    totals["wall"] = time.perf_counter() - wall0
    totals["cpu"] = time.process_time() - cpu0
    if not peak:
        return totals
    tracemalloc.start()
    execute(scripts[0], "reference", record_trace=True)
    totals["peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return totals


@contextmanager
def checks_off(cluster: type = DLedgerCluster, step_checks: bool = False, abstract_states: bool = True,
               monitors: bool = False):
    """For the ceiling rows only: the same runs with a scenario's step conformance, its
    abstract states (the search's coverage) or its whole monitor (invariants, step checks,
    leader or master tracking) switched off, to show how far the targets are even without
    them. A run then differs only where a script step waits for what the monitor sees
    (crash-after-vote/-truncation strike at their deadline, await-master waits it out)."""
    saved = cluster.new_steps, cluster._observe, cluster._note_abstract_state
    if not step_checks:
        cluster.new_steps = lambda self: None
    if not abstract_states:
        cluster._note_abstract_state = lambda self, node_id, incoming: None
    if not monitors:
        cluster._observe = lambda self, sim, node_id, incoming, ready: None
    try:
        yield
    finally:
        cluster.new_steps, cluster._observe, cluster._note_abstract_state = saved


class EchoNode:
    """The least a node can do: every 10 ms it pings each peer, and it answers each ping
    with a pong. With it, what is measured is the simulator's own cost per event."""

    def __init__(self, node_id: str, peers: tuple, now: int):
        self.node_id, self.peers, self._next = node_id, tuple(p for p in peers if p != node_id), now

    def tick(self, now: int) -> Ready:
        self._next = now + TICK_MS
        return Ready(tuple(Message(self.node_id, p, "ping") for p in self.peers))

    def step(self, message: Message, now: int) -> Ready:
        return Ready((Message(self.node_id, message.src, "pong"),)) if message.payload == "ping" else NOTHING

    def next_deadline(self) -> int:
        return self._next

    def summary(self) -> None:
        return None


def measure_simulator_alone(size: int, sim_ms: int, trace: bool) -> dict:
    """Events per CPU-second of the simulator driving ``EchoNode``s (no monitor)."""
    peers = tuple(f"n{i}" for i in range(1, size + 1))
    sim = Simulator(0, peers, lambda node_id, durable, now, draw: EchoNode(node_id, peers, now), record_trace=trace)
    cpu0 = time.process_time()
    sim.run_until(sim_ms)
    cpu = time.process_time() - cpu0
    return dict(events=sim.deliveries + sim.timer_firings, cpu=cpu, sim_ms=sim.now)


def verdict(ratio: float) -> str:
    return "ok" if ratio >= 1.0 else "MISS"
