"""The ``dledger`` scenario: a DLedger group in the simulator, checked after every step.

``DLedgerCluster`` executes script steps (see ``STEPS``) against nodes built from an
adapter target, and runs the invariants of ``spec/invariants/dledger.py`` after every
node activation. It also measures elections for the reports.

Steps, besides those every scenario understands (``conformance/scenarios/base.py``):

| step | meaning |
|---|---|
| ``append N BODY`` | a client asks node N to append BODY |
| ``append-leader BODY`` | a client appends BODY at the current leader (nothing if there is none) |
| ``crash-leader`` / ``isolate-leader`` | crash / cut off the current leader (a nemesis aimed at the leader) |
| ``crash-after-vote [N] [MS]`` | run until a node (N, or any) records a vote, and crash it in that instant (at most MS, default 5000) |
| ``crash-after-truncation [N] [MS]`` | run until a node's log loses or rewrites an entry, and crash it in that instant |
| ``reset A B`` / ``half-open A B`` | a fault of A's connections with B (reset; silent both ways while held open), for an implementation with connections of its own (``pysyncobj:tcp``); not applicable to others |
| ``isolate-leader-with [K]`` | cut the current leader off together with K-1 other nodes (a minority; default: the leader alone) |
| ``await-leader [MS]`` | run until one stable leader exists; a liveness violation if none within MS (default: the liveness bound) and no fault is active (all nodes up, no cut, no loss, no delay as long as a heartbeat interval) |
| ``expect ...`` | ``leader N [term T]``, ``role N ROLE``, ``term N T``, ``committed N I`` |
"""
from __future__ import annotations

import random
from typing import Iterable

import attrs

from conformance.errors import NotApplicable, UserError
from conformance.faults import FAULT_MIXES, LINK_FAULTS, check_fault_mixes
from conformance.scenarios.base import ExpectationFailed, RunSummary, SimCluster
from conformance.script import Script, Step
from conformance.targets import DLedgerTarget, dledger_target
from reference.simulator import Simulator
from results.runresult import Metric, RunConfig
from spec.dledger.candidate import CandidateAction
from spec.dledger.heartbeat import HEARTBEAT_OUTCOMES, HEARTBEAT_ROUND_OUTCOMES
from spec.dledger.log import PUSH_ROWS
from spec.dledger.profiles import DEFAULT_TIMING, Timing
from spec.dledger.records import (ClientAppend, DLedgerView, ParseResult, PushEntryRequest, Role, VoteRequest,
                                  VoteResponse, VoteResult)
from spec.invariants import dledger as inv
from spec.invariants import raft as raft_inv
from spec.raft.abstract import handled, step_state
from spec.raft.records import LinkFault
from spec.steps import BOOT, CRASH, MESSAGE, TICK, StepEvent
from spec.steps.dledger import DLedgerSteps

AWAIT_POLL_MS = 50  # how often await-leader looks for a stable leader
CRASH_AT_INSTANT_MS = 5000  # how long crash-after-* waits for its moment by default


def _voted(before, after) -> bool:
    """A node recorded a vote (for another node or itself) between two observations."""
    return after.voted_for is not None and (after.voted_for, after.curr_term) != (before.voted_for, before.curr_term)


def _truncated(before, after) -> bool:
    """A node's log lost or rewrote an entry between two observations."""
    old, new = before.log, after.log
    return len(new) < len(old) or any(a != b for a, b in zip(old, new))


_STRIKES = {"vote": _voted, "truncation": _truncated}


class _Step:
    """A node step with ``StepEvent``'s fields, as the step checker reads it, built when no
    sink keeps the step: a plain slotted object costs a quarter of the frozen record (one
    is built for most activations), and nothing but the checker ever sees it."""

    __slots__ = ("node", "time", "input", "src", "payload", "view", "outputs", "persist")

    def __init__(self, node, time, input, src, payload, view, outputs, persist):
        self.node, self.time, self.input, self.src = node, time, input, src
        self.payload, self.view, self.outputs, self.persist = payload, view, outputs, persist


