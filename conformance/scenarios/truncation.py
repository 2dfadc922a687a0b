"""The ``truncation`` scenario: 2 or 3 broker replicas, failovers with fresh master
epochs, writes acknowledged by the whole set, crashes that lose unflushed tails.

Steps, besides those every scenario understands (``conformance/scenarios/base.py``):

| step | meaning |
|---|---|
| ``failover N`` | N becomes master of the next epoch; every other live replica becomes its slave |
| ``write [COUNT]`` | a client writes COUNT (default 1) messages at the current master |
| ``expect epochs N e@s ...`` | N's epoch file, e.g. ``expect epochs r2 1@0 3@40`` |
| ``expect max N OFFSET`` | N's log ends at OFFSET |
| ``expect acknowledged COUNT`` | exactly COUNT messages were acknowledged so far |
| ``expect finding no_consistent_point`` / ``expect no-finding`` | a slave found (or no slave found) no consistent point where the logs diverge (a documented finding, not a violation) |

A restarted replica rejoins as a slave of the current master (the controller's job in
the full stack). Invariants (``spec/invariants/truncation.py``) are checked after
every activation.
"""
from __future__ import annotations

import random

import attrs

from conformance.errors import UserError
from conformance.faults import faults_of
from conformance.inputs import whole_number
from conformance.scenarios.base import MAX_WRITE_BURST, ExpectationFailed, RunSummary, SimCluster
from conformance.script import Script, Step
from conformance.targets import ScenarioTargets, resolve_targets
from results.runresult import Metric, RunConfig
from spec.truncation.messages import BecomeMaster, BecomeSlave, ClientWrite, ReplicaRole, WriteAcknowledged
from spec.invariants import truncation as inv
from spec.steps import BOOT, CRASH, MESSAGE, TICK, StepEvent
from spec.steps.replica import ReplicaSteps
from spec.truncation.replication import HandshakeOutcome, HeaderOutcome, RoleChangeOutcome


