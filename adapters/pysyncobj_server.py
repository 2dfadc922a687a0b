"""PySyncObj (a third-party Raft in Python) behind the adapter protocol, at node level.

PySyncObj's own Raft core runs unmodified; only its surroundings are replaced, so the
simulator decides everything and one seed reproduces a run:

* **transport**: a ``pysyncobj.transport.Transport`` of ours. ``send`` collects the
  messages of the current activation; a delivery calls PySyncObj's own
  message-received callback. Every peer is reported connected once (PySyncObj only
  campaigns and replicates to connected peers); loss and partitions are the
  simulator's.
* **clock**: ``pysyncobj.syncobj.monotonicTime`` reads the simulated time of the
  activation (``now`` in seconds) instead of the machine's.
* **randomness**: PySyncObj draws its election timeouts from the global ``random``
  module; during an activation ``pysyncobj.syncobj.random`` is a ``random.Random``
  seeded from the node's injected draw (the ``seed`` of ``node.create``).
* **disk**: PySyncObj's own ``FileJournal`` in a private temporary directory.
  ``node.crash`` is a process crash: the journal file (written through mmap) and the
  ``.meta`` file (term and vote, written on every change; commit index once a
  second) are what survive, returned as the durable state; a restart writes them back
  and PySyncObj reads them as it would after a real restart.
* **ticks**: ``_onTick(0)`` every simulator tick (10 ms; PySyncObj's own loop polls at
  most every 50 ms), with ``autoTick`` off. Log compaction is off (it forks a process).

Links (``links``): PySyncObj ships a TCP transport, whose connections never reorder
or duplicate. ``fifo`` (the ``pysyncobj`` adapter) models exactly that: every message
carries a per-link sequence number and a receiver discards anything not newer than
what it already took from that sender (a lost message is a dropped connection, never
a reordering). ``datagram`` (``pysyncobj:datagram``) hands every delivery to
PySyncObj, as a ``transport=`` of a user's own over UDP or a message bus would.

Journal (``journal``): ``file`` (the default of the adapter) is PySyncObj's
``FileJournal`` as above. ``memory`` (``pysyncobj:memory``) is PySyncObj's own default
when no ``journalFile`` is configured: a ``MemoryJournal``, so nothing survives a
crash and a restarted node starts from term 0 with an empty log.

The node kind is ``raft``: messages are PySyncObj's own dictionaries as tagged JSON
(``{"$b": base64}`` for bytes, ``{"$t": [...]}`` for tuples), opaque to rmqha; the
observation is ``spec.raft.records.RaftView``; a leader's view carries PySyncObj's own
``__raftNextIndex`` / ``__raftMatchIndex`` per follower as its progress (PySyncObj's log
starts at 1: a match index of 0 means nothing known).
"""
from __future__ import annotations

import base64
import logging
import random
import shutil
import tempfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pysyncobj import node as tcp_node
from pysyncobj import pickle as pysyncobj_pickle
from pysyncobj import syncobj, tcp_connection, tcp_server
from pysyncobj import transport as pysyncobj_transport
from pysyncobj.version import VERSION

from adapters import codec, simulated_tcp
from adapters.protocol import BAD_REQUEST, INTERNAL, PROTOCOL, UNSUPPORTED, error, ok
from spec.raft.records import ClientCommand, FollowerProgress, LinkFault, RaftEntry, RaftRole, RaftView

# PySyncObj logs what it notices (for example "truncating already-applied log entries")
# at CRITICAL; without a handler of the user's, Python would print it to stderr in the
# middle of a test run. The invariants report what matters; a user's logging setup
# still receives these records.
logging.getLogger("pysyncobj").addHandler(logging.NullHandler())