class DLedgerCluster(SimCluster):
    scenario = "dledger"
    finding_name = inv.TRUNCATE_LOSS  # committed entries lost to a late TRUNCATE: upstream's own
    # What a generic Raft group (conformance/scenarios/raft.py) swaps in: the invariants
    # judging each observation and the record a client request arrives as.
    invariants = inv
    client_request = ClientAppend

    def __init__(self, script: Script, target: DLedgerTarget, timing: Timing = DEFAULT_TIMING, record_trace: bool = True):
        super().__init__(script, record_trace)
        self.target = target
        self.timing = timing
        self.profile = target.profile
        self.history = self.new_history()
        self._versions: dict[str, int] = {}
        # step conformance (spec/steps): every step judged against the declared profile
        self.steps = self.new_steps()
        self.step_sink = None  # step_sink(event): e.g. conformance.traces.TraceWriter.write
        # election metrics
        self.elections: list[tuple[int, int, str]] = []  # (time, term, leader)
        self.failovers_ms: list[int] = []
        self.messages_per_election: list[int] = []
        self.terms_per_election: list[int] = []
        self._seen_leaders: set[tuple[int, str]] = set()
        self._fault_at: int | None = 0  # leaderless since (start counts as a fault at 0)
        self._fault_messages = 0
        self._last_leader_term = self.initial_term()
        self._leader: str | None = None
        # nemeses that strike at an instant: (what, node or None) armed by crash-after-* steps
        self._crash_when: tuple[str, str | None] | None = None
        self._last_views: dict[str, object] = {}
        self._heard: dict[str, dict[str, int]] = {}  # node -> peer -> when it last received from it
        self._lease_reported: set[tuple] = set()
        # whether any leader exposed its progress per follower (else those invariants judged nothing)
        self._progress_seen = False

        def factory(node_id, durable, now, draw):
            return target.make_node(node_id, self.peers, draw, durable, now)

        self._start_simulator(factory, (self._observe,))

    def new_history(self):
        return inv.DLedgerHistory()

    def new_steps(self):
        return DLedgerSteps(self.peers, self.target.profile, self.timing, self.target.persists_each_step)

    def initial_term(self) -> int:
        return self.target.profile.initial_term

    def liveness_bound_ms(self) -> int:
        return inv.liveness_bound_ms(self.timing)

    # ------------------------------------------------------------------ monitor

    def _observe(self, sim: Simulator, node_id: str, incoming, ready) -> None:
        """Judge what this activation can have changed: the node's step (step conformance:
        every step that had an input, changed its state or had output), and the node that
        stepped, when its state changed (its ``version``) or it answered a vote, against
        the history of everything recorded before (``full_check``: every live node, every
        time)."""
        node = sim.nodes[node_id]
        if self.full_check:
            self._judge_others(sim, node_id)
        if node is None:
            self._last_views[node_id] = None
            self.node_crashed(node_id)
            crash = StepEvent(node_id, sim.now, CRASH)
            if self.step_sink is not None:
                self.step_sink(crash)
            if self.steps is not None:
                self.steps.check(crash)
            if node_id == self._leader:
                self._leader_lost()
            return
        if incoming is not None:
            self._heard.setdefault(node_id, {})[incoming.src] = sim.now
        version = getattr(node, "version", None)
        previous = self._last_views.get(node_id)
        changed = version is None or version != self._versions.get(node_id) or previous is None
        view = node.observe() if changed else previous
        # a tick at an instant a round of the node ends is judged even when nothing shows:
        # whether it came before a reply of the same instant decides what the round counted
        # (asked last: only of a tick that would otherwise go unjudged)
        steps, sink = self.steps, self.step_sink
        if steps is not None or sink is not None:
            event = None
            new = _Step if sink is None else StepEvent
            if incoming is not None:
                event = new(node_id, sim.now, MESSAGE, incoming.src, incoming.payload, view,
                            ready.messages if ready is not None else (), ready.persist if ready is not None else None)
            elif ready is not None:
                if (changed or ready.messages or ready.persist is not None
                        or (steps is not None and steps.decides_at(node_id, sim.now))):
                    event = new(node_id, sim.now, TICK, None, None, view, ready.messages, ready.persist)
            elif changed:
                event = new(node_id, sim.now, BOOT, None, None, view, (), None)
            if event is not None:
                if sink is not None:
                    sink(event)
                if steps is not None:
                    for violation in steps.check(event):
                        self.violate(violation)
        is_vote = incoming is not None and isinstance(incoming.payload, VoteRequest)
        booted = incoming is None and ready is None  # a (re)start: always judged (restart durability)
        if not changed and not (is_vote or booted):
            if self.full_check:
                self.judge(node.observe(), None, None)
            self.judge_lease(node_id)
            return
        self._versions[node_id] = version
        self.judge(view, incoming, ready)
        self._track_leader(view)
        self._last_views[node_id] = view
        self.judge_lease(node_id)
        self._note_abstract_state(node_id, incoming, previous)
        armed = self._crash_when
        if armed is not None and armed[1] in (None, node_id) and previous is not None \
                and _STRIKES[armed[0]](previous, view):
            self._crash_when = None
            self.step_crash(Step("crash", (node_id,)))

    def _judge_others(self, sim: Simulator, node_id: str) -> None:
        for other in self.peers:
            node = sim.nodes[other]
            if other != node_id and node is not None:
                self.judge(node.observe(), None, None)

    def node_crashed(self, node_id: str) -> None:
        """``node_id`` just crashed: its last state is kept for its restart's durability check."""
        inv.node_crashed(self.history, node_id)
        self._heard.pop(node_id, None)

    def judge_lease(self, node_id: str) -> None:
        """A leader must not outlive its lease without a quorum: judged at each of its
        steps, and at the instant after its lease runs out (the simulator wakes it then,
        so the verdict does not depend on how often a node is woken)."""
        view = self._last_views.get(node_id)
        if view is None:
            return
        heard = self._heard.get(node_id, {})
        due = inv.lease_deadline(view, self.peers, heard, self.timing)
        if due is None:
            return
        found = inv.check_leader_lease(view, self.peers, heard, self.sim.now, self.timing) \
            if self.sim.now > due else None
        if found is None:
            self.sim.wake_at(node_id, due + 1)
        elif ("leader-lease", node_id, view.curr_term) not in self._lease_reported:
            self._lease_reported.add(("leader-lease", node_id, view.curr_term))  # once per leadership
            self.violate(found)

    def _note_abstract_state(self, node_id: str, incoming, before: DLedgerView | None) -> None:
        """Count the abstract state a node's step reached (spec/raft/abstract.py); ``before``
        is its view before the step, for the relation of a handled message's term
        (a PySyncObj node's messages are opaque to rmqha: their kind alone)."""
        event = handled(self.event_kind(incoming), getattr(incoming.payload, "term", None) if incoming else None,
                        before.curr_term if before is not None else None)
        self.note_abstract_state(step_state(node_id, event,
                                            [self._last_views.get(n) for n in self.peers], self.network_condition()))

    def judge(self, view: DLedgerView, incoming, ready) -> None:
        """Check every invariant on a fresh observation, then remember it. A committed entry
        lost because followers dropped it on a TRUNCATE is the protocol's own (a finding:
        ``inv.TRUNCATE_LOSS``), not a violation."""
        history = self.history
        payload = incoming.payload if incoming is not None else None
        if isinstance(payload, PushEntryRequest):
            before = self._last_views.get(view.node_id)
            if before is not None:
                inv.note_truncate(history, before, view, payload, self._last_views.get(payload.leader))
        for violation in inv.check_node(history, view):
            index = inv.lost_to_truncate(history, view, violation)
            if index is None:
                self.violate(violation)
            else:
                self.add_finding(f"index {index}", f"{violation.message}, which followers had dropped on a TRUNCATE "
                                                   f"of their leader's term (a duplicated or late request)")
        inv.record(history, view)
        is_vote = isinstance(payload, VoteRequest)
        if is_vote and ready is not None:
            for m in ready.messages:
                if m.dst == incoming.src and isinstance(m.payload, VoteResponse):
                    found = inv.check_vote_grant(view, incoming.payload, m.payload)
                    if found is not None:
                        self.violate(found)

    def not_applicable(self) -> set[str]:
        """The invariants over a leader's progress are "not observed" (reported n/a, never
        passed) in a run where no leader exposed its progress per follower."""
        return set() if self._progress_seen else set(raft_inv.PROGRESS_PROPERTIES)

    def _track_leader(self, view) -> None:
        node_id = view.node_id
        if view.role is Role.LEADER:
            if view.progress is not None:
                self._progress_seen = True
            key = (view.curr_term, node_id)
            if key not in self._seen_leaders:
                self._seen_leaders.add(key)
                self._elected(view)
        elif node_id == self._leader:
            self._leader_lost()

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

    def run_summary(self) -> RunSummary:
        metrics = []
        if self.elections:
            metrics.append(Metric("time_to_first_leader_ms", float(self.elections[0][0])))
        metrics += [Metric("failover_ms", float(x)) for x in self.failovers_ms]
        metrics += [Metric("messages_per_election", float(x)) for x in self.messages_per_election]
        metrics += [Metric("terms_per_election", float(x)) for x in self.terms_per_election]
        metrics += self.finding_metrics()
        return RunSummary(
            elections=len(self.elections),
            leader_changes=sum(1 for a, b in zip(self.elections, self.elections[1:]) if a[2] != b[2]),
            max_term=max(self.history.max_term.values(), default=0),
            metrics=tuple(metrics),
        )

    def views(self) -> list[DLedgerView | None]:
        return [n.observe() if n is not None else None for n in self.sim.nodes.values()]

    # ------------------------------------------------------------------ steps

    def step_partition(self, step: Step) -> None:
        super().step_partition(step)
        if self._leader is not None:
            self._leader_lost_if_minority()

    def _leader_lost_if_minority(self) -> None:
        reach = sum(1 for p in self.peers if self.sim.link_up(self._leader, p) and self.sim.link_up(p, self._leader))
        if reach < len(self.peers) // 2 + 1:
            self._leader_lost()

    def step_reset(self, step: Step) -> None:
        """``reset A B``: A's connections with B are reset (A fails at once, an RST travels to B)."""
        self._link_fault(step, "reset")

    def step_half_open(self, step: Step) -> None:
        """``half-open A B``: A's connections with B go silent both ways, both ends still holding them."""
        self._link_fault(step, "half-open")

    def _link_fault(self, step: Step, kind: str) -> None:
        """A fault of the connections themselves, for implementations that hold their own
        (their hello lists ``link_faults``): the simulator hands node A a ``LinkFault`` from
        ``"network"``. Nodes that only exchange messages have no connection to break."""
        a, b = self.node_arg(step, 0), self.node_arg(step, 1)
        where = f"line {step.line}: " if step.line else ""  # (a generated step has no line)
        if a == b:
            raise UserError(f"{where}{kind} needs two different nodes")
        if not getattr(self.target, "link_faults", False):
            raise NotApplicable(f"{where}{kind} {a} {b}: {self.target.implementation} ({self.target.adapter}) "
                                f"holds no connections of its own (its hello lists no link_faults); "
                                f"a connection fault needs an adapter such as pysyncobj:tcp")
        self.sim.client(a, LinkFault(b, kind), src="network")

    def step_append(self, step: Step) -> None:
        n = self.node_arg(step)
        body = step.args[1] if len(step.args) > 1 else f"m{self.sim.now}"
        self.sim.client(n, self.client_request(body))

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
            self.sim.client(leader, self.client_request(body))

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

    def step_isolate_leader_with(self, step: Step) -> None:
        """Cut the current leader off with K-1 others, a minority (nothing if there is no leader)."""
        leader = self.current_leader()
        k = self.int_arg(step, 0, 1)
        if not 1 <= k <= len(self.peers) // 2:  # the leader's side holds no quorum
            raise UserError(f"line {step.line}: isolate-leader-with {k}: the leader's side must hold no quorum "
                            f"of {len(self.peers)} nodes (at most {len(self.peers) // 2})")
        if leader is not None:
            others = [p for p in self.peers if p != leader]
            side = [leader] + others[: k - 1]
            self.sim.partition([side])
            self._leader_lost_if_minority()

    def step_crash_after_vote(self, step: Step) -> None:
        self._crash_at_instant("vote", step)

    def step_crash_after_truncation(self, step: Step) -> None:
        self._crash_at_instant("truncation", step)

    def _crash_at_instant(self, what: str, step: Step) -> None:
        """Arm a crash for the instant ``what`` happens to a node; run until it struck (at most MS)."""
        args = list(step.args)
        node = args.pop(0) if args and args[0] in self.peers else None
        try:
            ms = int(args[0]) if args else CRASH_AT_INSTANT_MS
        except ValueError:
            raise UserError(f"line {step.line}: {step.op}: want '{step.op} [NODE] [MS]', not {step.render()!r}") \
                from None
        if ms < 0 or len(args) > 1:
            raise UserError(f"line {step.line}: {step.op}: want '{step.op} [NODE] [MS]', not {step.render()!r}")
        self._crash_when = (what, node)
        deadline = self.sim.now + ms
        while self._crash_when is not None and self.sim.now < deadline:
            self.sim.run_for(min(AWAIT_POLL_MS, deadline - self.sim.now))
        self._crash_when = None

    def step_await_leader(self, step: Step) -> None:
        bound = self.ms_arg(step, 0, self.liveness_bound_ms())
        deadline = self.sim.now + bound
        # delays as long as a heartbeat interval outlast the lease and every election
        # timeout: no leader is stable there, whatever the implementation
        judged = not self.faults_active() and self.sim.net.max_delay_ms < self.timing.heartbeat_interval_ms
        while True:
            if self.invariants.stable_leader(self.views()) is not None:
                return
            if self.sim.now >= deadline:
                if not judged:
                    self.sim.note("await-leader: faults still active, liveness not judged")
                    return
                self.violate(
                    inv.Violation("liveness", f"no stable leader {bound} ms after the faults healed (t={self.sim.now})")
                )
                return
            self.sim.run_for(AWAIT_POLL_MS)

    # ------------------------------------------------------------------ expectations

    def _view(self, step: Step, where: str) -> DLedgerView:
        n = self.node_arg(step, 1)
        node = self.sim.nodes[n]
        if node is None:
            raise ExpectationFailed(f"{where}: {n} is down")
        return node.observe()

    def expect_leader(self, step: Step, where: str) -> None:
        v = self._view(step, where)
        if not (v.role is Role.LEADER and (len(step.args) < 4 or v.curr_term == self.int_arg(step, 3))):
            raise ExpectationFailed(f"{where}: but {v.node_id} is {v.role.value} in term {v.curr_term}")

    def expect_role(self, step: Step, where: str) -> None:
        v = self._view(step, where)
        if v.role.value != step.args[2].upper():
            raise ExpectationFailed(f"{where}: but {v.node_id} is {v.role.value}")

    def expect_term(self, step: Step, where: str) -> None:
        v = self._view(step, where)
        if v.curr_term != self.int_arg(step, 2):
            raise ExpectationFailed(f"{where}: but {v.node_id} is in term {v.curr_term}")

    def expect_committed(self, step: Step, where: str) -> None:
        v = self._view(step, where)
        if v.committed_index != self.int_arg(step, 2):
            raise ExpectationFailed(f"{where}: but {v.node_id} committed {v.committed_index}")


