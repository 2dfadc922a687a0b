"""Deterministic discrete-event simulator for sans-IO nodes.

One seed drives everything: message delays, drops, duplications (and so the
reordering they cause), boot times, and every random draw a node asks for. Each
purpose has its own ``random.Random`` stream derived from the seed and a name, so
a run never touches global random state and the same seed and the same operations
give the same trace, byte for byte.

The simulator owns:

* time (milliseconds) and the nodes' ticks. Each node ticks on its own 10 ms grid
  (``TICK_MS``), from one tick after its boot (boot times: ``start_spread_ms`` draws
  them, ``boot_at`` fixes them), but only when it has something to do: a node that has
  ``next_deadline()`` says after each activation when its tick can next do anything,
  and the simulator wakes it at the first grid time at or after that deadline (or
  when a monitor asks, ``wake_at``). A node without it is ticked at every grid time.
  Idle ticks are skipped, not simulated: see "Deadlines" below;
* the network: per-message delay in ``[min_delay_ms, max_delay_ms]``, loss and
  duplication probabilities, symmetric partitions and one-way link blocks. A message
  that crosses a cut is lost when sent or, if the cut appears while it is in flight,
  when it arrives; a message to a node that is down is lost;
* crashes and restarts: a crash keeps exactly what the node last handed over in
  ``Ready.persist`` (its "disk"); a restart rebuilds the node from it;
* an optional *manual* network, where messages wait in flight until a script
  delivers, drops or duplicates them explicitly (etcd-raft style interaction tests).

Deadlines. Skipping idle ticks changes nothing a node or a trace can see, because
events run in exactly the order a simulator ticking every node every 10 ms runs them.
That order is: by time; at equal times, by when the event was scheduled; then by the
position, among the activations at that earlier time, of the activation that scheduled
it, and by the order it scheduled things in. A tick at ``t`` counts as scheduled by the
node's tick at ``t - 10`` (right after that tick's own messages), the first tick by the
boot. A skipped tick has no activation of its own, so its position is worked out when
needed (``_tick_before``): it follows messages back, 10 ms at a time, while they tie.
Ticks of different nodes at one time keep the order they had when the later of them
booted (``_Chain.rank``).

After every node activation (a tick, a delivery, a client request, a boot) and every
crash, each of ``observers(sim, node_id, incoming, ready)`` is called (the message
delivered, or None, and the node's Ready, or None): that is where invariant monitors
check the cluster. If tracing is on, every event is recorded as a ``TraceEvent``, and
a ``state`` event follows any activation that changed the node's ``summary()``.
"""
from __future__ import annotations

import heapq
import json
import random
from array import array
from typing import Any, Callable, Iterable, Mapping

import attrs

from reference.node_api import TICK_MS, Message, Node, Ready

NodeFactory = Callable[[str, Any, int, Callable[[int], int]], Node]
"""factory(node_id, durable_or_None, now, draw) -> a booted node."""


@attrs.frozen(slots=True)
class NetConfig:
    min_delay_ms: int = 1
    max_delay_ms: int = 20
    drop: float = 0.0  # probability a message is lost
    duplicate: float = 0.0  # probability a message is delivered twice

    def __attrs_post_init__(self):
        if not 0 <= self.min_delay_ms <= self.max_delay_ms:
            raise ValueError(f"bad delay range {self.min_delay_ms}..{self.max_delay_ms}")
        if not (0.0 <= self.drop <= 1.0 and 0.0 <= self.duplicate <= 1.0):
            raise ValueError("drop and duplicate are probabilities in [0, 1]")


@attrs.frozen(slots=True)
class TraceEvent:
    seq: int
    time: int
    kind: str  # send, deliver, drop, duplicate, crash, restart, boot, partition, heal, net, client, state, note
    node: str | None = None
    data: Any = None  # a Message for message events, else a JSON-able value

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=_jsonable)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"seq": self.seq, "time": self.time, "kind": self.kind}
        if self.node is not None:
            d["node"] = self.node
        if isinstance(self.data, Message):
            d["src"], d["dst"] = self.data.src, self.data.dst
            d["msg"] = self.data.kind
            d["body"] = payload_to_dict(self.data.payload)
        elif self.data is not None:
            d["data"] = self.data
        return d