LINKS = ("fifo", "datagram", "tcp")
TCP_PORT = 4321
HOST_UPTIME_S = 1000.0
JOURNALS = ("file", "memory")
# PySyncObj's defaults (SyncObjConf): election timeout 0.4..1.4 s, a leader steps down
# after 30 s (leaderFallbackTimeout) without answers from a majority.
LIVENESS_BOUND_MS = 20_000
# Over its TCP transport a dead connection may hold until keepalive ends it (tcp_keepalive
# (16, 3, 5): 16 s idle + 5 probes 3 s apart), then a reconnect waits up to
# connectionRetryTime (5 s): a connection silenced just before the heal costs 36 s more.
TCP_LIVENESS_BOUND_MS = LIVENESS_BOUND_MS + (16 + 5 * 3 + 5) * 1000
_ROLES = {0: RaftRole.FOLLOWER, 1: RaftRole.CANDIDATE, 2: RaftRole.LEADER}


# ------------------------------------------------------------------ tagged JSON


def to_json(x: Any) -> Any:
    if isinstance(x, bytes):
        return {"$b": base64.b64encode(x).decode()}
    if isinstance(x, tuple):
        return {"$t": [to_json(v) for v in x]}
    if isinstance(x, list):
        return [to_json(v) for v in x]
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            raise TypeError(f"message keys must be strings: {sorted(map(repr, x))}")
        return {k: to_json(v) for k, v in x.items()}
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f"cannot carry a {type(x).__name__} in a message")


def from_json(x: Any) -> Any:
    if isinstance(x, list):
        return [from_json(v) for v in x]
    if isinstance(x, dict):
        if set(x) == {"$b"}:
            return base64.b64decode(x["$b"])
        if set(x) == {"$t"}:
            return tuple(from_json(v) for v in x["$t"])
        return {k: from_json(v) for k, v in x.items()}
    return x


# ------------------------------------------------------------------ one node


class SimNode(syncobj.Node):
    """A peer whose hash does not depend on PYTHONHASHSEED.

    PySyncObj keeps its peers in sets and iterates them to send (votes, appends): with
    ``str`` hashes, randomised per process, the order of sends (and so the whole run)
    would differ from one process to the next. One seed must mean one run.
    """

    def __hash__(self):
        return zlib.crc32(self.id.encode())



class SimTCPNode(tcp_node.TCPNode):
    """A TCP peer (id = address) whose hash does not depend on PYTHONHASHSEED (see SimNode)."""

    def __hash__(self):
        return zlib.crc32(self.id.encode())