# ---------------------------------------------------------------- campaign runs


def dledger_outcomes() -> dict[str, tuple[str, ...]]:
    """Every outcome of each spec procedure a DLedger run exercises (for coverage)."""
    return {
        "handle_vote": tuple(r.value for r in VoteResult if r is not VoteResult.UNKNOWN),
        "handle_heartbeat": HEARTBEAT_OUTCOMES,
        "candidate_round": tuple(a.value for a in CandidateAction if a is not CandidateAction.WAIT),
        "parse_vote_result": tuple(r.value for r in ParseResult),
        "heartbeat_round": HEARTBEAT_ROUND_OUTCOMES,
        "follower_timeout": ("TIMED_OUT",),
        "handle_push": PUSH_ROWS,
        "client_append": ("APPENDED", "NOT_LEADER"),
    }


# The fault space (docs/scenarios.md, "Fault space"). Each run draws how hard its network
# is: the largest delay (beyond the vote round's 2-3 s and the 6 s election timeout too,
# so late replies and duplicates of old rounds arrive), loss and duplication.
MAX_DELAYS_MS = (20, 20, 100, 400, 3000, 8000)
LOSS = (0.0, 0.05, 0.2, 0.5)
DUPLICATION = (0.0, 0.05, 0.2, 0.5)
START_SPREADS_MS = (0, 50, 1000, 1000)  # 0 and 50: candidates that collide
# Nemeses: fault schedules aimed at the situations where a slip shows, by fault mix.
NEMESES: dict[str, tuple[str, ...]] = {
    "none": (),
    "crash": ("crash-after-vote", "restart-after-truncation"),
    "partition": ("stale-leader-longer-log", "leader-minority-beyond-lease", "node-returns-with-higher-term"),
    "lossy": ("late-and-duplicated",),
    "transport": (),
    "mixed": ("crash-after-vote", "restart-after-truncation", "stale-leader-longer-log",
              "leader-minority-beyond-lease", "late-and-duplicated", "node-returns-with-higher-term"),
}


