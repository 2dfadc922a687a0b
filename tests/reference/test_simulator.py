"""The simulator is deterministic: one seed, one trace, byte for byte."""
import hashlib
import os
import subprocess
import sys

import pytest

from conformance.campaign import execute
from conformance.scenarios.registry import get_scenario
from results.runresult import RunConfig
from reference.node_api import Message, Ready
from reference.simulator import NetConfig, SimulationError, Simulator

FAULT_MIXES = ("mixed", "crash", "partition", "lossy", "none")


def campaign_trace(seed: int, size: int = 3, mix: str = "mixed") -> str:
    config = RunConfig("determinism", seed, "reference", "dledger", "dledger-0.4", size, mix, 20_000)
    script = get_scenario("dledger").generate(config)
    return execute(script, "reference", record_trace=True).cluster.trace_jsonl()


@pytest.mark.parametrize("seed", range(24))
def test_same_seed_same_trace(seed):
    mix = FAULT_MIXES[seed % len(FAULT_MIXES)]
    size = 3 + 2 * (seed % 2)
    first = campaign_trace(seed, size, mix)
    assert first == campaign_trace(seed, size, mix)
    assert first.count("\n") > 50


def test_different_seeds_differ():
    assert len({hashlib.sha256(campaign_trace(s).encode()).hexdigest() for s in range(6)}) == 6