class _Node:
    """One PySyncObj instance and everything that stands in for its environment."""

    def __init__(self, server: "PySyncObjServer", handle: str, node_id: str, peers: list[str], seed: int,
                 durable: Any, now: int):
        self.server = server
        self.node_id = node_id
        self.handle = handle  # names this incarnation's end of every link
        self.now_s = now / 1000.0
        self.rng = random.Random(seed)
        self.outbox: list[tuple[str, dict]] = []
        self.sent: dict[str, int] = {}  # per destination: sequence number of the last message
        self.taken: dict[str, tuple[int, int]] = {}  # per source: (incarnation, seq) of the newest message taken
        self.dir = Path(tempfile.mkdtemp(prefix=f"rmqha-pysyncobj-{node_id}-"))
        journal = self.dir / "journal"
        if durable is not None and server.journal == "file":
            _restore(durable, journal)
        self.id_of: dict[str, str] = {}  # PySyncObj's node ids -> rmqha's (they differ over TCP)
        # PySyncObj's clock is the simulated time plus how long the host has been up: its
        # transport starts its "last bind/connect attempt" bookkeeping at 0, which on a
        # clock at 0 would read as "just tried" and never bind
        self.uptime_s = HOST_UPTIME_S if server.links == "tcp" else 0.0
        self.stack: simulated_tcp.HostStack | None = None
        conf = syncobj.SyncObjConf(autoTick=False, journalFile=str(journal) if server.journal == "file" else None,
                                   logCompactionMinEntries=2**62,
                                   logCompactionMinTime=2**62, dynamicMembershipChange=False)
        if server.links == "tcp":
            self._start_over_tcp(peers, conf, now)
        else:
            self._start_over_messages(peers, conf)
        self.bodies: dict[bytes, str] = {}
        self.view = self._view()

    def _start_over_tcp(self, peers: list[str], conf: Any, now: int) -> None:
        """PySyncObj's own TCPTransport, TcpServer and TcpConnection over simulated sockets:
        peer i listens at 10.0.0.(i+1):4321, its node id there is that address."""
        addresses = {p: (f"10.0.0.{i + 1}", TCP_PORT) for i, p in enumerate(sorted(peers))}
        self.id_of = {f"{ip}:{port}": p for p, (ip, port) in addresses.items()}
        self.stack = simulated_tcp.HostStack(self.node_id, addresses, self.handle)
        self.stack.now = now
        me = SimTCPNode("%s:%d" % addresses[self.node_id])
        others = [SimTCPNode("%s:%d" % addresses[p]) for p in sorted(peers) if p != self.node_id]
        with self.driving():
            self.obj = Replicated(me, others, conf)

    def _start_over_messages(self, peers: list[str], conf: Any) -> None:
        node = self

        class SimTransport(pysyncobj_transport.Transport):
            ready = True

            def tryGetReady(self):
                pass

            def send(self, peer, message):
                node.outbox.append((peer.id, message))
                return True

        self.transport = SimTransport(None, None, None)
        node_id = self.node_id
        with self.driving():
            self.obj = Replicated(SimNode(node_id), [SimNode(p) for p in peers if p != node_id], conf,
                                   transport=self.transport)
            for p in peers:
                if p != node_id:
                    self.transport._onNodeConnected(SimNode(p))

    @contextmanager
    def driving(self):
        """PySyncObj's clock and random source are this node's for the duration (over TCP,
        its sockets and poller too: its connection code reads the clock of its own)."""
        clock = lambda: self.now_s + self.uptime_s  # noqa: E731
        saved = syncobj.monotonicTime, syncobj.random
        syncobj.monotonicTime, syncobj.random = clock, self.rng
        tcp = self.stack
        if tcp is not None:
            saved_tcp = (syncobj.createPoller, tcp_connection.socket, tcp_server.socket, tcp_connection.monotonicTime,
                         pysyncobj_transport.monotonicTime)
            module = simulated_tcp.SocketModule(tcp)
            syncobj.createPoller = lambda kind: simulated_tcp.SimPoller(tcp)
            tcp_connection.socket = tcp_server.socket = module
            tcp_connection.monotonicTime = pysyncobj_transport.monotonicTime = clock
        try:
            yield
        finally:
            syncobj.monotonicTime, syncobj.random = saved
            if tcp is not None:
                (syncobj.createPoller, tcp_connection.socket, tcp_server.socket, tcp_connection.monotonicTime,
                 pysyncobj_transport.monotonicTime) = saved_tcp

    def activate(self, now: int, act) -> dict:
        self.now_s = now / 1000.0
        if self.stack is not None:
            self.stack.now = now
        with self.driving():
            act()
        messages = []
        if self.stack is not None:  # segments, as they are (each names its kind in "type")
            messages = [{"src": self.node_id, "dst": dst, "payload": segment} for dst, segment in self.stack.outbox]
            self.stack.outbox.clear()
        for dst, message in self.outbox:
            seq = self.sent[dst] = self.sent.get(dst, 0) + 1
            messages.append({"src": self.node_id, "dst": dst,
                             "payload": {"type": message.get("type"), "link": [self.handle, seq],
                                         "message": to_json(message)}})
        self.outbox.clear()
        view = self._view()
        changed, self.view = view != self.view, view
        return {"messages": messages, "persist": None, "changed": changed}

    def tick(self) -> None:
        if self.stack is not None:
            self.stack.tick(self.stack.now)  # retransmissions and TCP timeouts due
        self.obj._onTick(0.0)

    def receive(self, src: str, payload: Any) -> None:
        if src == "client":
            command = codec.decode(payload, ClientCommand, codec.registry("raft"), "message.payload")
            self.obj.append(command.body)  # queued; PySyncObj forwards it to its leader or appends it
            return
        if self.stack is not None:
            if src == "network":
                # the kernel fails the connections now; the event loop meets that at its next
                # tick, whose Raft work (sends included) comes before its poll
                fault = codec.decode(payload, LinkFault, codec.registry("raft"), "message.payload")
                self.stack.fault(fault.peer, fault.kind)
                return
            self.stack.receive(src, payload)
            self.obj._poller.poll(0.0)  # the event loop wakes on the segment
            return
        if src == "network":
            raise _NotApplicable(f"link faults need connections of their own: use pysyncobj:tcp, not {self.server.links}")
        handle, seq = payload["link"]
        if self.server.links == "fifo":
            # a later incarnation of the sender opened new connections: its messages come after
            link = (self.server.incarnation.get(handle, -1), seq)
            if link <= self.taken.get(src, (-1, -1)):
                return  # older than what this link already delivered: a TCP stream never shows it
            self.taken[src] = link
        self.transport._onMessageReceived(SimNode(src), from_json(payload["message"]))

    def crash(self) -> dict | None:
        """What a killed process leaves on disk (the page cache keeps mmap writes)."""
        if self.server.journal == "memory":
            self.close()
            return None
        durable = {name: base64.b64encode(path.read_bytes()).decode() if path.exists() else None
                   for name, path in (("journal", self.dir / "journal"), ("meta", self.dir / "journal.meta"))}
        self.close()
        return durable

    def close(self) -> None:
        try:
            self.obj._SyncObj__raftLog._destroy()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _body(self, command: bytes) -> str:
        body = self.bodies.get(command)
        if body is None:
            body = self.bodies[command] = _render(command)
        return body

    def _view(self) -> RaftView:
        o = self.obj
        rmqha_id = self.id_of.get
        leader = o._SyncObj__raftLeader
        entries = tuple(RaftEntry(idx, term, self._body(cmd)) for cmd, idx, term in o._SyncObj__raftLog[:])
        role = _ROLES[o._SyncObj__raftState]
        progress = None
        if role is RaftRole.LEADER:  # PySyncObj's own nextIndex/matchIndex per follower
            next_index, match_index = o._SyncObj__raftNextIndex, o._SyncObj__raftMatchIndex
            progress = tuple(sorted((FollowerProgress(rmqha_id(n.id, n.id), next_index[n], match_index[n])
                                     for n in o._SyncObj__otherNodes if n in match_index), key=lambda p: p.peer))
        vote = o._SyncObj__votedForNodeId
        return RaftView(self.node_id, role, o._SyncObj__raftCurrentTerm,
                        None if vote is None else rmqha_id(vote, vote),
                        rmqha_id(leader.id, leader.id) if leader is not None else None,
                        o._SyncObj__raftCommitIndex, entries, progress)