class TruncationCluster(SimCluster):
    scenario = "truncation"
    finding_name = "no_consistent_point"

    def __init__(self, script: Script, targets: ScenarioTargets, record_trace: bool = True):
        super().__init__(script, record_trace)
        self.target = targets
        replica = targets["broker"]
        self.master: str | None = None
        self.epoch = 0
        self.acknowledged: dict[str, int] = {}  # id -> offset, acknowledged by the whole set
        self.written = 0
        self._handshakes: dict[str, tuple | None] = {}
        self._seen: dict[str, tuple] = {}  # replica -> (node, version) when last judged
        self._master_seen: tuple | None = None  # (master, version, epoch, acknowledged count) when last judged
        self.failovers = 0
        self.elections: list[tuple[int, int, str]] = []  # (time, epoch, master) per failover
        # step conformance (spec/steps/replica.py): every step of every replica judged
        self.steps = self.new_steps()
        self.step_sink = None  # step_sink(event): e.g. conformance.traces.TraceWriter.write
        self._views: dict[str, tuple] = {}  # replica -> (node, version, view) at its last step

        def factory(node_id, durable, now, draw):
            return replica.make_node(node_id, self.peers, draw, durable, now)

        self._start_simulator(factory, (self._observe,))

    # ------------------------------------------------------------------ monitor

    def _observe(self, sim, node_id: str, incoming, ready) -> None:
        """Judge the replica that stepped if its state changed, and the current master
        against the acknowledged set if either changed (``full_check``: every replica
        and the master after every activation)."""
        node = sim.nodes[node_id]
        if node is None:
            self._views.pop(node_id, None)
            self._judge_step(StepEvent(node_id, sim.now, CRASH))
            if self.full_check:
                self._judge_all(sim)
            return
        if self.steps is not None or self.step_sink is not None:
            seen = self._views.get(node_id)
            view = seen[2] if seen is not None and seen[0] is node and seen[1] == node.version else node.observe()
            self._views[node_id] = (node, node.version, view)
            kind = MESSAGE if incoming is not None else TICK if ready is not None else BOOT
            self._judge_step(StepEvent(node_id, sim.now, kind, incoming.src if incoming is not None else None,
                                       incoming.payload if incoming is not None else None, view,
                                       ready.messages if ready is not None else ()))
        for m in ready.messages if ready is not None else ():
            if isinstance(m.payload, WriteAcknowledged):  # the client learns its write is safe
                where = next((o for o, _, x in node.observe().log if x == m.payload.id), -1)  # -1: not in its log
                self.acknowledged.setdefault(m.payload.id, where)
        if self.full_check:
            self._judge_all(sim)
            return
        if self._seen.get(node_id) != (node, node.version):  # (a node's version moves whenever its view does)
            self._seen[node_id] = (node, node.version)
            self._judge_replica(sim, node_id, node)
        master = sim.nodes.get(self.master) if self.master is not None else None
        seen = (master, master.version, self.epoch, len(self.acknowledged)) if master is not None else None
        if seen is not None and self._master_seen != seen:
            self._master_seen = seen
            self._judge_master(sim)

    def new_steps(self):
        return ReplicaSteps(self.peers)

    def _judge_step(self, event: StepEvent) -> None:
        if self.step_sink is not None:
            self.step_sink(event)
        if self.steps is not None:
            for found in self.steps.check(event):
                self.violate(found)

    def _judge_all(self, sim) -> None:
        for n in self.peers:
            if sim.nodes[n] is not None:
                self._judge_replica(sim, n, sim.nodes[n])
        self._judge_master(sim)

    def _judge_replica(self, sim, node_id: str, node) -> None:
        view = node.observe()
        for v in inv.replica_checks(view):
            self.violate(v)
        if view.last_handshake != self._handshakes.get(node_id):
            self._handshakes[node_id] = view.last_handshake
            master = sim.nodes.get(view.last_handshake[0]) if view.last_handshake else None
            if master is not None:  # (a master that died since it answered cannot be compared)
                found, finding = inv.check_handshake_progress(view, master.observe())
                if found is not None:
                    self.violate(found)
                if finding is not None:
                    self.add_finding(finding.node, finding.message)
            if master is not None and view.last_handshake[1] >= 0:
                found = inv.check_prefix_agreement(view, master.observe(), view.last_handshake[1])
                if found is not None:
                    self.violate(found)

    def _judge_master(self, sim) -> None:
        if self.master is not None and sim.nodes.get(self.master) is not None:
            m = sim.nodes[self.master].observe()
            if m.role is ReplicaRole.MASTER and m.epoch == self.epoch:
                found = inv.check_acknowledged(m, self.acknowledged)
                if found is not None:
                    self.violate(found)

    def run_summary(self) -> RunSummary:
        return RunSummary(
            elections=len(self.elections),
            leader_changes=sum(1 for a, b in zip(self.elections, self.elections[1:]) if a[2] != b[2]),
            max_term=self.epoch,
            metrics=(Metric("acknowledged_messages", float(len(self.acknowledged))),
                     Metric("written_messages", float(self.written)), *self.finding_metrics()),
        )

    # ------------------------------------------------------------------ steps

    def step_failover(self, step: Step) -> None:
        n = self.node_arg(step)
        if self.sim.nodes[n] is None:
            raise UserError(f"line {step.line}: failover to {n}, which is down")
        self.epoch += 1
        self.master = n
        self.failovers += 1
        self.elections.append((self.sim.now, self.epoch, n))
        self.sim.client(n, BecomeMaster(self.epoch))
        for p in self.peers:
            if p != n and self.sim.nodes[p] is not None:
                self.sim.client(p, BecomeSlave(n, self.epoch))

    def step_restart(self, step: Step) -> None:
        n = self.node_arg(step)
        self.sim.restart(n)
        if self.master is not None and n != self.master:
            self.sim.client(n, BecomeSlave(self.master, self.epoch))

    def step_restart_all(self, step: Step) -> None:
        for n in self.peers:
            if self.sim.nodes[n] is None:
                self.step_restart(Step("restart", (n,), step.line))

    def step_write(self, step: Step) -> None:
        count = self.int_arg(step, 0, 1, 1, MAX_WRITE_BURST)
        if self.master is None:
            return
        for _ in range(count):
            self.written += 1
            self.sim.client(self.master, ClientWrite(f"w{self.written}"))

    # ------------------------------------------------------------------ expectations

    def _view(self, step: Step, where: str):
        n = self.node_arg(step, 1)
        node = self.sim.nodes[n]
        if node is None:
            raise ExpectationFailed(f"{where}: {n} is down")
        return node.observe()

    def expect_epochs(self, step: Step, where: str) -> None:
        v = self._view(step, where)
        want = [tuple(whole_number(x, f"{where}: EPOCH@START", 0) for x in a.split("@", 1)) for a in step.args[2:]]
        got = [(e.epoch, e.start_offset) for e in v.epoch_file.entries]
        if got != want:
            raise ExpectationFailed(f"{where}: but {v.node_id} has {v.epoch_file.render()}")

    def expect_max(self, step: Step, where: str) -> None:
        v = self._view(step, where)
        if v.max_offset != self.int_arg(step, 2):
            raise ExpectationFailed(f"{where}: but {v.node_id}'s log ends at {v.max_offset}")

    def expect_acknowledged(self, step: Step, where: str) -> None:
        if len(self.acknowledged) != self.int_arg(step, 1):
            raise ExpectationFailed(f"{where}: but {len(self.acknowledged)} were acknowledged")


