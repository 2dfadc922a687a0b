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

from conformance.scenarios.registry import get_scenario
from spec.dledger.profiles import PROFILES as DLEDGER_PROFILES
from spec.invariants.dledger import known_profile_difference
from conformance.script import Script, Step

NODES = ("n1", "n2", "n3")
# Every rule lets some time pass afterwards, so that each step of a generated run
# gives the protocol time to react (shrinking goes towards the shortest wait).
WAITS = st.sampled_from([300, 1000, 2500, 7000])


class ScenarioMachine(RuleBasedStateMachine):
    """What every machine shares: rules run script steps on a scenario cluster, and no
    invariant may be violated after any rule (the message carries the script so far)."""

    def __init__(self):
        super().__init__()
        self.steps: list[Step] = []
        self.cluster = None

    def _do(self, op: str, *args: str) -> None:
        step = Step(op, tuple(args))
        self.steps.append(step)
        self.cluster.current_step = len(self.steps) - 1
        self.cluster.do(step)

    def _then_wait(self, ms: int) -> None:
        self._do("run", str(ms))

    def _down(self):
        return [n for n in self.nodes if self.cluster.sim.nodes[n] is None]

    def _up(self):
        return [n for n in self.nodes if self.cluster.sim.nodes[n] is not None]

    def _fail(self, message: str):
        script = self.script.with_steps(self.steps).render()
        raise AssertionError(f"{message}\n--- scenario script ---\n{script}")

    # Rules every machine has (the subclasses add their protocol's own).
    lossy_net = ("1..200", "drop=0.3", "dup=0.1")  # the ``net`` rule's bad network

    @rule(ms=WAITS)
    def run(self, ms):
        self._do("run", str(ms))

    @rule(data=st.data(), ms=WAITS)
    def crash(self, data, ms):
        up = self._up()
        if up:
            self._do("crash", data.draw(st.sampled_from(up), label="node"))
        self._then_wait(ms)

    @rule(ms=WAITS)
    def heal(self, ms):
        self._do("heal")
        self._then_wait(ms)

    @rule(lossy=st.booleans(), ms=WAITS)
    def net(self, lossy, ms):
        self._do("net", *(self.lossy_net if lossy else ("default",)))
        self._then_wait(ms)

    @rule(data=st.data(), ms=WAITS)
    def restart(self, data, ms):
        down = self._down()
        if down:
            self._do("restart", data.draw(st.sampled_from(down), label="node"))
        self._then_wait(ms)

    @rule(data=st.data(), ms=WAITS)
    def block(self, data, ms):
        a, b = data.draw(st.lists(st.sampled_from(self.nodes), min_size=2, max_size=2, unique=True), label="link")
        self._do("block", a, b)
        self._then_wait(ms)

    def _settle(self, *steps: tuple[str, ...]) -> bool:
        """The teardown: every fault ends (``steps``), then no invariant may be violated.
        False (nothing done) when the run is failing already."""
        if self.cluster is None or self.cluster.violations:
            return False
        for step in steps:
            self._do(*step)
        self.no_violation()
        return True

    @invariant()
    def no_violation(self):
        found = [r for r in self.cluster.violations if not self.known_difference(r.violation.property)] \
            if self.cluster is not None else ()
        if found:
            first = found[0].violation
            self._fail(f"{first.property}: {first.message}")

    def known_difference(self, prop: str) -> bool:
        """A violation the declared profile is known to allow (reports mark it, a profile's
        own behaviour is no failure of the implementation that declares it)."""
        return False