def _render(command: bytes) -> str:
    """A readable body for a log entry: the client's string, or what PySyncObj logged."""
    kind = command[0] if command else None
    if kind == syncobj._COMMAND_TYPE.REGULAR:
        call = pysyncobj_pickle.loads(command[1:])
        if isinstance(call, tuple) and len(call) >= 2 and call[1]:
            return str(call[1][0])
        return repr(call)
    return {syncobj._COMMAND_TYPE.NO_OP: "noop", syncobj._COMMAND_TYPE.MEMBERSHIP: "membership",
            syncobj._COMMAND_TYPE.VERSION: "version"}.get(kind, "?")


def _restore(durable: Any, journal: Path) -> None:
    if not isinstance(durable, dict):
        raise codec.CodecError("durable", "expected the object node.crash returned")
    for name, path in (("journal", journal), ("meta", journal.with_name("journal.meta"))):
        if durable.get(name) is not None:
            path.write_bytes(base64.b64decode(durable[name]))


class Replicated(syncobj.SyncObj):
    """A SyncObj whose state machine is the list of applied client bodies."""

    def __init__(self, *args, **kwargs):
        self.applied: list[str] = []
        super().__init__(*args, **kwargs)

    @syncobj.replicated
    def append(self, body):
        self.applied.append(body)


