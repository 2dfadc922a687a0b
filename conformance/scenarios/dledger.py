"""The ``dledger`` scenario: a DLedger group in the simulator, checked after every step.

``DLedgerCluster`` executes script steps (see ``STEPS``) against nodes built from an
adapter target, and runs the invariants of ``spec/invariants/dledger.py`` after every
node activation. It also measures elections for the reports.

Steps:

| step | meaning |
|---|---|
| ``run MS`` | let ``MS`` simulated milliseconds pass (ticks and, unless manual, deliveries) |
| ``crash N`` / ``restart N`` | crash a node (durable state kept) / boot it again from its disk |
| ``restart-all`` | boot every node that is down |
| ``partition A B \\| C`` | cut the group into sides separated by ``\\|`` (unlisted nodes form one more side) |
| ``block A B`` | lose every message from A to B (asymmetric) |
| ``heal`` | remove every cut and block |
| ``net MIN..MAX [drop=P] [dup=P]`` | change delays (ms) and loss/duplication probabilities; ``net default`` |
| ``append N BODY`` | a client asks node N to append BODY |
| ``append-leader BODY`` | a client appends BODY at the current leader (nothing if there is none) |
| ``crash-leader`` / ``isolate-leader`` | crash / cut off the current leader (a nemesis aimed at the leader) |
| ``deliver A B [KIND]`` / ``drop A B [KIND]`` / ``dup A B [KIND]`` | manual network: act on the oldest matching message in flight |
| ``deliver-all`` | manual network: deliver until nothing is in flight |
| ``await-leader [MS]`` | run until one stable leader exists; a liveness violation if none within MS (default: the liveness bound) and no fault is active (all nodes up, no cut, no loss) |
| ``expect ...`` | ``leader N [term T]``, ``role N ROLE``, ``term N T``, ``committed N I``, ``violation NAME``, ``no-violation`` |
"""
from __future__ import annotations

from collections import Counter

import attrs

from conformance.errors import UserError
from conformance.script import Script, Step
from conformance.targets import DLedgerTarget
from reference.simulator import NetConfig, SimulationError, Simulator, trace_to_jsonl
from spec.dledger.profiles import DEFAULT_TIMING, Timing
from spec.dledger.records import ClientAppend, DLedgerView, Role, VoteRequest, VoteResponse
from spec.invariants import dledger as inv

DEFAULT_NET = NetConfig(1, 20, 0.0, 0.0)
AWAIT_POLL_MS = 50  # how often await-leader looks for a stable leader


class ExpectationFailed(Exception):
    """An ``expect`` step of a script did not hold."""


@attrs.define(slots=True)
class Recorded:
    step: int  # index of the script step during which it happened (0-based)
    time: int
    violation: inv.Violation


def parse_net(args: tuple[str, ...], where: str) -> NetConfig:
    if not args or args == ("default",):
        return DEFAULT_NET
    try:
        low, _, high = args[0].partition("..")
        kw = {"min_delay_ms": int(low), "max_delay_ms": int(high or low)}
        for a in args[1:]:
            key, _, value = a.partition("=")
            field = {"drop": "drop", "dup": "duplicate"}[key]
            kw[field] = float(value)
        return NetConfig(**kw)
    except (ValueError, KeyError) as exc:
        raise UserError(f"{where}: bad net spec {' '.join(args)!r} (want MIN..MAX [drop=P] [dup=P]): {exc}") from None


