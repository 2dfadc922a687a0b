"""The ``truncation`` scenario: 2 or 3 broker replicas, failovers with fresh master
epochs, writes acknowledged by the whole set, crashes that lose unflushed tails.

Steps, besides those every scenario understands (``conformance/scenarios/base.py``):

| step | meaning |
|---|---|
| ``failover N`` | N becomes master of the next epoch; every other live replica becomes its slave |
| ``write [COUNT [N]]`` | a client writes COUNT (default 1) messages at the current master, or at N whatever its role (a producer with a stale route: a replica that is not master must refuse) |
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
from conformance.scenarios.edits import lossy_net, overlay_stretch, probed, stretch_of
from conformance.script import Script, Step
from conformance.targets import ScenarioTargets, resolve_targets
from results.runresult import Metric, RunConfig
from spec.truncation import abstract
from spec.truncation.messages import (
    IN_ORDER_ON_SLAVES_CONNECTION, ON_SLAVES_CONNECTION, BecomeMaster, BecomeSlave, ClientWrite, ReplicaRole,
    WriteAcknowledged,
)
from spec.invariants import truncation as inv
from spec.steps import BOOT, CRASH, MESSAGE, TICK, StepEvent
from spec.steps.replica import ReplicaSteps
from spec.truncation.replication import HandshakeOutcome, HeaderOutcome, RoleChangeOutcome


class TruncationCluster(SimCluster):
    scenario = "truncation"
    on_receivers_connection = ON_SLAVES_CONNECTION
    in_order = IN_ORDER_ON_SLAVES_CONNECTION
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
        self._views: dict[str, tuple] = {}  # replica -> (node, version, view) when last observed
        self._group_seen = None  # (views, master, epoch, every replica's abstract state)
        # slave-catches-up: when the latest failover was made on a healthy set (None: none
        # since, or a fault came after it), and (master, max offset, since when) of the master
        self._healthy_failover_at: int | None = None
        self._master_end: tuple | None = None
        self._written_since_failover: list[str] = []  # write-acknowledged: ids sent to the master since

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
            view = self._view_of(node_id)
            kind = MESSAGE if incoming is not None else TICK if ready is not None else BOOT
            self._judge_step(StepEvent(node_id, sim.now, kind, incoming.src if incoming is not None else None,
                                       incoming.payload if incoming is not None else None, view,
                                       ready.messages if ready is not None else ()))
        for m in ready.messages if ready is not None else ():
            if isinstance(m.payload, WriteAcknowledged):  # the client learns its write is safe
                where = next((o for o, _, x in node.observe().log if x == m.payload.id), -1)  # -1: not in its log
                self.acknowledged.setdefault(m.payload.id, where)
        self._note_abstract_state(node_id, incoming)
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

    def _note_master_end(self, view) -> None:
        """When the master's log last changed (slave-catches-up waits for it to be quiet)."""
        end = (self.master, self.epoch, view.max_offset)
        if self._master_end is None or self._master_end[:3] != end:
            self._master_end = (*end, self.sim.now)

    def _view_of(self, node_id: str):
        """A live replica's view, observed again only when its version moved (None: down)."""
        node = self.sim.nodes[node_id]
        if node is None:
            return None
        seen = self._views.get(node_id)
        if seen is not None and seen[0] is node and seen[1] == node.version:
            return seen[2]
        view = node.observe()
        self._views[node_id] = (node, node.version, view)
        return view

    def _note_abstract_state(self, node_id: str, incoming) -> None:
        """Count the abstract state of the group a replica's step reached (spec/truncation/abstract.py)."""
        views = tuple(self._view_of(n) for n in self.peers)
        seen = self._group_seen
        # worked out again only when a view, the master or the epoch changed (views are
        # immutable: the same objects, the same states)
        if seen is None or seen[1:3] != (self.master, self.epoch) or any(a is not b for a, b in zip(seen[0], views)):
            seen = self._group_seen = (views, self.master, self.epoch,
                                       abstract.group_state(dict(zip(self.peers, views)), self.master, self.epoch))
        masters = sum(1 for v in views if v is not None and v.role is ReplicaRole.MASTER)
        self.note_abstract_state(abstract.state_of_step(seen[3][node_id], self.event_kind(incoming), masters,
                                                        self.network_condition()))

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
            m = self._view_of(self.master)
            self._note_master_end(m)
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

    # ------------------------------------------------------------------ liveness

    def step_run(self, step: Step) -> None:
        super().step_run(step)
        self._judge_catch_up()

    def do(self, step: Step) -> None:
        super().do(step)
        if self.faults_active():
            self._healthy_failover_at = None

    def _judge_catch_up(self) -> None:
        """slave-catches-up, after each wait (``run``) since a failover made on a healthy set
        that stayed healthy, once the master has been quiet for ``CATCH_UP_MS``."""
        master = self.sim.nodes.get(self.master) if self.master is not None else None
        if self._healthy_failover_at is None or self.faults_active() or master is None:
            return
        m = self._view_of(self.master)
        self._note_master_end(m)
        quiet = self.sim.now - max(self._healthy_failover_at, self._master_end[3])
        if quiet < CATCH_UP_MS:
            return
        behind = 0
        for n in self.peers:
            if n != self.master and self.sim.nodes[n] is not None:
                found = inv.check_slave_caught_up(self._view_of(n), m, quiet)
                if found is not None:
                    self.violate(found)
                if not inv.holds_masters_log(self._view_of(n), m):  # (behind, or excused)
                    behind += 1
        if not behind:
            found = inv.check_writes_acknowledged(m, self._written_since_failover, self.acknowledged)
            if found is not None:
                self.violate(found)

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
        self._healthy_failover_at = None if self.faults_active() else self.sim.now
        self._written_since_failover = []

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
        # a producer with a stale route writes to the replica it names, whatever its role
        target = self.node_arg(step, 1) if len(step.args) > 1 else self.master
        if target is None:
            return
        for _ in range(count):
            self.written += 1
            if target == self.master:
                self._written_since_failover.append(f"w{self.written}")
            self.sim.client(target, ClientWrite(f"w{self.written}"))

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
    steps += healing_end(rng.choice(nodes))
    return Script("truncation", nodes, config.seed, config.profile, config.adapter, start_spread_ms=0,
                  steps=tuple(steps))