class DLedgerMachine(ScenarioMachine):
    adapter = "reference"
    profile = "dledger-0.4"
    scenario = "dledger"
    nodes = NODES

    def known_difference(self, prop: str) -> bool:
        profile = DLEDGER_PROFILES.get(self.profile) if self.scenario == "dledger" else None
        return profile is not None and known_profile_difference(prop, profile)

    @initialize(seed=st.integers(0, 2**16))
    def start(self, seed):
        self.script = Script(self.scenario, self.nodes, seed, self.profile, self.adapter, start_spread_ms=1000)
        self.cluster = get_scenario(self.scenario).build(self.script, self.adapter, record_trace=False)

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

    @rule(body=st.integers(0, 99), ms=WAITS)
    def append(self, body, ms):
        self._do("append-leader", f"m{body}")
        self._then_wait(ms)

    def teardown(self):
        if self.cluster is None or any(not self.known_difference(r.violation.property) for r in self.cluster.violations):
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


# ---------------------------------------------------------------------- controller mode

CONTROLLERS = ("c1", "c2", "c3")
BROKERS3 = ("b1", "b2", "b3")


class ControllerMachine(ScenarioMachine):
    """The full RIP-44 stack (``--scenario controller``): 3 controllers and a broker set.

    Rules are the controller scenario's steps: producer writes (to the master or over a
    stale route), consumer reads, broker and controller crashes and restarts, the
    master's and the active controller's crash, partitions on both tiers, one-way
    blocks, lossy and slow links, an operator's master switch. Every invariant of
    spec/invariants/controller.py is checked after every node activation.
    """

    adapter = "reference"
    profile = "rocketmq-5.1"
    acks = "all"
    brokers = BROKERS3
    lossy_net = ("1..60", "drop=0.1", "dup=0.05")

    @property
    def nodes(self) -> tuple[str, ...]:
        return CONTROLLERS + self.brokers

    @initialize(seed=st.integers(0, 2**16))
    def start(self, seed):
        self.script = Script("controller", self.nodes, seed, self.profile, self.adapter, start_spread_ms=500,
                             options=(("acks", self.acks),))
        self.cluster = get_scenario("controller").build(self.script, self.adapter, record_trace=False)
        self._do("await-master", "30000")

    @rule(count=st.integers(1, 4), data=st.data(), stale=st.booleans(), ms=WAITS)
    def write(self, count, data, stale, ms):
        if stale:  # a producer whose route names some broker, master or not
            self._do("write", str(count), data.draw(st.sampled_from(self.brokers), label="broker"))
        else:
            self._do("write", str(count))
        self._then_wait(ms)

    @rule(data=st.data())
    def consume(self, data):
        target = data.draw(st.sampled_from((None,) + self.brokers), label="from")
        self._do("consume", *((target,) if target else ()))

    @rule(data=st.data(), read=st.booleans(), ms=WAITS)
    def restart(self, data, read, ms):
        down = self._down()
        if down:
            node = data.draw(st.sampled_from(down), label="node")
            self._do("restart", node)
            if read and node in self.brokers:
                self._do("consume", node)  # a consumer still routed to it
        self._then_wait(ms)

    @rule(which=st.sampled_from(("crash-master", "crash-active-controller")), ms=WAITS)
    def crash_leader(self, which, ms):
        self._do(which)
        self._then_wait(ms)

    @rule(data=st.data(), ms=WAITS)
    def partition(self, data, ms):
        side = data.draw(st.lists(st.sampled_from(self.nodes), min_size=1, max_size=3, unique=True), label="side")
        self._do("partition", *side)
        self._then_wait(ms)

    @rule(data=st.data(), switches=st.integers(1, 3), gap=st.sampled_from((300, 800)))
    def switch_master(self, data, switches, gap):
        """An operator moves the master, maybe while one broker hears the controllers late."""
        slowed = data.draw(st.sampled_from((None,) + self.brokers), label="slowed")
        if slowed:
            for c in CONTROLLERS:
                self._do("slow", c, slowed, "200..3000")
        for _ in range(switches):
            self._do("elect")
            self._then_wait(gap)
        if slowed:
            self._then_wait(3000)
            for c in CONTROLLERS:
                self._do("slow", c, slowed, "off")

    def teardown(self):
        # every fault ends: a master must emerge, take writes and serve them
        settled = self._settle(("heal",), ("net", "default"), ("restart-all",), ("await-master", "60000"),
                               ("write", "2"), ("run", "5000"), ("consume",))
        if settled and self.cluster.current_master() is None:
            self._fail("no master within 60 s after every fault ended")