# ------------------------------------------------------------------ the server


class PySyncObjServer:
    """Answers the adapter protocol with PySyncObj nodes (node kind ``raft``)."""

    def __init__(self, links: str = "fifo", journal: str = "file"):
        if links not in LINKS or journal not in JOURNALS:
            raise ValueError(f"links must be one of {', '.join(LINKS)} and journal one of {', '.join(JOURNALS)}")
        self.links = links
        self.journal = journal
        self.nodes: dict[str, _Node] = {}
        self.incarnation: dict[str, int] = {}  # handle -> creation order (orders a sender's incarnations)
        self._created = 0

    def handle(self, req: dict) -> dict:
        rid = req.get("id") if isinstance(req, dict) else None
        try:
            op = req["op"]
            handler = getattr(self, "_op_" + str(op).replace(".", "_"), None)
            if handler is None:
                return error(rid, UNSUPPORTED, f"operation {op!r} is not supported")
            return ok(rid, handler(req.get("args") or {}))
        except _NotApplicable as exc:
            return error(rid, UNSUPPORTED, str(exc))
        except (KeyError, TypeError, ValueError, codec.CodecError) as exc:
            return error(rid, BAD_REQUEST, f"malformed request: {exc!r}")
        except Exception as exc:  # noqa: BLE001 - PySyncObj itself failed: reported, the driver decides
            return error(rid, INTERNAL, f"{type(exc).__name__}: {exc}")

    def _op_hello(self, args: dict) -> dict:
        variant = "".join(f"+{x}" for x in (self.links, self.journal) if x not in ("fifo", "file"))
        hello = {"protocol": PROTOCOL, "implementation": "pysyncobj" + variant,
                 "version": VERSION, "profiles": {}, "operations": [], "nodes": ["raft"],
                 "liveness_bound_ms": {"raft": TCP_LIVENESS_BOUND_MS if self.links == "tcp" else LIVENESS_BOUND_MS}}
        if self.links == "tcp":  # its nodes hold connections of their own: they take LinkFaults
            hello["link_faults"] = ["raft"]
        return hello

    def _op_bye(self, args: dict) -> dict:
        self.close()
        return {}

    def close(self) -> None:
        """Close every node (each removes its journal directory); the server's end too
        (``stdio_server.serve``), so a client that leaves without ``bye`` leaves none behind."""
        nodes, self.nodes = list(self.nodes.values()), {}
        for node in nodes:
            node.close()

    def _op_call(self, args: dict) -> Any:
        raise _NotApplicable(f"pysyncobj has no handler-level operations (asked for {args.get('operation')!r})")

    def _op_node_create(self, args: dict) -> dict:
        if args["kind"] != "raft":
            raise _NotApplicable(f"node kind {args['kind']!r} is not supported (pysyncobj runs raft nodes)")
        handle = args["handle"]
        if handle in self.nodes:
            self.nodes.pop(handle).close()
        self._created += 1
        self.incarnation[handle] = self._created
        self.nodes[handle] = _Node(self, handle, args["node_id"], list(args["peers"]), int(args["seed"]),
                                   args.get("durable"), int(args["now"]))
        return {}

    def _op_node_tick(self, args: dict) -> dict:
        node = self.nodes[args["handle"]]
        return node.activate(args["now"], node.tick)

    def _op_node_step(self, args: dict) -> dict:
        node = self.nodes[args["handle"]]
        m = args["message"]
        return node.activate(args["now"], lambda: node.receive(m["src"], m["payload"]))

    def _op_node_crash(self, args: dict) -> dict:
        return {"durable": self.nodes.pop(args["handle"]).crash()}

    def _op_node_observe(self, args: dict) -> dict:
        view = self.nodes[args["handle"]].view
        return {"view": codec.encode(view),
                "summary": {"role": view.role.value, "term": view.curr_term, "vote": view.voted_for,
                            "leader": view.leader_id, "last": view.last_index, "commit": view.committed_index}}


class _NotApplicable(Exception):
    pass