def truncation_outcomes() -> dict[str, tuple[str, ...]]:
    return {
        "change_to_master": tuple(o.value for o in RoleChangeOutcome),
        "change_to_slave": tuple(o.value for o in RoleChangeOutcome),
        "slave_handshake": tuple(o.value for o in HandshakeOutcome),
        "on_transfer_header": tuple(o.value for o in HeaderOutcome),
        "client_write": ("APPENDED", "NOT_MASTER"),
    }


def generate_truncation_script(config: RunConfig, fault_mixes: dict) -> Script:
    """Failovers between 2 or 3 replicas, writes, crashes with flush loss, restarts."""
    faults = faults_of(config.fault_mix, fault_mixes)
    if config.group_size not in (2, 3):
        raise UserError(f"the truncation scenario has 2 or 3 replicas, not {config.group_size}")
    rng = random.Random(f"{config.seed}:plan")
    nodes = tuple(f"r{i}" for i in range(1, config.group_size + 1))
    steps: list[Step] = [Step("run", ("50",)), Step("failover", (rng.choice(nodes),))]
    down: set[str] = set()
    elapsed = 0
    while elapsed < config.duration_ms:
        choice = rng.choice(("write", "write", "failover", "run") + tuple(f for f in faults if f != "isolate-leader"))
        up = [n for n in nodes if n not in down]
        if choice == "write":
            steps.append(Step("write", (str(rng.randint(1, 4)),)))
        elif choice == "failover" and up:
            steps.append(Step("failover", (rng.choice(up),)))
        elif choice in ("crash", "crash-leader"):
            if down and rng.random() < 0.5:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
            elif len(up) > 1:
                n = rng.choice(up)
                down.add(n)
                steps.append(Step("crash", (n,)))
                if rng.random() < 0.5:  # the controller fails over when the master dies
                    steps.append(Step("failover", (rng.choice([x for x in up if x != n]),)))
        elif choice in ("partition", "block"):
            a, b = rng.sample(nodes, 2)
            steps.append(Step("partition", (a, "|", b)) if choice == "partition" else Step("block", (a, b)))
            if rng.random() < 0.5:
                steps.append(Step("heal"))
        elif choice == "lossy":
            steps.append(Step("net", ("1..100", f"drop={rng.choice(('0.05', '0.2'))}", "dup=0.05")))
        ms = rng.randint(50, 1500)
        steps.append(Step("run", (str(ms),)))
        elapsed += ms
    steps += [Step("heal"), Step("net", ("default",)), Step("restart-all")]
    steps.append(Step("failover", (rng.choice(nodes),)))
    steps += [Step("write", ("2",)), Step("run", ("3000",))]
    return Script("truncation", nodes, config.seed, config.profile, config.adapter, start_spread_ms=0,
                  steps=tuple(steps))


def build_truncation(script: Script, adapter: str, record_trace: bool = True):
    return TruncationCluster(script, resolve_targets("truncation", adapter, script.profile), record_trace)
