"""Hypothesis stateful testing of a DLedger group (or any Raft group) through any adapter.

Rules are the script steps (run, crash, restart, partition, block, heal, append,
lossy network); the invariants of the scenario (spec/invariants/dledger.py, or
spec/invariants/raft.py for the ``raft`` scenario) are checked by the cluster after
every node activation, and the machine asserts none was violated
after every rule. When a run fails, Hypothesis shrinks the rule sequence and the
error message carries the equivalent scenario script, ready for ``rmqha replay``.
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from conformance.campaign import get_scenario
from conformance.script import Script, Step

NODES = ("n1", "n2", "n3")
# Every rule lets some time pass afterwards, so that each step of a generated run
# gives the protocol time to react (shrinking goes towards the shortest wait).
WAITS = st.sampled_from([300, 1000, 2500, 7000])


class DLedgerMachine(RuleBasedStateMachine):
    adapter = "reference"
    profile = "dledger-0.4"
    scenario = "dledger"
    nodes = NODES

    def __init__(self):
        super().__init__()
        self.steps: list[Step] = []
        self.cluster = None

    @initialize(seed=st.integers(0, 2**16))
    def start(self, seed):
        self.script = Script(self.scenario, self.nodes, seed, self.profile, self.adapter, start_spread_ms=1000)
        self.cluster = get_scenario(self.scenario).build(self.script, self.adapter, record_trace=False)

    def _then_wait(self, ms: int) -> None:
        self._do("run", str(ms))

    def _do(self, op: str, *args: str) -> None:
        step = Step(op, tuple(args))
        self.steps.append(step)
        self.cluster.current_step = len(self.steps) - 1
        self.cluster.do(step)

    def _down(self):
        return [n for n in self.nodes if self.cluster.sim.nodes[n] is None]

    def _up(self):
        return [n for n in self.nodes if self.cluster.sim.nodes[n] is not None]

    @rule(ms=WAITS)
    def run(self, ms):
        self._do("run", str(ms))

    @rule(data=st.data(), ms=WAITS)
    def crash(self, data, ms):
        up = self._up()
        if up:
            self._do("crash", data.draw(st.sampled_from(up), label="node"))
        self._then_wait(ms)

    @rule(data=st.data(), ms=WAITS)
    def restart(self, data, ms):
        down = self._down()
        if down:
            self._do("restart", data.draw(st.sampled_from(down), label="node"))
        self._then_wait(ms)

    @rule(side=st.lists(st.sampled_from(NODES), min_size=1, max_size=2, unique=True), ms=WAITS)
    def partition(self, side, ms):
        rest = [n for n in self.nodes if n not in side]
        self._do("partition", *side, "|", *rest)
        self._then_wait(ms)

    @rule(a=st.sampled_from(NODES), b=st.sampled_from(NODES), ms=WAITS)
    def block(self, a, b, ms):
        if a != b:
            self._do("block", a, b)
        self._then_wait(ms)

    @rule(ms=WAITS)
    def heal(self, ms):
        self._do("heal")
        self._then_wait(ms)

    @rule(lossy=st.booleans(), ms=WAITS)
    def net(self, lossy, ms):
        self._do("net", *(("1..200", "drop=0.3", "dup=0.1") if lossy else ("default",)))
        self._then_wait(ms)

    @rule(body=st.integers(0, 99), ms=WAITS)
    def append(self, body, ms):
        self._do("append-leader", f"m{body}")
        self._then_wait(ms)

    @invariant()
    def no_violation(self):
        if self.cluster is not None and self.cluster.violations:
            first = self.cluster.violations[0].violation
            script = self.script.with_steps(self.steps).render()
            raise AssertionError(f"{first.property}: {first.message}\n--- scenario script ---\n{script}")

    def teardown(self):
        if self.cluster is None or self.cluster.violations:
            return  # already failing: no need to judge liveness
        # the last fault heals: then exactly one leader must emerge in time
        self._do("heal")
        for n in self._down():
            self._do("restart", n)
        self._do("net", "default")
        self._do("await-leader")
        self.no_violation()


def machine_for(adapter: str, profile: str = "dledger-0.4", scenario: str = "dledger"):
    return type("DLedgerMachineFor", (DLedgerMachine,), {"adapter": adapter, "profile": profile,
                                                         "scenario": scenario})