def payload_to_dict(payload: Any) -> Any:
    if isinstance(payload, (bytes, bytearray)):
        return payload.hex()
    if attrs.has(type(payload)):
        return {f.name: payload_to_dict(getattr(payload, f.name)) for f in attrs.fields(type(payload))}
    if isinstance(payload, (tuple, list)):
        return [payload_to_dict(p) for p in payload]
    if hasattr(payload, "name") and hasattr(payload, "value") and type(payload).__module__ != "builtins":
        return payload.name  # enums
    if isinstance(payload, frozenset):
        return sorted(payload)
    if isinstance(payload, Mapping):  # FrozenMap and dicts: sorted [key, value] pairs
        return [[payload_to_dict(k), payload_to_dict(v)] for k, v in sorted(payload.items())]
    return payload


def _jsonable(x: Any) -> Any:
    return payload_to_dict(x)


def trace_to_jsonl(trace: Iterable[TraceEvent]) -> str:
    return "".join(e.to_json() + "\n" for e in trace)


class SimulationError(Exception):
    """A script asked for something impossible (unknown node, no such message)."""


class MessageFlood(Exception):
    """A node sent more messages within one simulated second than any protocol here needs:
    traffic that feeds itself (every message answered twice, say) never lets a run end,
    so the run ends with this as the implementation's error."""


# Sends per node (a group's budget: this times its nodes) within one simulated second past which its
# traffic is a flood. The reference's most for one node, over 40 runs of every scenario and fault
# mix: 144 (a DLedger leader under client appends).
MAX_SENDS_PER_SECOND = 10_000

_WAKE, _DELIVER, _BOOT = 0, 1, 2
_AFTER_SENDS = 1 << 62  # a tick's next tick is scheduled after everything the tick sent


class _Chain:
    """One incarnation of a node and its tick grid (boot time + k * TICK_MS, k >= 1)."""

    __slots__ = ("index", "node_id", "node", "boot_time", "boot_act", "rank", "wake_at", "pending", "requested",
                 "deadlines")

    def __init__(self, index: int, node_id: str, node: Node, boot_time: int, boot_act: int, rank: tuple,
                 deadlines: bool):
        self.index = index  # activations that are this chain's ticks have parent -1 - index
        self.node_id = node_id
        self.node = node
        self.boot_time = boot_time
        self.boot_act = boot_act
        self.rank = rank  # order of this chain's ticks among other chains' ticks at the same time
        self.wake_at: int | None = None  # the tick it is to be woken at
        self.pending: set[int] = set()  # times with a wake in the heap (some may be stale)
        self.requested: int | None = None  # a monitor's wake_at
        self.deadlines = deadlines and callable(getattr(node, "next_deadline", None))


class _TickAt:
    """Heap-key stand-in for "chain's tick at time t", which schedules its tick at t + 10.

    It compares with an activation id (an int) as the old ticker's sequence numbers
    would have, and with another chain's tick at the same time by rank.
    """

    __slots__ = ("sim", "chain", "t")

    def __init__(self, sim: "Simulator", chain: _Chain, t: int):
        self.sim, self.chain, self.t = sim, chain, t

    def __eq__(self, other) -> bool:
        if type(other) is _TickAt:
            return other.chain is self.chain
        return self.sim._act_parent[other] == -1 - self.chain.index  # it is this tick itself

    def __lt__(self, other) -> bool:
        if type(other) is _TickAt:
            return self.chain.rank < other.chain.rank
        return self.sim._tick_before(self.chain, self.t, other)

    def __gt__(self, other) -> bool:
        if type(other) is _TickAt:
            return self.chain.rank > other.chain.rank
        return not self.__eq__(other) and not self.sim._tick_before(self.chain, self.t, other)

    __hash__ = None


HALT_NEVER = 1 << 62


class Halted(Exception):
    """Time reached ``Simulator.halt_at``: the run stops there (control flow, not a failure)."""