def controller_machine_for(adapter: str = "reference", acks: str = "all", brokers: int = 3):
    return type("ControllerMachineFor", (ControllerMachine,),
                {"adapter": adapter, "acks": acks, "brokers": BROKERS3[:brokers]})


# ---------------------------------------------------------------------- truncation

REPLICAS3 = ("r1", "r2", "r3")
# A replica flushes every 500 ms and a failover takes effect at once: what diverges is
# the few writes in flight around a failover or a crash, so waits here are short.
SHORT_WAITS = st.sampled_from([10, 50, 150, 600, 2000])


class TruncationMachine(ScenarioMachine):
    """A broker set whose roles the harness assigns (``--scenario truncation``): failovers
    to fresh master epochs, writes acknowledged by the whole set, crashes that lose
    unflushed tails, restarts, partitions, one-way blocks, lossy links. Every invariant
    of spec/invariants/truncation.py is checked after every node activation."""

    adapter = "reference"
    profile = "rocketmq-5.1"
    replicas = REPLICAS3
    lossy_net = ("1..100", "drop=0.2", "dup=0.05")

    @property
    def nodes(self) -> tuple[str, ...]:
        return self.replicas

    @initialize(seed=st.integers(0, 2**16), data=st.data())
    def start(self, seed, data):
        self.script = Script("truncation", self.nodes, seed, self.profile, self.adapter, start_spread_ms=0)
        self.cluster = get_scenario("truncation").build(self.script, self.adapter, record_trace=False)
        self._do("run", "50")
        self._do("failover", data.draw(st.sampled_from(self.nodes), label="master"))

    # the rules every machine has, with this scenario's short waits
    @rule(ms=SHORT_WAITS)
    def run(self, ms):
        self._do("run", str(ms))

    @rule(data=st.data(), ms=SHORT_WAITS)
    def crash(self, data, ms):
        ScenarioMachine.crash(self, data, ms)

    @rule(ms=SHORT_WAITS)
    def heal(self, ms):
        ScenarioMachine.heal(self, ms)

    @rule(lossy=st.booleans(), ms=SHORT_WAITS)
    def net(self, lossy, ms):
        ScenarioMachine.net(self, lossy, ms)

    @rule(data=st.data(), ms=SHORT_WAITS)
    def failover(self, data, ms):
        up = self._up()
        if up:
            self._do("failover", data.draw(st.sampled_from(up), label="master"))
        self._then_wait(ms)

    @rule(count=st.integers(1, 4), ms=SHORT_WAITS)
    def write(self, count, ms):
        self._do("write", str(count))
        self._then_wait(ms)

    @rule(data=st.data(), ms=SHORT_WAITS)
    def restart(self, data, ms):
        ScenarioMachine.restart(self, data, ms)

    @rule(data=st.data(), ms=SHORT_WAITS)
    def partition(self, data, ms):
        a, b = data.draw(st.lists(st.sampled_from(self.nodes), min_size=2, max_size=2, unique=True), label="cut")
        self._do("partition", a, "|", b)
        self._then_wait(ms)

    @rule(data=st.data(), ms=SHORT_WAITS)
    def block(self, data, ms):
        ScenarioMachine.block(self, data, ms)

    def teardown(self):
        # every fault ends; a last failover must bring every replica to the master's data
        self._settle(("heal",), ("net", "default"), ("restart-all",), ("failover", self.nodes[0]),
                     ("write", "2"), ("run", "3000"))


def truncation_machine_for(adapter: str = "reference", replicas: int = 3):
    return type("TruncationMachineFor", (TruncationMachine,), {"adapter": adapter, "replicas": REPLICAS3[:replicas]})


# ---------------------------------------------------------------------- classic master/slave HA