# slave-catches-up: how long after a failover on a healthy set, and after the master's last
# write, every slave must hold the master's log. The reference over 600 runs on a healthy
# network: a slave reached its master's end 16 ms after a change at the median, within 1.1 s
# in all but one of 11,450 catch-ups (3.6 s, its connection started over mid-run, not after
# a failover); judged so over 3,500 generated and searched runs, it never failed. The healing
# suffix waits 3 s after its failover and writes.
CATCH_UP_MS = 2_000
OPENING = 2  # the opening wait and first failover: no edit of the search comes before them


def healing_end(master: str) -> list[Step]:
    """A script's end after its faults: every fault healed, every replica up, a failover
    to ``master`` and writes it must replicate."""
    return [Step("heal"), Step("net", ("default",)), Step("restart-all"), Step("failover", (master,)),
            Step("write", ("2",)), Step("run", ("3000",))]


HEALING_END = len(healing_end("r1"))
# The search's edits (docs/performance.md, "The truncation search"): a cut-off master three
# times and a failover twice as often as each of the others, waits on the HA connection's own scale
# (flush every 500 ms, a retry after 200 ms) rather than the seconds a DLedger election takes
EDITS = ("splice", "cut", "lossy", "down", "isolate", "isolate", "isolate", "failover", "failover", "overlay",
         "probe")
WAITS_MS = (50, 200, 500, 1500)