class Simulator:
    # False: tick every node at every grid time, whatever its deadlines say (the behaviour
    # before deadlines; tests and benchmarks/trace_digests.py compare the two)
    use_deadlines = True

    def __init__(
        self,
        seed: int,
        node_ids: Iterable[str],
        factory: NodeFactory,
        net: NetConfig = NetConfig(),
        start_spread_ms: int = 0,
        boot_at: dict[str, int] | None = None,
        manual: bool = False,
        record_trace: bool = True,
        observers: Iterable[Callable[..., None]] = (),
        connections: bool = False,
        on_receivers_connection: frozenset = frozenset(),
        in_order: frozenset = frozenset(),
    ):
        self.seed = seed
        # True: nodes talk over connections (TCP, as DLedger, RocketMQ's HA and its
        # remoting do), which die with either end. A message reaches only the incarnation
        # it was sent to (nothing sent to a down node arrives; a reply to a request of a
        # node's earlier life never reaches its next one), and what a node sent before it
        # crashed still arrives while it is down (it was on the wire), not once it lives
        # again (the peer's answer would go to the dead connection). Every message this
        # drops could have been lost anyway, so no behaviour is added. False: datagrams,
        # which outlive a restart (PySyncObj over UDP; a node that models its own
        # connections, as pysyncobj:tcp does).
        self.connections = connections
        # payload types that travel on a connection the receiver opened (a master's answer
        # and batches on the HA connection its slave's handshake opened): sent to the
        # receiver's life the sender last heard from, and lost if that life is gone: the
        # sender writes to the dead connection, and cannot open one itself (needs ``connections``)
        self.on_receivers_connection = frozenset(on_receivers_connection)
        # (node, peer) -> the peer's life the node last heard from, in the node's own life
        self.heard: dict[tuple[str, str], int] = {}
        # payload types that travel as a byte stream does (RocketMQ's HA connection: a
        # slave's reports): each arrives once, and after the one sent before it on the same
        # link; the network's duplication and reordering leave them alone (a loss does not)
        self.in_order = frozenset(in_order)
        self._stream_tail: dict[tuple[str, str], int] = {}  # (src, dst) -> the last arrival scheduled
        self.node_ids = tuple(node_ids)
        self.factory = factory
        self.net = net
        self.manual = manual
        self.record_trace = record_trace
        self.observers = list(observers)
        self.now = 0
        # time never passes this (``halt``): a run that must stop does, mid-step
        self.halt_at = HALT_NEVER
        self._trace: list[tuple] = []  # TraceEvent fields, made into records when read (``trace``)
        self.nodes: dict[str, Node | None] = {n: None for n in self.node_ids}
        self.disk: dict[str, Any] = {n: None for n in self.node_ids}
        self.incarnation: dict[str, int] = {n: 0 for n in self.node_ids}
        self.blocked: set[tuple[str, str]] = set()  # (src, dst) links that lose messages
        self.slow: dict[tuple[str, str], tuple[int, int]] = {}  # (src, dst) links -> extra delay range
        self.in_flight: list[Message] = []  # manual mode only
        self.messages_sent = 0
        self.steps = 0  # node activations (ticks, deliveries, client requests)
        # protocol events: deliveries, and ticks that did something (sent or persisted,
        # or changed the state the node reports through its ``version``); the other
        # ticks are idle wake-ups
        self.deliveries = 0
        self.ticks = 0
        self.timer_firings = 0
        # heap entries: (time, scheduled at, scheduling activation, its k-th schedule, kind, data)
        self._heap: list[tuple] = []
        self._summaries: dict[str, Any] = {}
        self._versions: dict[str, tuple] = {}  # node id -> (node, version) at its last summary
        self._events = 0
        # activations (ids 0, 1, ...): when the event that started each was scheduled, and
        # by which activation (-1 - chain index for a chain's tick); what _tick_before reads
        self._act_sched = array("q")
        self._act_parent = array("q")
        self._act = -1  # the activation running now
        self._k = 0  # how many events it has scheduled so far
        self._chains: list[_Chain] = []
        self._chain_of: dict[str, _Chain | None] = {n: None for n in self.node_ids}
        self._restarts = 0
        # the group's sends left in the current simulated second before its traffic is a flood
        self._sends_second, self._sends_left = 0, MAX_SENDS_PER_SECOND * len(self.node_ids)
        self._net_rng = random.Random(f"{seed}:net")
        boot_rng = random.Random(f"{seed}:boot")
        for i, n in enumerate(self.node_ids):
            at = boot_rng.randint(0, start_spread_ms) if start_spread_ms > 0 else 0
            if boot_at and n in boot_at:
                at = boot_at[n]
            # scheduled before anything else: first at their time, in node order
            heapq.heappush(self._heap, (at, -1, -1, i, _BOOT, (n, 0, (0, -at, i))))

    # ------------------------------------------------------------------ helpers

    def _begin(self, scheduled_at: int, parent: int) -> None:
        """An activation starts: the event that started it was scheduled at ``scheduled_at``
        by activation ``parent`` (-1 - chain index: that chain's tick; script actions: 0)."""
        self._act += 1
        self._act_sched.append(scheduled_at)
        self._act_parent.append(parent)
        self._k = 0

    def _schedule(self, at: int, kind: int, data: Any) -> None:
        heapq.heappush(self._heap, (at, self.now, self._act, self._k, kind, data))
        self._k += 1

    def _tick_before(self, chain: _Chain, t: int, act: int) -> bool:
        """Whether ``chain``'s tick at ``t`` (run or skipped) comes before activation ``act``,
        which ran at ``t``, in the order of a simulator that ticks every 10 ms."""
        parent, scheduled = self._act_parent, self._act_sched
        me = -1 - chain.index
        while True:
            by = parent[act]
            if by < 0:  # act is a tick too (of chain -1 - by)
                return by != me and chain.rank < self._chains[-1 - by].rank
            at = scheduled[act]
            if at != t - TICK_MS:
                return at > t - TICK_MS  # scheduled after the tick's own scheduling: after it
            # both were scheduled at t - 10: compare the tick at t - 10 with ``by``
            t -= TICK_MS
            if t == chain.boot_time:
                return chain.boot_act < by
            if parent[by] == me:
                return False  # sent by that very tick, which schedules the next one last
            act = by

    def _plan_wake(self, chain: _Chain | None) -> None:
        """Put ``chain``'s next tick in the heap: the first grid time not yet passed at or
        after the node's deadline (every grid time for a node without deadlines). None, or
        a chain of an earlier life: the node crashed (an observer may crash it in the
        instant after its step, e.g. a script's crash-after-vote)."""
        if chain is None or self._chain_of[chain.node_id] is not chain:
            return
        now = self.now
        deadline = chain.node.next_deadline() if chain.deadlines else now
        if chain.requested is not None and (deadline is None or chain.requested < deadline):
            deadline = chain.requested
        if deadline is None:
            chain.wake_at = None
            return
        first = chain.boot_time + TICK_MS
        at = max(deadline, now, first)
        at = first + -(-(at - first) // TICK_MS) * TICK_MS
        if at == now:
            act = self._act
            if self._act_parent[act] == -1 - chain.index or self._tick_before(chain, now, act):
                at += TICK_MS  # the tick at ``now`` has run (or was skipped) already
        chain.wake_at = at
        if at not in chain.pending:
            chain.pending.add(at)
            where = chain.boot_act if at - TICK_MS == chain.boot_time else _TickAt(self, chain, at - TICK_MS)
            heapq.heappush(self._heap, (at, at - TICK_MS, where, _AFTER_SENDS, _WAKE, chain))

    def wake_at(self, node_id: str, t: int) -> None:
        """Tick ``node_id`` at its first grid time at or after ``t`` even if it has nothing
        to do then (a monitor that judges the passing of time asks for this)."""
        chain = self._chain_of[node_id]
        if chain is None:
            return
        if chain.requested is None or t < chain.requested:
            chain.requested = t
            self._plan_wake(chain)

    def incarnations(self) -> list[Any]:
        """Every node this run started, a restarted node once per life, in boot order."""
        return [chain.node for chain in self._chains]

    @property
    def trace(self) -> list[TraceEvent]:
        """Every event so far (with ``record_trace``)."""
        return [TraceEvent(*fields) for fields in self._trace]

    def _emit(self, kind: str, node: str | None = None, data: Any = None) -> None:
        self._events += 1
        if self.record_trace:
            self._trace.append((self._events, self.now, kind, node, data))

    def _after(self, node_id: str, incoming: Message | None = None, ready: Ready | None = None) -> None:
        """Bookkeeping after ``node_id`` was activated or crashed."""
        if self.record_trace:
            node = self.nodes[node_id]
            # a node whose ``version`` moves with every change of its summary is asked
            # for a summary only when its version moved
            version = getattr(node, "version", None) if getattr(node, "summary_follows_version", False) else None
            if version is None or self._versions.get(node_id) != (node, version):
                self._versions[node_id] = (node, version)
                summary = node.summary() if node is not None else None
                if summary != self._summaries.get(node_id):
                    self._summaries[node_id] = summary
                    if summary is not None:
                        self._emit("state", node_id, summary)
        for observe in self.observers:
            observe(self, node_id, incoming, ready)

    def note(self, text: str) -> None:
        """Record a free-form marker in the trace (scripts use it for step labels)."""
        self._emit("note", None, text)

    def _draw_for(self, node_id: str, incarnation: int) -> Callable[[int], int]:
        rng = random.Random(f"{self.seed}:node:{node_id}:{incarnation}")

        def draw(bound: int) -> int:
            return rng.randrange(bound) if bound > 0 else 0

        return draw

    def alive(self, node_id: str) -> bool:
        return self.nodes[node_id] is not None

    def _check_node(self, node_id: str) -> None:
        if node_id not in self.nodes:
            raise SimulationError(f"unknown node {node_id!r} (nodes: {', '.join(self.node_ids)})")

    def _flood_check(self, src: str) -> None:
        """The group's send budget ran out: a new simulated second gets a new one, the same
        second is a flood."""
        second = self.now // 1000
        if second == self._sends_second:
            raise MessageFlood(f"the group's nodes sent more than {MAX_SENDS_PER_SECOND:,} messages within simulated "
                               f"second {second} each on average, the last from {src} (traffic that feeds "
                               f"itself: the run could never end)")
        self._sends_second, self._sends_left = second, MAX_SENDS_PER_SECOND * len(self.node_ids) - 1

    def link_up(self, src: str, dst: str) -> bool:
        return (src, dst) not in self.blocked

    # ------------------------------------------------------------------ node I/O

    def _boot(self, node_id: str, inc: int, rank: tuple | None) -> None:
        if inc != self.incarnation[node_id] or self.nodes[node_id] is not None:
            return
        # The node answers messages from now on; its own maintenance starts one tick
        # later (DLedger starts the RPC service before the elector's thread).
        node = self.nodes[node_id] = self.factory(node_id, self.disk[node_id], self.now, self._draw_for(node_id, inc))
        if rank is None:  # a restart: its ticks come after those of every chain running now
            self._restarts += 1
            rank = (1, self._restarts)
        chain = _Chain(len(self._chains), node_id, node, self.now, self._act, rank, self.use_deadlines)
        self._chains.append(chain)
        self._chain_of[node_id] = chain
        self._emit("boot" if inc == 0 else "restart", node_id)
        self._after(node_id)
        self._plan_wake(chain)

    def _handle_ready(self, node_id: str, ready: Ready) -> None:
        if ready.persist is not None:
            self.disk[node_id] = ready.persist
        for m in ready.messages:
            self._send(m)

    def _send(self, m: Message) -> None:
        self._sends_left -= 1  # (one decrement per send: the check itself runs once a budget is spent)
        if self._sends_left < 0:
            self._flood_check(m.src)
        if m.dst not in self.nodes:  # an answer to a client request
            self._emit("reply", m.src, m)
            return
        self.messages_sent += 1
        self._emit("send", m.src, m)
        if not self.link_up(m.src, m.dst):
            self._emit("drop", m.src, m)
            return
        if self.on_receivers_connection and type(m.payload) in self.on_receivers_connection and \
                self.heard.get((m.src, m.dst)) != self.incarnation[m.dst]:
            self._emit("drop", m.src, m)  # its connection died with the life that opened it (or never was)
            return
        if self.manual:
            if self.connections and self.nodes[m.dst] is None and self.incarnation[m.dst]:
                self._emit("drop", m.src, m)  # to a node down after a crash: no connection takes it
                return
            self.in_flight.append(m)
            return
        rng = self._net_rng
        net = self.net
        if net.drop and rng.random() < net.drop:
            self._emit("drop", m.src, m)
            return
        copies = 2 if net.duplicate and rng.random() < net.duplicate else 1
        extra = self.slow.get((m.src, m.dst)) if self.slow else None  # (no lookup on the usual path)
        if self.connections:  # (a node not yet booted takes connections when it boots)
            life = self.incarnation[m.dst]
            sent = (m, self.incarnation.get(m.src, 0), -1 if self.nodes[m.dst] is None and life else life)
        else:
            sent = m
        stream = self.in_order and type(m.payload) in self.in_order
        for copy in range(copies):
            delay = rng.randint(net.min_delay_ms, net.max_delay_ms)
            if extra is not None:  # drawn only while a slowdown is on: other traces are unchanged
                delay += rng.randint(*extra)
            if stream:
                if copy:
                    break  # (its copy's delay was drawn all the same: other messages' draws are unchanged)
                at = max(self.now + delay, self._stream_tail.get((m.src, m.dst), 0))
                self._stream_tail[(m.src, m.dst)] = at
                self._schedule(at, _DELIVER, sent)
                continue
            self._schedule(self.now + delay, _DELIVER, sent)
        if copies == 2 and not stream:
            self._emit("duplicate", m.src, m)

    def _deliver(self, m: Message | tuple[Message, int, int]) -> None:
        """Deliver ``m`` now, in the activation begun for it (with connections: ``m``, and
        the incarnations of its sender and receiver when it was sent)."""
        src_life = None
        if type(m) is tuple:
            m, src_life, dst_life = m
            if self.incarnation[m.dst] != dst_life or (
                    self.incarnation.get(m.src, src_life) != src_life and self.nodes[m.src] is not None):
                self._emit("drop", m.dst, m)  # its connection died with one of its ends
                return
        node = self.nodes.get(m.dst)
        if node is None or not self.link_up(m.src, m.dst):
            self._emit("drop", m.dst, m)
            return
        self.steps += 1
        self.deliveries += 1
        if self.on_receivers_connection:  # (the sender's life that sent it: it may be down now)
            self.heard[(m.dst, m.src)] = self.incarnation.get(m.src, 0) if src_life is None else src_life
        ready = node.step(m, self.now)
        self._emit("deliver", m.dst, m)
        self._handle_ready(m.dst, ready)
        self._after(m.dst, m, ready)
        self._plan_wake(self._chain_of[m.dst])

    def _wake(self, chain: _Chain, at: int) -> None:
        chain.pending.discard(at)
        if chain.wake_at != at or self._chain_of[chain.node_id] is not chain:
            return  # superseded by a later deadline, or the node crashed
        self._begin(at - TICK_MS, -1 - chain.index)
        if chain.requested is not None and chain.requested <= at:
            chain.requested = None
        node = chain.node
        self.steps += 1
        self.ticks += 1
        version = getattr(node, "version", None)
        ready = node.tick(at)
        if ready.messages or ready.persist is not None or getattr(node, "version", None) != version:
            self.timer_firings += 1
        self._handle_ready(chain.node_id, ready)
        self._after(chain.node_id, None, ready)
        self._plan_wake(chain)

    # ------------------------------------------------------------------ time

    def halt(self, at: int) -> None:
        """Stop time at ``at`` (or now, if later): a ``run_until`` that would pass it
        handles what is due until then and raises ``Halted``."""
        self.halt_at = min(self.halt_at, max(at, self.now))

    def run_until(self, t: int) -> None:
        heap = self._heap
        while heap and heap[0][0] <= t:
            if heap[0][0] > self.halt_at:
                break
            at, scheduled_at, by, _, kind, data = heapq.heappop(heap)
            self.now = at
            if kind == _DELIVER:
                self._begin(scheduled_at, by)
                self._deliver(data)
            elif kind == _WAKE:
                self._wake(data, at)
            else:
                self._begin(scheduled_at, 0)
                self._boot(*data)
        if t > self.halt_at:
            self.now = max(self.now, self.halt_at)
            raise Halted(self.halt_at)
        self.now = max(self.now, t)

    def run_for(self, ms: int) -> None:
        self.run_until(self.now + ms)

    # ------------------------------------------------------------------ faults

    def crash(self, node_id: str) -> None:
        self._check_node(node_id)
        node = self.nodes[node_id]
        if node is None:
            return
        # A node that says what survives a crash (an implementation under test) is
        # taken at its word; otherwise its last Ready.persist is what survives.
        crash = getattr(node, "crash", None)
        if callable(crash):
            self.disk[node_id] = crash()
        self.nodes[node_id] = None
        self._chain_of[node_id] = None
        self.incarnation[node_id] += 1
        if self.heard:  # its next life has heard from nobody
            self.heard = {k: v for k, v in self.heard.items() if k[0] != node_id}
        self._emit("crash", node_id)
        if self.connections:  # (manual mode) what was on its way to it is lost with its connections
            self._drop_in_flight(lambda m: m.dst == node_id)
        self._after(node_id)

    def _drop_in_flight(self, lost: Callable[[Message], bool]) -> None:
        for m in [m for m in self.in_flight if lost(m)]:
            self.in_flight.remove(m)
            self._emit("drop", m.dst, m)

    def restart(self, node_id: str) -> None:
        self._check_node(node_id)
        if self.nodes[node_id] is not None:
            return
        self._begin(self.now, 0)  # a script action
        if self.connections:  # (manual mode) what its earlier life sent stops arriving once it lives again
            self._drop_in_flight(lambda m: m.src == node_id)
        self._schedule(self.now, _BOOT, (node_id, self.incarnation[node_id], None))
        self.run_until(self.now)  # boot now

    def partition(self, groups: list[list[str]]) -> None:
        """Cut the nodes into ``groups`` (unlisted nodes form one more group)."""
        listed = {n for g in groups for n in g}
        for n in listed:
            self._check_node(n)
        rest = [n for n in self.node_ids if n not in listed]
        all_groups = [list(g) for g in groups] + ([rest] if rest else [])
        side = {n: i for i, g in enumerate(all_groups) for n in g}
        self.blocked = {(a, b) for a in self.node_ids for b in self.node_ids if side[a] != side[b]}
        self._emit("partition", None, [sorted(g) for g in all_groups])

    def block(self, src: str, dst: str) -> None:
        """Lose every message from ``src`` to ``dst`` (an asymmetric partition)."""
        self._check_node(src)
        self._check_node(dst)
        self.blocked.add((src, dst))
        self._emit("partition", None, {"block": [src, dst]})

    def heal(self) -> None:
        self.blocked = set()
        self._emit("heal")

    def slow_down(self, src: str, dst: str, delay_ms: tuple[int, int] | None) -> None:
        """Delay every message from ``src`` to ``dst`` by a further ``delay_ms`` range (None:
        back to normal), so messages on that link overtake each other: a congested
        route, a sender's thread pool running late."""
        self._check_node(src)
        self._check_node(dst)
        if delay_ms is None:
            self.slow.pop((src, dst), None)
        else:
            self.slow[(src, dst)] = delay_ms
        self._emit("slow", None, {"link": [src, dst], "extra_delay_ms": None if delay_ms is None else list(delay_ms)})

    def set_net(self, net: NetConfig) -> None:
        self.net = net
        self._emit("net", None, attrs.asdict(net))

    def client(self, node_id: str, payload: Any, src: str = "client") -> None:
        """A client request arrives at ``node_id`` now (lost if the node is down); with
        ``src="network"``, an event of the node's network (a ``LinkFault``)."""
        self._check_node(node_id)
        self._emit(src, node_id, payload_to_dict(payload))
        node = self.nodes[node_id]
        if node is None:
            return
        self._begin(self.now, 0)  # a script action
        self.steps += 1
        message = Message(src, node_id, payload)
        ready = node.step(message, self.now)
        self._handle_ready(node_id, ready)
        self._after(node_id, message, ready)
        self._plan_wake(self._chain_of[node_id])

    # ------------------------------------------------------------------ manual network

    def _find(self, src: str, dst: str, kind: str | None) -> int:
        for i, m in enumerate(self.in_flight):
            if m.src == src and m.dst == dst and (kind is None or m.kind == kind):
                return i
        what = f"{kind} " if kind else ""
        raise SimulationError(f"no {what}message in flight from {src} to {dst}")

    def deliver(self, src: str, dst: str, kind: str | None = None) -> None:
        m = self.in_flight.pop(self._find(src, dst, kind))
        self._begin(self.now, 0)  # a script action
        self._deliver(m)

    def drop(self, src: str, dst: str, kind: str | None = None) -> None:
        m = self.in_flight.pop(self._find(src, dst, kind))
        self._emit("drop", m.dst, m)

    def duplicate(self, src: str, dst: str, kind: str | None = None) -> None:
        m = self.in_flight[self._find(src, dst, kind)]
        self.in_flight.append(m)
        self._emit("duplicate", m.src, m)

    def deliver_all(self) -> int:
        """Deliver everything in flight, including what the deliveries send (bounded)."""
        delivered = 0
        while self.in_flight and delivered < 10_000:
            self._begin(self.now, 0)  # a script action
            self._deliver(self.in_flight.pop(0))
            delivered += 1
        return delivered