class _Planner:
    """Writes fault blocks: the generator strings them together, the search's mutations
    insert them into scripts it already ran (conformance/search.py)."""

    def __init__(self, rng: random.Random, nodes: tuple[str, ...], fault_mix: str, timing: Timing, body: int = 0):
        self.rng = rng
        self.nodes = nodes
        self.faults = FAULT_MIXES[fault_mix] + NEMESES.get(fault_mix, ())
        self.timing = timing
        self.down: set[str] = set()
        self.body = body

    def choice(self) -> str:
        return self.rng.choice(self.faults + ("append", "append", "run", "run"))

    def appends(self, k: int) -> list[Step]:
        steps = []
        for _ in range(k):
            self.body += 1
            steps.append(Step("append-leader", (f"m{self.body}",)))
        return steps

    def restart_soon(self, low: int, high: int) -> list[Step]:
        self.down.clear()
        return [Step("run", (str(self.rng.randint(low, high)),)), Step("restart-all")]

    def lossy_net(self) -> Step:
        rng = self.rng
        return Step("net", (f"1..{rng.choice(MAX_DELAYS_MS)}", f"drop={rng.choice(LOSS)}",
                            f"dup={rng.choice(DUPLICATION)}"))

    def block(self, choice: str) -> list[Step]:
        """The steps of one fault (or client request), then a wait."""
        rng, nodes, lease_ms = self.rng, self.nodes, self.timing.lease_ms
        steps: list[Step] = []
        if choice == "crash":
            up = [n for n in nodes if n not in self.down]
            if self.down and rng.random() < 0.5:
                n = rng.choice(sorted(self.down))
                self.down.discard(n)
                steps.append(Step("restart", (n,)))
            elif up:
                n = rng.choice(up)
                self.down.add(n)
                steps.append(Step("crash", (n,)))
        elif choice == "crash-leader":
            # an unknown number of nodes may be down after this: restart one first
            if self.down:
                n = rng.choice(sorted(self.down))
                self.down.discard(n)
                steps.append(Step("restart", (n,)))
            steps.append(Step("crash-leader"))
            steps += self.restart_soon(50, 3000)
        elif choice == "crash-after-vote":
            # a vote is durable before its reply leaves: crash the voter in that instant
            steps += [Step("crash-leader"), Step("crash-after-vote")]
            steps += self.restart_soon(10, 500)
        elif choice == "restart-after-truncation":
            # a stale leader rejoins, its extra entries are truncated, it crashes at once
            steps.append(Step("isolate-leader"))
            steps += self.appends(rng.randint(1, 4))
            steps.append(Step("run", (str(rng.randint(lease_ms, 2 * lease_ms)),)))
            steps += self.appends(rng.randint(0, 2))
            steps += [Step("heal"), Step("crash-after-truncation")]
            steps += self.restart_soon(10, 500)
        elif choice == "stale-leader-longer-log":
            # an isolated old leader holds a longer log of an older term; the others move on
            steps.append(Step("isolate-leader"))
            steps += self.appends(rng.randint(2, 5))
            steps.append(Step("run", (str(rng.randint(lease_ms // 2, 2 * lease_ms)),)))
            steps += self.appends(rng.randint(0, 2))
            if rng.random() < 0.5:
                steps.append(Step("heal"))
        elif choice == "leader-minority-beyond-lease" and len(nodes) > 1:  # a group of one has no minority
            # the leader and a minority are cut off for longer than the leader's lease
            steps.append(Step("isolate-leader-with", (str(rng.randint(1, max(1, len(nodes) // 2))),)))
            steps += self.appends(rng.randint(1, 3))
            wait = lease_ms + rng.randint(2 * self.timing.heartbeat_interval_ms, 3 * lease_ms)
            steps += [Step("run", (str(wait),)), Step("heal")]
        elif choice == "node-returns-with-higher-term":
            # a node cut off alone campaigns in ever higher terms; back, it answers the
            # leader's next heartbeat with its higher term before its next vote round
            steps.append(Step("partition", (rng.choice(nodes),)))
            steps.append(Step("run", (str(rng.randint(lease_ms + 1000, 3 * lease_ms)),)))
            steps.append(Step("heal"))
        elif choice == "late-and-duplicated":
            # late and duplicated pushes, and writes while they are on their way: a follower
            # then meets an APPEND below its end, after the pushes that followed it (the real
            # pusher's pipeline and re-sends make that common; the reference's one push in
            # flight per follower does not). Delays of 1 s keep some pushes within the push
            # timeout; 3 and 8 s send the leader comparing and the group electing.
            steps.append(Step("net", (f"1..{rng.choice((1000, 3000, 8000))}", f"dup={rng.choice((0.2, 0.5))}")))
            for _ in range(rng.randint(2, 4)):
                steps += self.appends(1)
                steps.append(Step("run", (str(rng.randint(50, 600)),)))
        elif choice == "isolate-leader":
            steps.append(Step("isolate-leader"))
            steps += self.appends(1)
        elif choice == "partition" and len(nodes) > 1:
            shuffled = list(nodes)
            rng.shuffle(shuffled)
            cut = rng.randint(1, len(nodes) - 1)
            steps.append(Step("partition", tuple(shuffled[:cut]) + ("|",) + tuple(shuffled[cut:])))
        elif choice in LINK_FAULTS and len(nodes) > 1:  # one node's connections with another
            a, b = rng.sample(nodes, 2)
            steps.append(Step(choice, (a, b)))
        elif choice == "block" and len(nodes) > 1:
            a, b = rng.sample(nodes, 2)
            steps.append(Step("block", (a, b)))
        elif choice == "lossy":
            steps.append(self.lossy_net() if rng.random() < 0.6 else Step("net", ("default",)))
        elif choice == "append":
            self.body += 1
            if rng.random() < 0.25:  # clients sometimes reach a node that does not lead
                steps.append(Step("append", (rng.choice(nodes), f"m{self.body}")))
            else:
                steps.append(Step("append-leader", (f"m{self.body}",)))
        if choice in ("partition", "block", "isolate-leader") and rng.random() < 0.3:
            steps.append(Step("heal"))
        steps.append(Step("run", (str(rng.randint(100, 4000)),)))
        return steps


def _healing(body: int) -> list[Step]:
    """The last fault heals: everything restarts, the network is clean, a leader must
    emerge (liveness) and take three appends."""
    steps = [Step("heal"), Step("restart-all"), Step("net", ("default",)), Step("await-leader")]
    steps += [Step("append-leader", (f"m{body + i}",)) for i in range(1, 4)]
    return steps + [Step("run", ("3000",))]


def _check_config(config: RunConfig) -> None:
    check_fault_mixes((config.fault_mix,))
    if not 1 <= config.group_size <= 9:
        raise UserError(f"group size must be between 1 and 9, not {config.group_size}")


def generate_dledger_script(config: RunConfig, timing: Timing = DEFAULT_TIMING) -> Script:
    """A random but seed-determined fault schedule, then healing and a liveness check."""
    _check_config(config)
    rng = random.Random(f"{config.seed}:plan")
    nodes = tuple(f"n{i}" for i in range(1, config.group_size + 1))
    plan = _Planner(rng, nodes, config.fault_mix, timing)
    steps: list[Step] = [Step("run", (str(rng.randint(2000, 6000)),))]
    elapsed = 0
    while elapsed < config.duration_ms:
        steps += plan.block(plan.choice())
        elapsed = sum(int(s.args[0]) for s in steps[1:] if s.op == "run")  # nemeses wait too
    steps += _healing(plan.body)
    return Script(
        scenario="dledger",
        nodes=nodes,
        seed=config.seed,
        profile=config.profile,
        adapter=config.adapter,
        start_spread_ms=rng.choice(START_SPREADS_MS),
        steps=tuple(steps),
    )


def _fault_phase_end(steps: tuple[Step, ...]) -> int:
    """Where a generated script's healing suffix starts (``_healing``)."""
    for i in range(len(steps) - 1, 0, -1):
        if steps[i].op == "heal" and i + 1 < len(steps) and steps[i + 1].op == "restart-all":
            return i
    return len(steps)


# The search's edits of a fault phase, drawn uniformly (insert and drop twice as often)
MUTATIONS = ("insert", "insert", "drop", "drop", "stretch", "net", "appends")
MAX_APPENDS_EDIT = 5  # an appends edit writes one to this many entries at the leader


def insert_menu(fault_mixes: Iterable[str]) -> tuple[str, ...]:
    """The blocks a searched run's insert edits draw from: every fault and nemesis of
    ``fault_mixes`` (the campaign's), each once, in the order the mixes name them."""
    check_fault_mixes(tuple(fault_mixes))
    menu: dict[str, None] = {}
    for mix in fault_mixes:
        menu.update(dict.fromkeys(FAULT_MIXES[mix] + NEMESES.get(mix, ())))
    return tuple(menu)


# A mutation of a group smaller than the campaign's largest size first grows it this often. Only
# grows: five-node runs reach 95-100% of a range's states, and with half the resizes shrinking a
# third of the mutated runs stayed on four nodes and fewer states were reached; a group that cannot
# grow draws nothing for it (docs/performance.md, "session 12")
RESIZE_SHARE = 0.25


def grow_group(script: Script, size: int, rng: random.Random) -> Script:
    """``script`` on a group of ``size`` nodes (no fewer than it has): nodes ``n{k}`` (the
    lowest free numbers) join, each into a side drawn at random of every partition that
    names its sides (``a | b``); nodes a partition does not name form one more side anyway.
    (The search only grows a lineage's group: shrinking one was measured and reached fewer
    states, docs/performance.md, "session 12".)"""
    nodes = script.nodes
    if size < len(nodes):
        raise ValueError(f"cannot grow a group of {len(nodes)} nodes to {size}")
    free = (f"n{i}" for i in range(1, 10 * size) if f"n{i}" not in nodes)
    joining = [next(free) for _ in range(size - len(nodes))]
    steps = []
    for step in script.steps:
        if step.op == "partition" and "|" in step.args:
            sides = _sides(step.args)
            for n in joining:
                rng.choice(sides).append(n)
            step = Step("partition", _partition_args(sides), step.line)
        steps.append(step)
    return attrs.evolve(script, nodes=nodes + tuple(joining), steps=tuple(steps))


def _sides(args: tuple[str, ...]) -> list[list[str]]:
    sides: list[list[str]] = [[]]
    for a in args:
        if a == "|":
            sides.append([])
        else:
            sides[-1].append(a)
    return sides


def _partition_args(sides: list[list[str]]) -> tuple[str, ...]:
    args: list[str] = []
    for i, side in enumerate(sides):
        args += (["|"] if i else []) + side
    return tuple(args)


def mutate_dledger_script(script: Script, rng: random.Random, fault_mix: str,
                          timing: Timing = DEFAULT_TIMING, fault_mixes: Iterable[str] = (),
                          group_sizes: Iterable[int] = ()) -> Script:
    """A neighbour of ``script`` for the search: one to four edits of its fault phase
    (insert a fault block, drop a step, stretch or shorten a wait, roughen the network,
    a burst of one to five client appends at the leader); the healing suffix and the
    liveness check stay. The appends edit: drops remove appends and a fault block brings
    some only with a nemesis that writes to a cut-off leader, so without it a lineage's
    client traffic thins out generation after generation, while the divergent logs
    (``stale``, ``fork``) the search steers to need entries written on both sides of a fault.

    An inserted block is drawn from the faults and nemeses of ``fault_mixes`` (the
    campaign's: ``insert_menu``) when given, else from ``fault_mix``'s: a lineage whose
    first script had crashes only can then cut the network too (a crash lineage's runs
    reached a quarter fewer states than a mixed one's; docs/performance.md, "session 11").

    With ``group_sizes`` (the campaign's), a share of the mutations of a group smaller
    than the largest of them (``RESIZE_SHARE``, drawn from the mutation's own stream) first
    grow it to the next larger (``grow_group``): a lineage is not bound to its first
    script's group size either, so one born with three nodes is not capped by them. A
    group that cannot grow draws nothing, so it mutates as it did before resizes."""
    larger = sorted(s for s in set(group_sizes) if s > len(script.nodes))
    if larger and rng.random() < RESIZE_SHARE:
        script = grow_group(script, larger[0], rng)
    steps = list(script.steps)
    end = _fault_phase_end(script.steps)
    phase, suffix = steps[:end], steps[end:]
    bodies = [int(a[1:]) for s in steps for a in s.args if a[:1] == "m" and a[1:].isdigit()]
    plan = _Planner(rng, script.nodes, fault_mix, timing, body=max(bodies, default=0) + 100)
    menu = insert_menu(fault_mixes) if fault_mixes else plan.faults
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(MUTATIONS)
        if op == "insert":
            at = rng.randint(1, len(phase))
            phase[at:at] = plan.block(rng.choice(menu or ("append",)))
        elif op == "appends":
            at = rng.randint(1, len(phase))
            phase[at:at] = plan.appends(rng.randint(1, MAX_APPENDS_EDIT))
        elif op == "drop" and len(phase) > 1:
            del phase[rng.randint(1, len(phase) - 1)]
        elif op == "stretch":
            waits = [i for i, s in enumerate(phase) if s.op == "run"]
            if waits:
                i = rng.choice(waits)
                ms = max(10, int(int(phase[i].args[0]) * rng.choice((0.25, 0.5, 2.0, 4.0))))
                phase[i] = Step("run", (str(ms),))
        elif op == "net":
            at = rng.randint(1, len(phase))
            phase[at:at] = [plan.lossy_net(), Step("run", (str(rng.randint(500, 8000)),))]
    return script.with_steps(phase + suffix)


def build_dledger(script: Script, adapter: str, record_trace: bool = True, timing: Timing | None = None):
    """The cluster of ``script``; nodes keep the profile's timing unless ``timing`` is given."""
    target = dledger_target(adapter, script.profile, timing)
    return DLedgerCluster(script, target, timing or target.profile.timing, record_trace)
