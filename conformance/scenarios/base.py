"""What every scenario cluster shares: the simulator, fault steps, violations.

A scenario cluster executes script steps against nodes in the simulator. A step
``op`` is handled by the method ``step_<op>`` (dashes become underscores), so a
scenario adds steps by defining methods; ``expect WHAT ...`` is handled by
``expect_<what>``. The steps every scenario understands:

| step | meaning |
|---|---|
| ``run MS`` | let ``MS`` simulated milliseconds pass (ticks and, unless manual, deliveries) |
| ``crash N`` / ``restart N`` | crash a node (durable state kept) / boot it again from its disk |
| ``restart-all`` | boot every node that is down |
| ``partition A B \\| C`` | cut the nodes into sides separated by ``\\|`` (unlisted nodes form one more side) |
| ``block A B`` | lose every message from A to B (asymmetric) |
| ``heal`` | remove every cut and block |
| ``net MIN..MAX [drop=P] [dup=P]`` | change delays (ms) and loss/duplication probabilities; ``net default`` |
| ``deliver A B [KIND]`` / ``drop A B [KIND]`` / ``dup A B [KIND]`` | manual network: act on the oldest matching message in flight |
| ``deliver-all`` | manual network: deliver until nothing is in flight |
| ``expect violation NAME`` / ``expect no-violation`` | what the invariants must have seen so far |
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

import attrs

from conformance.errors import UserError, quoted
from results.runresult import Metric
from results.schema import ABSTRACT_STATE
from conformance.inputs import MAX_INT, MIN_INT, whole_number
from conformance.script import MAX_STEP_MS, Script, Step
from reference.simulator import Halted, NetConfig, SimulationError, Simulator, trace_to_jsonl
from spec.invariants import Violation

DEFAULT_NET = NetConfig(1, 20, 0.0, 0.0)
MAX_WRITE_BURST = 10_000  # client writes one ``write N`` step may issue
MAX_MESSAGE_SIZE = 2**40  # bytes of one message (``write N size=BYTES``): offsets stay far below 2^63


class ExpectationFailed(Exception):
    """An ``expect`` step of a script did not hold."""


@attrs.define(slots=True)
class Recorded:
    step: int  # index of the script step during which it happened (0-based)
    time: int
    violation: Violation


def parse_net(args: tuple[str, ...], where: str) -> NetConfig:
    if not args or args == ("default",):
        return DEFAULT_NET
    try:
        low, _, high = args[0].partition("..")
        kw: dict[str, Any] = {"min_delay_ms": int(low), "max_delay_ms": int(high or low)}
        for a in args[1:]:
            key, _, value = a.partition("=")
            kw[{"drop": "drop", "dup": "duplicate"}[key]] = float(value)
        if not 0 <= kw["min_delay_ms"] <= kw["max_delay_ms"] <= MAX_STEP_MS:
            raise ValueError(f"delays from 0 to {MAX_STEP_MS} ms, MIN <= MAX")
        if not all(0.0 <= kw.get(k, 0.0) <= 1.0 for k in ("drop", "duplicate")):  # NaN fails too
            raise ValueError("probabilities from 0 to 1")
        return NetConfig(**kw)
    except (ValueError, KeyError) as exc:
        raise UserError(f"{where}: bad net spec {quoted(' '.join(args))} (want MIN..MAX [drop=P] [dup=P]): {exc}") from None


@attrs.frozen(slots=True)
class Finding:
    """An occurrence of a documented limit (``SimCluster.finding_name``), not a violation."""

    subject: str  # the message, broker or replica it is about
    detail: str
    name: str | None = None  # which of the scenario's findings (None: its ``finding_name``)


@attrs.frozen(slots=True)
class RunSummary:
    """What a run reports besides its violations (see results.runresult.RunResult)."""

    elections: int = 0  # leaders (or masters) installed
    leader_changes: int = 0
    max_term: int = 0  # largest term (or epoch)
    metrics: tuple = ()  # results.runresult.Metric


class SimCluster:
    """Base of scenario clusters. Subclasses call ``_start_simulator`` with a node factory.

    Monitors judge, after each activation, only what it can have changed: the node that
    stepped (when its state changed) against accumulators of everything seen before.
    ``full_check`` makes them judge every live node after every activation instead: the
    oracle that tests hold the incremental check to (tests/scenarios/test_incremental_checks.py).
    A check of one step (a vote granted, a decision made) is judged for the node that
    stepped in both modes.
    """

    scenario = "?"
    full_check = False
    # the nodes talk over connections that die with either end (TCP: DLedger, RocketMQ's
    # HA and remoting); False: datagrams that outlive a restart (reference.simulator)
    connections = True
    # payload types that travel on a connection the receiver opened (the HA link's, which
    # the slave opens by its handshake): reference.simulator, ``on_receivers_connection``
    on_receivers_connection: frozenset = frozenset()
    # payload types that arrive once and in order, as on a byte stream (reference.simulator, ``in_order``)
    in_order: frozenset = frozenset()
    # a campaign's run stops this long (simulated ms) after its first violation
    # (conformance.campaign.HALT_AFTER_VIOLATION_MS); None: it runs every step
    halt_after_violation_ms: int | None = None
    halted_at_step: int | None = None

    def __init__(self, script: Script, record_trace: bool = True):
        self.script = script
        self.peers = script.nodes
        self.record_trace = record_trace
        self.violations: list[Recorded] = []
        self.coverage: Counter = Counter()
        self.current_step = -1
        # Documented findings: a limit of the configuration the run demonstrates (e.g.
        # #7017), reported as the metric finding_<finding_name>, never as a violation.
        self.findings: list[Finding] = []
        for node, _ in script.boot_at:
            if node not in self.peers:
                raise UserError(f"boot: unknown node {quoted(node)} (nodes: {' '.join(self.peers)})")
        self.sim: Simulator

    def _start_simulator(self, factory: Callable, observers: Iterable[Callable] = ()) -> None:
        script = self.script
        self.sim = Simulator(
            script.seed,
            script.nodes,
            factory,
            parse_net(script.net, "net") if script.net else DEFAULT_NET,
            start_spread_ms=script.start_spread_ms,
            boot_at=dict(script.boot_at),
            manual=script.manual,
            record_trace=self.record_trace,
            observers=tuple(observers),
            connections=self.connections,
            on_receivers_connection=self.on_receivers_connection,
            in_order=self.in_order,
        )

    # ------------------------------------------------------------------ results

    def violate(self, violation) -> None:
        if not self.violations and self.halt_after_violation_ms is not None:
            self.sim.halt(self.sim.now + self.halt_after_violation_ms)
        self.violations.append(Recorded(self.current_step, self.sim.now, violation))

    def note_abstract_state(self, state: str | None) -> None:
        """Count an abstract state a step reached (the search's coverage: conformance/search.py)."""
        if state is not None:
            self.coverage[(ABSTRACT_STATE, state)] += 1

    def network_condition(self) -> str:
        """The network as abstract states see it: ``cut`` (a partition or a blocked link),
        ``lossy`` (loss or duplication) or ``clean``."""
        sim = self.sim
        return "cut" if sim.blocked else ("lossy" if sim.net.drop or sim.net.duplicate else "clean")

    @staticmethod
    def event_kind(incoming) -> str:
        """What a step handled, for abstract states: a message kind, or ``tick``."""
        if incoming is None:
            return "tick"
        return getattr(incoming.payload, "message_kind", type(incoming.payload).__name__)

    def harvest_coverage(self, node_id: str) -> None:
        """Fold a node's spec-outcome counters into the run's (before it is lost)."""
        counter = getattr(self.sim.nodes.get(node_id), "coverage", None)
        if counter:
            self.coverage.update(counter)
            counter.clear()

    def finish(self) -> None:
        for n in self.peers:
            self.harvest_coverage(n)

    def run_summary(self) -> RunSummary:
        return RunSummary()

    def trace_jsonl(self) -> str:
        return trace_to_jsonl(self.sim.trace)

    def faults_active(self) -> bool:
        sim = self.sim
        return bool(sim.blocked) or sim.net.drop > 0 or any(n is None for n in sim.nodes.values())

    # ------------------------------------------------------------------ execution

    def execute(self, steps: Iterable[Step], until: Callable[["SimCluster"], bool] | None = None) -> None:
        """Run ``steps`` in order; with ``until``, stop after the first step it holds for;
        stop where time halts (``halt_after_violation``)."""
        for i, step in enumerate(steps):
            self.current_step = i
            try:
                self.do(step)
            except Halted:
                self.halted_at_step = i
                return
            if until is not None and until(self):
                return

    def do(self, step: Step) -> None:
        handler = getattr(self, "step_" + step.op.replace("-", "_"), None)
        if handler is None:
            raise UserError(f"line {step.line}: unknown step {quoted(step.op)} for scenario {self.scenario}")
        try:
            handler(step)
        except SimulationError as exc:
            raise UserError(f"line {step.line}: {step.render()}: {exc}") from None

    def node_arg(self, step: Step, i: int = 0) -> str:
        try:
            n = step.args[i]
        except IndexError:
            raise UserError(f"line {step.line}: {quoted(step.op)} needs a node") from None
        if n not in self.peers:
            raise UserError(f"line {step.line}: unknown node {quoted(n)} (nodes: {' '.join(self.peers)})")
        return n

    def int_arg(self, step: Step, i: int, default: int | None = None, lo: int = MIN_INT, hi: int = MAX_INT) -> int:
        try:
            text = step.args[i]
        except IndexError:
            if default is not None:
                return default
            raise UserError(f"line {step.line}: {quoted(step.op)} needs a number") from None
        return whole_number(text, f"line {step.line}: {step.op!r}", lo, hi)

    def ms_arg(self, step: Step, i: int, default: int | None = None) -> int:
        """A span of simulated time: from 0 to MAX_STEP_MS."""
        return self.int_arg(step, i, default, 0, MAX_STEP_MS)

    # ------------------------------------------------------------------ generic steps

    def step_run(self, step: Step) -> None:
        self.sim.run_for(self.ms_arg(step, 0))

    def step_crash(self, step: Step) -> None:
        n = self.node_arg(step)
        self.harvest_coverage(n)
        self.sim.crash(n)

    def step_restart(self, step: Step) -> None:
        self.sim.restart(self.node_arg(step))

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

    def step_block(self, step: Step) -> None:
        self.sim.block(self.node_arg(step, 0), self.node_arg(step, 1))

    def step_heal(self, step: Step) -> None:
        self.sim.heal()

    def step_slow(self, step: Step) -> None:
        """``slow A B MIN..MAX``: every message from A to B takes MIN..MAX ms more; ``slow A B off``."""
        src, dst = self.node_arg(step, 0), self.node_arg(step, 1)
        spec = step.args[2] if len(step.args) > 2 else ""
        if spec == "off":
            self.sim.slow_down(src, dst, None)
            return
        low, sep, high = spec.partition("..")
        try:
            window = (int(low), int(high if sep else low))
        except ValueError:
            window = (-1, -1)
        if not 0 <= window[0] <= window[1] <= MAX_STEP_MS:
            raise UserError(f"line {step.line}: slow: want 'slow A B MIN..MAX' or 'slow A B off', not {quoted(step.render())}")
        self.sim.slow_down(src, dst, window)

    def step_net(self, step: Step) -> None:
        self.sim.set_net(parse_net(step.args, f"line {step.line}"))

    def _manual(self, step: Step):
        if not self.sim.manual:
            raise UserError(f"line {step.line}: {quoted(step.op)} needs a 'manual' network (header line 'manual')")
        kind = step.args[2] if len(step.args) > 2 else None
        return self.node_arg(step, 0), self.node_arg(step, 1), kind

    def step_deliver(self, step: Step) -> None:
        self.sim.deliver(*self._manual(step))

    def step_drop(self, step: Step) -> None:
        self.sim.drop(*self._manual(step))

    def step_dup(self, step: Step) -> None:
        self.sim.duplicate(*self._manual(step))

    def step_deliver_all(self, step: Step) -> None:
        self.sim.deliver_all()

    def step_expect(self, step: Step) -> None:
        what = step.args[0] if step.args else ""
        where = f"line {step.line}: expect {' '.join(step.args)}"
        handler = getattr(self, "expect_" + what.replace("-", "_"), None)
        if handler is None:
            raise UserError(f"{where}: unknown expectation {quoted(what)}")
        handler(step, where)

    finding_name: str | None = None  # the one finding a scenario documents, if any
    finding_names: tuple[str, ...] = ()  # or the several it documents

    def _finding_names(self) -> tuple[str, ...]:
        return self.finding_names or ((self.finding_name,) if self.finding_name else ())

    def add_finding(self, subject: str, detail: str, name: str | None = None) -> None:
        """Record the scenario's finding ``name`` (default: its only one) about ``subject``
        (once per subject)."""
        name = name or self.finding_name
        if (subject, name) not in {(f.subject, f.name or self.finding_name) for f in self.findings}:
            self.findings.append(Finding(subject, detail, name))

    def finding_metrics(self) -> tuple:
        return tuple(Metric(f"finding_{n}", float(sum(1 for f in self.findings
                                                      if (f.name or self.finding_name) == n)))
                     for n in self._finding_names())

    def expect_finding(self, step: Step, where: str) -> None:
        name = step.args[1] if len(step.args) > 1 else ""
        if name not in self._finding_names() or not any((f.name or self.finding_name) == name for f in self.findings):
            raise ExpectationFailed(f"{where}: no {name} finding was recorded")

    def expect_no_finding(self, step: Step, where: str) -> None:
        if self.findings:
            f = self.findings[0]
            raise ExpectationFailed(f"{where}: but {f.subject}: {f.detail} ({f.name or self.finding_name})")

    def expect_no_violation(self, step: Step, where: str) -> None:
        if self.violations:
            raise ExpectationFailed(f"{where}: but {self.violations[0].violation.message}")

    def expect_violation(self, step: Step, where: str) -> None:
        name = step.args[1] if len(step.args) > 1 else ""
        if not any(r.violation.property == name for r in self.violations):
            raise ExpectationFailed(f"{where}: no {name} violation happened")