def test_trace_identical_across_processes_and_hash_seeds():
    code = (
        "import hashlib,sys; sys.path.insert(0, '.');"
        "from tests.reference.test_simulator import campaign_trace;"
        "print(hashlib.sha256(''.join(campaign_trace(s) for s in range(5)).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))), check=True)
        digests.add(out.stdout.strip())
    local = hashlib.sha256("".join(campaign_trace(s) for s in range(5)).encode()).hexdigest()
    assert digests == {local}


def test_every_fault_kind_appears_in_mixed_campaign_traces():
    kinds = set()
    for seed in range(10):
        for line in campaign_trace(seed).splitlines():
            kinds.add(line.split('"kind":"')[1].split('"')[0])
    assert {"send", "deliver", "drop", "duplicate", "crash", "restart", "partition", "heal", "net", "client",
            "state", "boot"} <= kinds


class Echo:
    """A tiny node: replies "pong" to "ping", persists a counter of pings."""

    def __init__(self, node_id, durable, now, draw):
        self.node_id = node_id
        self.count = durable or 0

    def tick(self, now):
        return Ready()

    def step(self, m, now):
        if m.payload == "ping":
            self.count += 1
            return Ready((Message(self.node_id, m.src, "pong"),), self.count)
        return Ready()

    def observe(self):
        return self.count

    def summary(self):
        return {"count": self.count}


def test_crash_keeps_only_what_was_persisted_and_partitions_drop():
    sim = Simulator(1, ("a", "b"), Echo, NetConfig(5, 5))
    sim.run_for(1)
    sim.client("a", "ping")
    assert sim.disk["a"] == 1
    sim.crash("a")
    sim.restart("a")
    assert sim.nodes["a"].count == 1
    sim.partition([["a"], ["b"]])
    sim._send(Message("a", "b", "ping"))
    sim.run_for(20)
    assert sim.nodes["b"].count == 0
    sim.heal()
    sim._send(Message("a", "b", "ping"))
    sim.run_for(20)
    assert sim.nodes["b"].count == 1
    sim.block("b", "a")
    sim._send(Message("a", "b", "ping"))  # a→b delivered, the pong b→a is lost
    sim.run_for(20)
    assert sim.nodes["b"].count == 2
    assert [e.kind for e in sim.trace if e.kind in ("drop", "reply")] == ["reply", "drop", "drop"]


def test_manual_network_errors_name_the_missing_message():
    sim = Simulator(1, ("a", "b"), Echo, manual=True)
    with pytest.raises(SimulationError, match="no str message in flight from a to b"):
        sim.deliver("a", "b", "str")
    with pytest.raises(SimulationError, match="unknown node"):
        sim.crash("zz")


def test_a_slow_link_delays_and_reorders_only_its_own_messages():
    sim = Simulator(3, ("a", "b", "c"), Echo, NetConfig(5, 5))
    sim.run_for(1)
    sim.slow_down("a", "b", (100, 2000))
    sent = sim.now
    for _ in range(20):
        sim._send(Message("a", "b", "ping"))
        sim._send(Message("a", "c", "ping"))
    sim.run_for(10)
    assert sim.nodes["c"].count == 20 and sim.nodes["b"].count == 0  # a->c keeps its 5 ms
    sim.run_for(2100)
    assert sim.nodes["b"].count == 20
    arrivals = [e.time - sent for e in sim.trace if e.kind == "deliver" and e.node == "b"]
    assert min(arrivals) >= 105 and max(arrivals) <= 2005 and len(set(arrivals)) > 1
    sim.slow_down("a", "b", None)
    sim._send(Message("a", "b", "ping"))
    sim.run_for(10)
    assert sim.nodes["b"].count == 21  # back to 5 ms
    assert [e.data for e in sim.trace if e.kind == "slow"] == [
        {"link": ["a", "b"], "extra_delay_ms": [100, 2000]}, {"link": ["a", "b"], "extra_delay_ms": None}]


def test_slow_step_rejects_a_malformed_window():
    from conformance.errors import UserError
    from conformance.script import parse_script

    text = "scenario dledger\nnodes n1 n2 n3\nseed 1\nslow n1 n2 {}\n"
    for bad in ("fast", "9..3", ""):
        with pytest.raises(UserError, match="slow A B MIN..MAX"):
            execute(parse_script(text.format(bad)), "reference")
    assert not execute(parse_script(text.format("10..20")), "reference").violations


@pytest.mark.parametrize("connections", [True, False])
def test_with_connections_a_message_reaches_only_the_life_it_was_sent_to(connections):
    """Over connections (TCP: the dledger, controller, truncation and classic scenarios) a
    message sent to a node that crashes before it arrives is lost, even if the node lives
    again by then, and one sent while it is down never arrives; what a node sent before it
    crashed arrives while it is down, not once it lives again. Datagrams (the raft
    scenario) reach whatever incarnation is up when they land."""
    sim = Simulator(1, ("a", "b"), Echo, NetConfig(50, 50), connections=connections)
    sim.run_for(1)
    sim._send(Message("a", "b", "ping"))  # to b's first life
    sim.crash("b")
    sim.restart("b")
    sim.run_for(60)
    assert sim.nodes["b"].count == (0 if connections else 1)
    sim.crash("b")
    sim._send(Message("a", "b", "ping"))  # to a down node
    sim.run_for(10)
    sim.restart("b")
    sim.run_for(60)
    assert sim.nodes["b"].count == (0 if connections else 2)
    sim._send(Message("a", "b", "ping"))  # from a's first life, a down when it lands
    sim.crash("a")
    sim.run_for(60)
    assert sim.nodes["b"].count == (1 if connections else 3)
    sim._send(Message("b", "a", "ping"))  # b's answer would go to a dead connection (a is down)
    sim.restart("a")
    sim.run_for(60)
    assert sim.nodes["a"].count == (0 if connections else 1)
    sim._send(Message("a", "b", "ping"))  # from a's second life, which crashes and lives again
    sim.crash("a")
    sim.restart("a")
    sim.run_for(60)
    assert sim.nodes["b"].count == (1 if connections else 4)


class Pushed(str):
    """A payload that travels on a connection its receiver opened (as a master's batches
    travel on the HA connection its slave's handshake opened)."""


@pytest.mark.parametrize("manual", [False, True])
def test_on_the_receivers_connection_a_message_reaches_only_the_life_that_opened_it(manual):
    """What travels on a connection the receiver opened goes to the receiver's life the
    sender last heard from: nowhere before it has heard from the receiver, nowhere once that
    life is gone (the sender writes to a dead connection), and the sender's own next life
    has heard from nobody. Other messages are unaffected."""
    sim = Simulator(1, ("a", "b"), Echo, NetConfig(5, 5), manual=manual, connections=True,
                    on_receivers_connection=frozenset({Pushed}))

    def send(*messages):
        for src, dst, payload in messages:
            sim._send(Message(src, dst, payload))
        sim.deliver_all() if manual else sim.run_for(20)

    sim.run_for(1)
    send(("a", "b", Pushed("ping")))  # b never opened a connection to a
    assert sim.nodes["b"].count == 0
    send(("b", "a", "ping"))  # b opens one
    send(("a", "b", Pushed("ping")))
    assert sim.nodes["b"].count == 1
    sim.crash("b")
    sim.restart("b")
    send(("a", "b", Pushed("ping")),  # on b's first life's connection: dead
         ("a", "b", "ping"))  # a connection of a's own reaches b's new life
    assert sim.nodes["b"].count == 2
    send(("b", "a", "ping"))  # b's new life opens one
    send(("a", "b", Pushed("ping")))
    assert sim.nodes["b"].count == 3
    sim.crash("a")
    sim.restart("a")
    send(("a", "b", Pushed("ping")))  # a's new life has heard from nobody
    assert sim.nodes["b"].count == 3
    last = [e for e in sim.trace if e.kind in ("send", "drop") and isinstance(e.data.payload, Pushed)][-2:]
    assert [(e.kind, e.node) for e in last] == [("send", "a"), ("drop", "a")]  # dropped as it was sent


class Streamed(str):
    """A payload that travels as a byte stream does (a slave's reports on its HA connection)."""


def test_in_order_payloads_arrive_once_and_in_the_order_they_were_sent():
    """The network duplicates and reorders other messages; ``in_order`` ones arrive once,
    each after the one sent before it on its link, and may still be lost."""
    def arrivals(in_order):
        sim = Simulator(3, ("a", "b"), Echo, NetConfig(1, 200, drop=0.2, duplicate=0.5), connections=True,
                        in_order=in_order)
        sim.run_for(1)
        for i in range(200):
            sim._send(Message("a", "b", Streamed(f"r{i}")))
            sim.run_for(2)
        sim.run_for(1000)
        return [int(e.data.payload[1:]) for e in sim.trace if e.kind == "deliver" and e.node == "b"]
    free = arrivals(frozenset())
    assert len(free) != len(set(free)) and free != sorted(free)  # duplicated and reordered
    ordered = arrivals(frozenset({Streamed}))
    assert ordered == sorted(set(ordered)) and 100 < len(ordered) < 200  # once, in order, some lost


def test_a_node_not_yet_booted_takes_its_connections_when_it_boots():
    sim = Simulator(1, ("a", "b"), Echo, NetConfig(5, 5), boot_at={"a": 0, "b": 100}, connections=True)
    sim.run_for(1)
    sim._send(Message("a", "b", "ping"))
    sim.run_for(200)
    assert sim.nodes["b"].count == 0  # it landed before b booted: lost
    sim2 = Simulator(1, ("a", "b"), Echo, NetConfig(150, 150), boot_at={"a": 0, "b": 100}, connections=True)
    sim2.run_for(1)
    sim2._send(Message("a", "b", "ping"))
    sim2.run_for(200)
    assert sim2.nodes["b"].count == 1


def test_the_tcp_scenarios_run_over_connections_and_raft_over_datagrams():
    """raft nodes talk over datagrams (PySyncObj over UDP), unless the implementation's hello
    says they are DLedger nodes (rmqha's reference: ``"profiles": {"raft": "dledger-0.4"}``)."""
    def cluster(name, adapter="reference"):
        script = get_scenario(name).generate(RunConfig("c", 1, adapter, name, None, 3, "none", 1_000))
        return execute(script, adapter, record_trace=False).cluster
    assert {n: cluster(n).sim.connections for n in ("dledger", "controller", "truncation", "classic", "raft")} == \
        {"dledger": True, "controller": True, "truncation": True, "classic": True, "raft": True}
    assert cluster("raft", "pysyncobj").sim.connections is False


def test_by_hand_a_crash_loses_what_was_on_its_way_to_the_node_and_a_restart_what_it_had_sent():
    """Manual delivery keeps the connections' rules: at a crash, what was in flight to the
    node is lost; what it sent stays deliverable while it is down, not once it lives again."""
    sim = Simulator(1, ("a", "b", "c"), Echo, manual=True, connections=True)
    sim.run_for(1)
    sim._send(Message("a", "b", "ping"))
    sim._send(Message("b", "c", "ping"))
    sim._send(Message("b", "a", "ping"))
    sim.crash("b")
    assert [(m.src, m.dst) for m in sim.in_flight] == [("b", "c"), ("b", "a")]
    sim.deliver("b", "c")  # on the wire while b is down; c's answer to b (down) is lost
    assert sim.nodes["c"].count == 1 and sim.in_flight == [Message("b", "a", "ping")]
    sim.restart("b")
    assert sim.in_flight == [] and sim.nodes["a"].count == 0


class Amplifier(Echo):
    """Answers every message twice: traffic that feeds itself."""

    def step(self, m, now):
        peer = "b" if self.node_id == "a" else "a"
        return Ready((Message(self.node_id, peer, "ping"), Message(self.node_id, peer, "ping")))


def test_a_flood_ends_the_run_as_the_implementations_error():
    """A node whose traffic feeds itself would keep a run going forever (the per-request
    timeout never fires: every answer comes at once); it ends as a ``MessageFlood``."""
    from reference.simulator import MAX_SENDS_PER_SECOND, MessageFlood

    sim = Simulator(1, ("a", "b"), Amplifier, NetConfig(1, 1))
    sim.run_for(1)
    sim.client("a", "ping")
    with pytest.raises(MessageFlood, match=f"more than {MAX_SENDS_PER_SECOND:,} messages within simulated second"):
        sim.run_for(1000)
