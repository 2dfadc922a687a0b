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
| ``await-leader [MS]`` | run until one stable leader exists; a liveness violation if none within MS (default: the liveness bound) and no fault is active (all nodes up, no cut, no loss) |
| ``expect ...`` | ``leader N [term T]``, ``role N ROLE``, ``term N T``, ``committed N I`` |
"""
from __future__ import annotations

import random

from conformance.errors import UserError
from conformance.faults import FAULT_MIXES, check_fault_mixes
from conformance.scenarios.base import ExpectationFailed, RunSummary, SimCluster
from conformance.script import Script, Step
from conformance.targets import DLedgerTarget, dledger_target
from reference.simulator import Simulator
from results.runresult import Metric, RunConfig
from spec.dledger.candidate import CandidateAction
from spec.dledger.heartbeat import HEARTBEAT_OUTCOMES, HEARTBEAT_ROUND_OUTCOMES
from spec.dledger.log import PUSH_ROWS
from spec.dledger.profiles import DEFAULT_TIMING, Timing
from spec.dledger.records import ClientAppend, DLedgerView, ParseResult, Role, VoteRequest, VoteResponse, VoteResult
from spec.invariants import dledger as inv

AWAIT_POLL_MS = 50  # how often await-leader looks for a stable leader


class DLedgerCluster(SimCluster):
    scenario = "dledger"
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

        def factory(node_id, durable, now, draw):
            return target.make_node(node_id, self.peers, draw, durable, now)

        self._start_simulator(factory, (self._observe,))

    def new_history(self):
        return inv.DLedgerHistory()

    def initial_term(self) -> int:
        return self.target.profile.initial_term

    def liveness_bound_ms(self) -> int:
        return inv.liveness_bound_ms(self.timing)

    # ------------------------------------------------------------------ monitor

    def _observe(self, sim: Simulator, node_id: str, incoming, ready) -> None:
        """Judge what this activation can have changed: the node that stepped, when its
        state changed (its ``version``) or it answered a vote, against the history of
        everything recorded before (``full_check``: every live node, every time)."""
        node = sim.nodes[node_id]
        if self.full_check:
            self._judge_others(sim, node_id)
        if node is None:
            self.node_crashed(node_id)
            if node_id == self._leader:
                self._leader_lost()
            return
        version = getattr(node, "version", None)
        is_vote = incoming is not None and isinstance(incoming.payload, VoteRequest)
        if version is not None and version == self._versions.get(node_id) and not is_vote:
            if self.full_check:
                self.judge(node.observe(), None, None)
            return
        self._versions[node_id] = version
        view = node.observe()
        self.judge(view, incoming, ready)
        self._track_leader(view)

    def _judge_others(self, sim: Simulator, node_id: str) -> None:
        for other in self.peers:
            node = sim.nodes[other]
            if other != node_id and node is not None:
                self.judge(node.observe(), None, None)

    def node_crashed(self, node_id: str) -> None:
        """``node_id`` just crashed (DLedger's invariants remember nothing volatile)."""

    def judge(self, view: DLedgerView, incoming, ready) -> None:
        """Check every invariant on a fresh observation, then remember it."""
        is_vote = incoming is not None and isinstance(incoming.payload, VoteRequest)
        for violation in inv.check_node(self.history, view):
            self.violate(violation)
        inv.record(self.history, view)
        if is_vote and ready is not None:
            for m in ready.messages:
                if m.dst == incoming.src and isinstance(m.payload, VoteResponse):
                    found = inv.check_vote_grant(view, incoming.payload, m.payload)
                    if found is not None:
                        self.violate(found)

    def _track_leader(self, view) -> None:
        node_id = view.node_id
        if view.role is Role.LEADER:
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

    def step_await_leader(self, step: Step) -> None:
        bound = self.ms_arg(step, 0, self.liveness_bound_ms())
        deadline = self.sim.now + bound
        judged = not self.faults_active()
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


def generate_dledger_script(config: RunConfig, timing: Timing = DEFAULT_TIMING) -> Script:
    """A random but seed-determined fault schedule, then healing and a liveness check."""
    check_fault_mixes((config.fault_mix,))
    if not 1 <= config.group_size <= 9:
        raise UserError(f"group size must be between 1 and 9, not {config.group_size}")
    rng = random.Random(f"{config.seed}:plan")
    nodes = tuple(f"n{i}" for i in range(1, config.group_size + 1))
    faults = FAULT_MIXES[config.fault_mix]
    steps: list[Step] = [Step("run", (str(rng.randint(2000, 6000)),))]
    down: set[str] = set()
    elapsed = 0
    body = 0
    while elapsed < config.duration_ms:
        choice = rng.choice(faults + ("append", "append", "run", "run"))
        if choice == "crash":
            up = [n for n in nodes if n not in down]
            if down and rng.random() < 0.5:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
            elif up:
                n = rng.choice(up)
                down.add(n)
                steps.append(Step("crash", (n,)))
        elif choice == "crash-leader":
            # an unknown number of nodes may be down after this: restart one first
            if down:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
            steps.append(Step("crash-leader"))
            steps.append(Step("run", (str(rng.randint(50, 3000)),)))
            steps.append(Step("restart-all"))
            down.clear()
        elif choice == "isolate-leader":
            steps.append(Step("isolate-leader"))
            body += 1
            steps.append(Step("append-leader", (f"m{body}",)))
        elif choice == "partition" and len(nodes) > 1:
            shuffled = list(nodes)
            rng.shuffle(shuffled)
            cut = rng.randint(1, len(nodes) - 1)
            steps.append(Step("partition", tuple(shuffled[:cut]) + ("|",) + tuple(shuffled[cut:])))
        elif choice == "block" and len(nodes) > 1:
            a, b = rng.sample(nodes, 2)
            steps.append(Step("block", (a, b)))
        elif choice == "lossy":
            if rng.random() < 0.5:
                drop = rng.choice(("0.05", "0.2", "0.5"))
                steps.append(Step("net", (f"1..{rng.choice((20, 100, 400))}", f"drop={drop}", "dup=0.05")))
            else:
                steps.append(Step("net", ("default",)))
        elif choice == "append":
            body += 1
            if rng.random() < 0.25:  # clients sometimes reach a node that does not lead
                steps.append(Step("append", (rng.choice(nodes), f"m{body}")))
            else:
                steps.append(Step("append-leader", (f"m{body}",)))
        if choice in ("partition", "block", "isolate-leader") and rng.random() < 0.3:
            steps.append(Step("heal"))
        ms = rng.randint(100, 4000)
        steps.append(Step("run", (str(ms),)))
        elapsed += ms
    # the last fault heals: everything restarts, the network is clean
    steps.append(Step("heal"))
    steps.append(Step("restart-all"))
    steps.append(Step("net", ("default",)))
    steps.append(Step("await-leader"))
    for i in range(3):
        body += 1
        steps.append(Step("append-leader", (f"m{body}",)))
    steps.append(Step("run", ("3000",)))
    return Script(
        scenario="dledger",
        nodes=nodes,
        seed=config.seed,
        profile=config.profile,
        adapter=config.adapter,
        start_spread_ms=1000,
        steps=tuple(steps),
    )


def build_dledger(script: Script, adapter: str, record_trace: bool = True, timing: Timing | None = None):
    """The cluster of ``script``; nodes keep the profile's timing unless ``timing`` is given."""
    target = dledger_target(adapter, script.profile, timing)
    return DLedgerCluster(script, target, timing or target.profile.timing, record_trace)