CLASSIC_BROKERS = ("b1", "b2", "b3")


class ClassicMachine(ScenarioMachine):
    """A classic master/slave group (``--scenario classic``): a master and two slaves.

    Rules are the classic scenario's steps: producer writes of varied sizes (files roll
    over), broker crashes (the unflushed tail is lost) and restarts, an operator's wiped
    store, manual failover and the commitlog cleaner, partitions, one-way blocks, lossy
    links. Every invariant of spec/invariants/classic.py is checked after every node
    activation; the teardown ends every fault, writes again and idles long enough for
    the liveness properties (connection-stable, slave-catches-up) to be judged.
    """

    adapter = "reference"
    profile: str | None = None  # None: drawn
    mode: str | None = None
    flush: str | None = None
    nodes = CLASSIC_BROKERS
    lossy_net = ("1..60", "drop=0.1", "dup=0.05")
    settle_ms = 70_000  # QUIET_MS + CATCH_UP_MS + 10 s (conformance/scenarios/classic.py)

    @initialize(seed=st.integers(0, 2**16), data=st.data())
    def start(self, seed, data):
        # a configuration left open (None) is drawn: SYNC/ASYNC_MASTER, SYNC/ASYNC_FLUSH, release
        mode = self.mode or data.draw(st.sampled_from(("sync", "async")), label="mode")
        flush = self.flush or data.draw(st.sampled_from(("async", "sync")), label="flush")
        profile = self.profile or data.draw(st.sampled_from(("rocketmq-4.9.3", "rocketmq-4.9.0", "rocketmq-5.0")),
                                            label="profile")
        options = (("mode", mode), ("flush", flush)) + ((("in-sync-replicas", "2"),) if profile == "rocketmq-5.0" else ())
        self.script = Script("classic", self.nodes, seed, profile, self.adapter, options=options)
        self.cluster = get_scenario("classic").build(self.script, self.adapter, record_trace=False)
        self._do("run", "6000")

    @rule(count=st.integers(1, 6), size=st.sampled_from((24, 64, 200)), data=st.data(), stale=st.booleans(),
          ms=st.sampled_from((5, 300, 3000)))
    def write(self, count, size, data, stale, ms):
        target = (data.draw(st.sampled_from(self.nodes), label="broker"),) if stale else ()
        self._do("write", str(count), *target, f"size={size}")
        self._then_wait(ms)

    @rule(data=st.data(), ms=WAITS)
    def wipe(self, data, ms):
        self._do("wipe", data.draw(st.sampled_from(self.nodes), label="node"))
        self._then_wait(ms)

    @rule(data=st.data(), ms=WAITS)
    def failover(self, data, ms):
        up = self._up()
        if up:
            self._do("failover", data.draw(st.sampled_from(up), label="promoted"))
        self._then_wait(ms)

    @rule(data=st.data(), keep=st.integers(1, 3))
    def clean(self, data, keep):
        self._do("clean", data.draw(st.sampled_from(self.nodes), label="node"), str(keep))

    @rule(data=st.data(), ms=WAITS)
    def partition(self, data, ms):
        side = data.draw(st.lists(st.sampled_from(self.nodes), min_size=1, max_size=2, unique=True), label="side")
        self._do("partition", *side)
        self._then_wait(ms)

    @rule(ms=st.sampled_from((8000, 22000)))
    def idle(self, ms):
        self._do("run", str(ms))

    def teardown(self):
        self._settle(("heal",), ("net", "default"), ("restart-all",), ("run", "7000"), ("write", "3"),
                     ("run", str(self.settle_ms)))


def classic_machine_for(adapter: str = "reference", mode: str | None = None, flush: str | None = None,
                        profile: str | None = None, settle_ms: int = 70_000):
    return type("ClassicMachineFor", (ClassicMachine,),
                {"adapter": adapter, "mode": mode, "flush": flush, "profile": profile, "settle_ms": settle_ms})