class DLedgerCluster:
    def __init__(self, script: Script, target: DLedgerTarget, timing: Timing = DEFAULT_TIMING, record_trace: bool = True):
        self.script = script
        self.target = target
        self.timing = timing
        self.profile = target.profile
        self.peers = script.nodes
        for node, _ in script.boot_at:
            if node not in self.peers:
                raise UserError(f"boot: unknown node {node!r} (nodes: {' '.join(self.peers)})")
        self.history = inv.DLedgerHistory()
        self.violations: list[Recorded] = []
        self.coverage: Counter = Counter()
        self.current_step = -1
        self._versions: dict[str, int] = {}
        # election metrics
        self.elections: list[tuple[int, int, str]] = []  # (time, term, leader)
        self.failovers_ms: list[int] = []
        self.messages_per_election: list[int] = []
        self.terms_per_election: list[int] = []
        self._seen_leaders: set[tuple[int, str]] = set()
        self._fault_at: int | None = 0  # leaderless since (start counts as a fault at 0)
        self._fault_messages = 0
        self._last_leader_term = target.profile.initial_term
        self._leader: str | None = None

        def factory(node_id, durable, now, draw):
            return target.make_node(node_id, self.peers, draw, durable, now)

        net = parse_net(script.net, "net") if script.net else DEFAULT_NET
        self.sim = Simulator(
            script.seed,
            script.nodes,
            factory,
            net,
            start_spread_ms=script.start_spread_ms,
            boot_at=dict(script.boot_at),
            manual=script.manual,
            record_trace=record_trace,
            observers=(self._observe,),
        )

    # ------------------------------------------------------------------ monitor

    def _observe(self, sim: Simulator, node_id: str, incoming, ready) -> None:
        node = sim.nodes[node_id]
        if node is None:
            if node_id == self._leader:
                self._leader_lost()
            return
        version = getattr(node, "version", None)
        is_vote = incoming is not None and isinstance(incoming.payload, VoteRequest)
        if version is not None and version == self._versions.get(node_id) and not is_vote:
            return
        self._versions[node_id] = version
        view: DLedgerView = node.observe()
        for violation in inv.check_node(self.history, view):
            self._violate(violation)
        inv.record(self.history, view)
        if is_vote and ready is not None:
            for m in ready.messages:
                if m.dst == incoming.src and isinstance(m.payload, VoteResponse):
                    found = inv.check_vote_grant(view, incoming.payload, m.payload)
                    if found is not None:
                        self._violate(found)
        if view.role is Role.LEADER:
            key = (view.curr_term, node_id)
            if key not in self._seen_leaders:
                self._seen_leaders.add(key)
                self._elected(view)
        elif node_id == self._leader:
            self._leader_lost()

    def _violate(self, v: inv.Violation) -> None:
        self.violations.append(Recorded(self.current_step, self.sim.now, v))

    def _elected(self, view: DLedgerView) -> None:
        now = self.sim.now
        self.elections.append((now, view.curr_term, view.node_id))
        if self._fault_at is not None:
            if self.elections[:-1]:  # a failover, not the first election
                self.failovers_ms.append(now - self._fault_at)
            self.messages_per_election.append(self.sim.messages_sent - self._fault_messages)
            self._fault_at = None
        self.terms_per_election.append(max(0, view.curr_term - self._last_leader_term))
        self._last_leader_term = view.curr_term
        self._leader = view.node_id

    def _leader_lost(self) -> None:
        self._leader = None
        if self._fault_at is None:
            self._fault_at = self.sim.now
            self._fault_messages = self.sim.messages_sent

    def _harvest_coverage(self, node_id: str) -> None:
        node = self.sim.nodes.get(node_id)
        counter = getattr(node, "coverage", None)
        if counter:
            self.coverage.update(counter)
            counter.clear()

    def views(self) -> list[DLedgerView | None]:
        return [n.observe() if n is not None else None for n in self.sim.nodes.values()]

    # ------------------------------------------------------------------ steps

    def execute(self, steps) -> None:
        for i, step in enumerate(steps):
            self.current_step = i
            handler = STEPS.get(step.op)
            if handler is None:
                raise UserError(f"line {step.line}: unknown step {step.op!r} for scenario dledger")
            try:
                handler(self, step)
            except SimulationError as exc:
                raise UserError(f"line {step.line}: {step.render()}: {exc}") from None

    def finish(self) -> None:
        for n in self.peers:
            self._harvest_coverage(n)

    def _node_arg(self, step: Step, i: int = 0) -> str:
        try:
            n = step.args[i]
        except IndexError:
            raise UserError(f"line {step.line}: {step.op!r} needs a node") from None
        if n not in self.peers:
            raise UserError(f"line {step.line}: unknown node {n!r} (nodes: {' '.join(self.peers)})")
        return n

    def _int_arg(self, step: Step, i: int, default: int | None = None) -> int:
        try:
            return int(step.args[i])
        except IndexError:
            if default is not None:
                return default
            raise UserError(f"line {step.line}: {step.op!r} needs a number") from None
        except ValueError:
            raise UserError(f"line {step.line}: {step.op!r}: {step.args[i]!r} is not a number") from None

    def step_run(self, step: Step) -> None:
        self.sim.run_for(self._int_arg(step, 0))

    def step_crash(self, step: Step) -> None:
        n = self._node_arg(step)
        self._harvest_coverage(n)
        self.sim.crash(n)

    def step_restart(self, step: Step) -> None:
        self.sim.restart(self._node_arg(step))

    def step_restart_all(self, step: Step) -> None:
        for n in self.peers:
            self.sim.restart(n)

    def step_partition(self, step: Step) -> None:
        groups: list[list[str]] = [[]]
        for a in step.args:
            if a == "|":
                groups.append([])
            else:
                groups[-1].append(a)
        self.sim.partition([g for g in groups if g])
        if self._leader is not None:
            self._leader_lost_if_minority()

    def _leader_lost_if_minority(self) -> None:
        reach = sum(1 for p in self.peers if self.sim.link_up(self._leader, p) and self.sim.link_up(p, self._leader))
        if reach < len(self.peers) // 2 + 1:
            self._leader_lost()

    def step_block(self, step: Step) -> None:
        self.sim.block(self._node_arg(step, 0), self._node_arg(step, 1))

    def step_heal(self, step: Step) -> None:
        self.sim.heal()

    def step_net(self, step: Step) -> None:
        self.sim.set_net(parse_net(step.args, f"line {step.line}"))

    def step_append(self, step: Step) -> None:
        n = self._node_arg(step)
        body = step.args[1] if len(step.args) > 1 else f"m{self.sim.now}"
        self.sim.client(n, ClientAppend(body))

    def current_leader(self) -> str | None:
        """The live node that believes it leads, with the highest term (None if none)."""
        best = None
        for n in self.peers:
            node = self.sim.nodes[n]
            if node is not None:
                v = node.observe()
                if v.role is Role.LEADER and (best is None or v.curr_term > best[0]):
                    best = (v.curr_term, n)
        return best[1] if best else None

    def step_append_leader(self, step: Step) -> None:
        """A client appends at the current leader (nothing if there is none)."""
        body = step.args[0] if step.args else f"m{self.sim.now}"
        leader = self.current_leader()
        if leader is not None:
            self.sim.client(leader, ClientAppend(body))

    def step_crash_leader(self, step: Step) -> None:
        """Crash the current leader (nothing if there is none)."""
        leader = self.current_leader()
        if leader is not None:
            self.step_crash(Step("crash", (leader,), step.line))

    def step_isolate_leader(self, step: Step) -> None:
        """Cut the current leader off from every other node (nothing if there is none)."""
        leader = self.current_leader()
        if leader is not None:
            self.sim.partition([[leader]])
            self._leader_lost_if_minority()

    def _manual(self, step: Step):
        if not self.sim.manual:
            raise UserError(f"line {step.line}: {step.op!r} needs a 'manual' network (header line 'manual')")
        kind = step.args[2] if len(step.args) > 2 else None
        return self._node_arg(step, 0), self._node_arg(step, 1), kind

    def step_deliver(self, step: Step) -> None:
        self.sim.deliver(*self._manual(step))

    def step_drop(self, step: Step) -> None:
        self.sim.drop(*self._manual(step))

    def step_dup(self, step: Step) -> None:
        self.sim.duplicate(*self._manual(step))

    def step_deliver_all(self, step: Step) -> None:
        self.sim.deliver_all()

    def faults_active(self) -> bool:
        """Liveness is judged only once every fault has healed."""
        sim = self.sim
        return bool(sim.blocked) or sim.net.drop > 0 or any(n is None for n in sim.nodes.values())

    def step_await_leader(self, step: Step) -> None:
        bound = self._int_arg(step, 0, inv.liveness_bound_ms(self.timing))
        deadline = self.sim.now + bound
        judged = not self.faults_active()
        while True:
            if inv.stable_leader(self.views()) is not None:
                return
            if self.sim.now >= deadline:
                if not judged:
                    self.sim.note("await-leader: faults still active, liveness not judged")
                    return
                self._violate(
                    inv.Violation("liveness", f"no stable leader {bound} ms after the faults healed (t={self.sim.now})")
                )
                return
            self.sim.run_for(AWAIT_POLL_MS)

    def step_expect(self, step: Step) -> None:
        what = step.args[0] if step.args else ""
        where = f"line {step.line}: expect {' '.join(step.args)}"
        if what == "no-violation":
            if self.violations:
                raise ExpectationFailed(f"{where}: but {self.violations[0].violation.message}")
            return
        if what == "violation":
            name = step.args[1]
            if not any(r.violation.property == name for r in self.violations):
                raise ExpectationFailed(f"{where}: no {name} violation happened")
            return
        n = self._node_arg(step, 1)
        node = self.sim.nodes[n]
        if node is None:
            raise ExpectationFailed(f"{where}: {n} is down")
        v = node.observe()
        if what == "leader":
            ok = v.role is Role.LEADER and (len(step.args) < 4 or v.curr_term == self._int_arg(step, 3))
            actual = f"{v.role.value} in term {v.curr_term}"
        elif what == "role":
            ok = v.role.value == step.args[2].upper()
            actual = v.role.value
        elif what == "term":
            ok = v.curr_term == self._int_arg(step, 2)
            actual = str(v.curr_term)
        elif what == "committed":
            ok = v.committed_index == self._int_arg(step, 2)
            actual = str(v.committed_index)
        else:
            raise UserError(f"{where}: unknown expectation {what!r}")
        if not ok:
            raise ExpectationFailed(f"{where}: but {n} is {actual}")

    def trace_jsonl(self) -> str:
        return trace_to_jsonl(self.sim.trace)


STEPS = {
    "run": DLedgerCluster.step_run,
    "crash": DLedgerCluster.step_crash,
    "restart": DLedgerCluster.step_restart,
    "restart-all": DLedgerCluster.step_restart_all,
    "partition": DLedgerCluster.step_partition,
    "block": DLedgerCluster.step_block,
    "heal": DLedgerCluster.step_heal,
    "net": DLedgerCluster.step_net,
    "append": DLedgerCluster.step_append,
    "append-leader": DLedgerCluster.step_append_leader,
    "crash-leader": DLedgerCluster.step_crash_leader,
    "isolate-leader": DLedgerCluster.step_isolate_leader,
    "deliver": DLedgerCluster.step_deliver,
    "drop": DLedgerCluster.step_drop,
    "dup": DLedgerCluster.step_dup,
    "deliver-all": DLedgerCluster.step_deliver_all,
    "await-leader": DLedgerCluster.step_await_leader,
    "expect": DLedgerCluster.step_expect,
}