def mutate_truncation_script(script: Script, config: RunConfig, rng: random.Random, fault_mixes: dict) -> Script:
    """A neighbour of ``script`` for the search (conformance/search.py): one to three edits
    of its fault phase: splice in a window of the fault phase of another seed's script of
    the same settings; put a window under a partition or a blocked link, or a lossy
    network (writes arriving meanwhile); crash a replica for a window, maybe failing over
    from it; cut the master of that moment off, let it take writes nobody else gets, fail
    over to another replica and write there (the old master comes back holding a longer
    log of an older epoch: what ``slave_handshake`` truncates); put a stretch of the run
    (half the time its whole fault phase) under a lossy network or a partition, or have
    producers with stale routes write to every replica after each of its waits; a
    failover with writes (``EDITS``: how often each). The opening and the healing end
    stay, and no failover names a replica that is down there
    (``_failovers_to_live_replicas``)."""
    steps = list(script.steps)
    head, phase, suffix = steps[:OPENING], steps[OPENING:-HEALING_END], steps[-HEALING_END:]
    nodes = list(script.nodes)

    def writes() -> list[Step]:
        return [Step("write", (str(rng.randint(1, 4)),)) for _ in range(rng.randint(1, 3))]

    def wait() -> Step:
        return Step("run", (str(rng.choice(WAITS_MS)),))

    def partition() -> Step:  # one side of a random cut (the rest of the group is the other)
        return Step("partition", tuple(rng.sample(nodes, rng.randint(1, len(nodes) - 1))))

    for _ in range(rng.randint(1, 3)):
        op = rng.choice(EDITS)
        at = rng.randint(0, len(phase))
        if op == "splice":
            donor = generate_truncation_script(attrs.evolve(config, seed=rng.randrange(1 << 31), origin=()),
                                               fault_mixes).steps[OPENING:-HEALING_END]
            if donor:
                start = rng.randrange(len(donor))
                phase[at:at] = donor[start:start + rng.randint(2, 8)]
        elif op == "cut":
            fault = partition() if rng.random() < 0.6 else Step("block", tuple(rng.sample(nodes, 2)))
            phase[at:at] = [fault, *writes(), wait(), Step("heal")]
        elif op == "lossy":
            phase[at:at] = [lossy_net(rng), *writes(), wait(), Step("net", ("default",))]
        elif op == "down":
            n = rng.choice(nodes)
            others = [x for x in nodes if x != n]
            fail_over = [Step("failover", (rng.choice(others),))] if rng.random() < 0.5 else []
            phase[at:at] = [Step("crash", (n,)), *fail_over, *writes(), wait(), Step("restart", (n,))]
        elif op == "isolate":
            old = _master_at(head + phase[:at])  # (the opening names one)
            new = rng.choice([x for x in nodes if x != old])
            phase[at:at] = [Step("partition", (old,)), *writes(), Step("run", (str(rng.choice((50, 300, 1000))),)),
                            Step("failover", (new,)), *writes(), wait(), Step("heal")]
        elif op == "probe":
            # producers with stale routes: after every wait of a stretch, a write to each
            # replica whatever its role, so that each state a replica passes through meets one
            start, stop = stretch_of(rng, len(phase))
            phase[start:stop] = probed(phase[start:stop], nodes)
        elif op == "overlay":
            overlay_stretch(rng, phase, partition)
        else:  # failover
            phase[at:at] = [Step("failover", (rng.choice(nodes),)), *writes()]
    phase = _failovers_to_live_replicas(head + phase, nodes, rng)[OPENING:]
    return script.with_steps(head + phase + suffix)


def _master_at(steps: list[Step]) -> str | None:
    """The replica the last failover of ``steps`` named (None: no failover yet)."""
    return next((s.args[0] for s in reversed(steps) if s.op == "failover"), None)


def _failovers_to_live_replicas(steps: list[Step], nodes: list[str], rng: random.Random) -> list[Step]:
    """``steps`` with each failover to a replica that is down at that step (the scenario
    refuses one: bad input) sent to a live one instead, or dropped when none is live, and
    each restart of a live replica dropped (it would only send that replica its role
    again): an edit may crash or restart a replica that a later step expected down or up."""
    down: set[str] = set()
    out = []
    for step in steps:
        n = step.args[0] if step.args else None
        if step.op == "crash":
            down.add(n)
        elif step.op == "restart":
            if n not in down:
                continue
            down.discard(n)
        elif step.op == "failover" and n in down:
            up = [x for x in nodes if x not in down]
            if not up:
                continue
            step = Step("failover", (rng.choice(up),))
        out.append(step)
    return out


def build_truncation(script: Script, adapter: str, record_trace: bool = True):
    return TruncationCluster(script, resolve_targets("truncation", adapter, script.profile), record_trace)
