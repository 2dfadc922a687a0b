"""Simulated TCP under an implementation's own connection code, for the deterministic simulator.

PySyncObj's TCP transport (``TCPTransport``, ``TcpServer``, ``TcpConnection``) runs
unmodified over a ``HostStack``: sockets and a poller that stand in for the ``socket``
module and ``select.poll`` of one host. Whatever a socket sends leaves as *segments*,
which the node hands to rmqha as its messages, so the simulator carries them (its delays,
losses, partitions and crashes apply, and one seed replays a run); a delivered segment
enters the destination's stack, and the next poll reports the socket events it caused to
the code that subscribed to them. Nothing here reads a clock or a real socket: time is
the activation's ``now``.

The model is a small TCP, enough for connection handling to meet what a real network
does to it:

* ``connect`` is non-blocking (EINPROGRESS); the SYN is retransmitted after 1, 2, 4 ...
  seconds (Linux's ``tcp_syn_retries`` = 6: ETIMEDOUT after 127 s); a SYN that finds no
  listener is answered RST (ECONNREFUSED). The accepting end is established on the SYN.
* data is a byte stream: each ``send`` is one segment numbered by its first byte; the
  receiver delivers in order, buffers what comes early, drops duplicates and acknowledges
  what it holds; the sender retransmits what is unacknowledged (RTO 200 ms, doubling up
  to 120 s, ETIMEDOUT after 15 retransmissions, as ``tcp_retries2``). So nothing is lost,
  duplicated or reordered while a connection lives; a partition stalls it.
* ``close`` sends FIN in the stream (the peer reads EOF); a segment of a connection the
  host does not know (closed, or the host restarted) is answered RST (ECONNRESET). A crash
  takes the host's connections with it, without a word.
* keepalive as the socket options set it (PySyncObj: 16 s idle, then a probe every 3 s,
  ETIMEDOUT after 5 unanswered): an idle connection whose peer is gone ends.

Faults, delivered to a node as ``LinkFault{peer, kind}`` from ``"network"``:

* ``reset``: the node's connections with ``peer`` are aborted: its own end fails at once
  (ECONNRESET) and an RST travels to the peer (lost with the network; then the peer learns
  when it next sends).
* ``half-open``: the node's connections with ``peer`` go silent in both directions while
  both ends still hold them established (a middlebox that lost their state, or a peer
  gone without a word): no error, no RST, segments vanish. Only the implementation's own
  dead-connection detection (PySyncObj: ``connectionTimeout``, checked when it sends or
  polls an event) or keepalive ends them; new connections are not affected.
"""
from __future__ import annotations

import base64
import errno
import socket as _socket
from typing import Any, Callable

from spec.raft.records import LINK_FAULTS

SYN, SYNACK, DATA, ACK, FIN, RST, PROBE = "syn", "synack", "data", "ack", "fin", "rst", "probe"
SEGMENT_KINDS = (SYN, SYNACK, DATA, ACK, FIN, RST, PROBE)

SYN_RTO_MS = 1000
SYN_RETRIES = 6  # Linux tcp_syn_retries: the 7th wait ends in ETIMEDOUT (127 s)
DATA_RTO_MS = 200  # Linux TCP_RTO_MIN
MAX_RTO_MS = 120_000
DATA_RETRIES = 15  # Linux tcp_retries2
# SO_KEEPALIVE without TCP_KEEPIDLE/INTVL/CNT: Linux's defaults (s, s, probes)
KEEPALIVE_DEFAULTS = (7200, 75, 9)

# poll events, as pysyncobj.poller.POLL_EVENT_TYPE
READ, WRITE, ERROR = 1, 2, 4


def _fail(code: int) -> OSError:
    return OSError(code, errno.errorcode.get(code, str(code)))


# TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT (Linux), in SimSocket.keepalive's order
_KEEPALIVE_OPTIONS = tuple(getattr(_socket, name, -1 - i) for i, name in
                           enumerate(("TCP_KEEPIDLE", "TCP_KEEPINTVL", "TCP_KEEPCNT")))


class SimSocket:
    """One socket of a ``HostStack``, with the calls PySyncObj makes on a real one."""

    def __init__(self, stack: "HostStack", *args: Any):
        self.stack = stack
        self.fd = stack.new_fd()
        self.state = "new"  # new, listen, syn_sent, established, closed
        self.error = 0  # what SO_ERROR reports (and recv/send raise) once set
        self.peer: str | None = None
        self.conn: str | None = None
        self.accept_queue: list[SimSocket] = []
        self.inbox = bytearray()  # in order, not yet read
        self.eof = False  # the peer's FIN was read into the stream
        self.rcv_next = 0  # next byte expected
        self.early: dict[int, tuple[str, bytes]] = {}  # seq -> (kind, data) that came before their turn
        self.snd_next = 0
        self.unacked: list[tuple[int, str, bytes]] = []  # (seq, kind, data) sent, not acknowledged
        self.retransmit_at: int | None = None
        self.rto = DATA_RTO_MS
        self.retries = 0
        self.keepalive: list[int] | None = None  # [idle s, interval s, probes] once SO_KEEPALIVE is on
        self.heard_at = stack.now  # when a segment of the connection last arrived
        self.probes = 0  # keepalive probes unanswered

    # ------------------------------------------------------------------ the socket API

    def setsockopt(self, level: int, option: int, value: Any = None, *args: Any) -> None:
        """Keepalive (on, idle, interval, count) is modelled; buffer sizes and Nagle are not."""
        if option == _socket.SO_KEEPALIVE and level == _socket.SOL_SOCKET:
            self.keepalive = list(KEEPALIVE_DEFAULTS) if value else None
        elif self.keepalive is not None and level == _socket.IPPROTO_TCP and option in _KEEPALIVE_OPTIONS:
            self.keepalive[_KEEPALIVE_OPTIONS.index(option)] = int(value)

    def getsockopt(self, level: int, option: int, *args: Any) -> int:
        return self.error if option == _socket.SO_ERROR else 0

    def setblocking(self, flag: Any) -> None:
        pass  # always non-blocking

    def fileno(self) -> int:
        return self.fd

    def bind(self, address: tuple) -> None:
        self.stack.bind(self)

    def listen(self, backlog: int = 0) -> None:
        self.state = "listen"

    def accept(self) -> tuple["SimSocket", tuple]:
        if not self.accept_queue:
            raise _fail(errno.EAGAIN)
        s = self.accept_queue.pop(0)
        return s, self.stack.address_of(s.peer)

    def connect(self, address: tuple) -> None:
        self.peer = self.stack.node_at(address)
        self.conn = self.stack.new_conn()
        self.state = "syn_sent"
        self.stack.register(self)
        self.retries = 0
        self._syn()
        raise _fail(errno.EINPROGRESS)

    def send(self, data: bytes) -> int:
        if self.error:
            raise _fail(self.error)
        if self.state != "established":
            raise _fail(errno.EAGAIN if self.state == "syn_sent" else errno.EPIPE)
        self._queue(DATA, bytes(data))
        return len(data)

    def recv(self, size: int) -> bytes:
        if self.inbox:
            out = bytes(self.inbox[:size])
            del self.inbox[:size]
            return out
        if self.error:
            raise _fail(self.error)
        if self.eof:
            return b""
        raise _fail(errno.EAGAIN)

    def close(self) -> None:
        self.stack.close(self)

    # ------------------------------------------------------------------ readiness

    def events(self) -> int:
        if self.error:
            return READ | WRITE | ERROR
        if self.state == "listen":
            return READ if self.accept_queue else 0
        ready = READ if (self.inbox or self.eof) else 0
        return ready | WRITE if self.state == "established" else ready

    # ------------------------------------------------------------------ the protocol

    def _syn(self) -> None:
        self.stack.emit(self, SYN)
        self.retransmit_at = self.stack.now + SYN_RTO_MS * 2 ** self.retries

    def _queue(self, kind: str, data: bytes) -> None:
        seq = self.snd_next
        self.snd_next += max(len(data), 1 if kind == FIN else 0)
        self.unacked.append((seq, kind, data))
        self.stack.emit(self, kind, seq=seq, data=data)
        if self.retransmit_at is None:
            self.retransmit_at = self.stack.now + self.rto

    def fail(self, code: int) -> None:
        """The connection is over with ``code`` (what recv/send/SO_ERROR report now)."""
        if not self.error:
            self.error = code
        self.unacked.clear()
        self.retransmit_at = None
        self.stack.forget(self)

    def acked(self, ack: int) -> None:
        before = len(self.unacked)
        self.unacked = [u for u in self.unacked if u[0] + max(len(u[2]), 1 if u[1] == FIN else 0) > ack]
        if len(self.unacked) < before:  # progress: the backoff starts over
            self.rto, self.retries = DATA_RTO_MS, 0
            self.retransmit_at = None if not self.unacked else self.stack.now + self.rto
        if not self.unacked and self.state == "closed":
            self.stack.forget(self)  # our FIN is acknowledged: nothing left of the connection

    def arrive(self, seq: int, kind: str, data: bytes) -> None:
        if seq >= self.rcv_next:
            self.early.setdefault(seq, (kind, data))
        while self.rcv_next in self.early:
            kind, data = self.early.pop(self.rcv_next)
            if kind == FIN:
                self.eof = True
                self.rcv_next += 1
            else:
                self.inbox += data
                self.rcv_next += len(data)
        self.stack.emit(self, ACK, ack=self.rcv_next)

    def heard(self, now: int) -> None:
        self.heard_at, self.probes = now, 0

    def timer(self, now: int) -> None:
        if self.keepalive is not None and self.state == "established" and not self.unacked and not self.error:
            idle, interval, count = self.keepalive
            if now >= self.heard_at + 1000 * (idle + self.probes * interval):
                if self.probes >= count:  # nobody answered: the connection is dead
                    self.fail(errno.ETIMEDOUT)
                    return
                self.probes += 1
                self.stack.emit(self, PROBE)
        if self.retransmit_at is None or now < self.retransmit_at:
            return
        if self.state == "syn_sent":
            if self.retries >= SYN_RETRIES:
                self.fail(errno.ETIMEDOUT)
                return
            self.retries += 1
            self._syn()
            return
        if self.retries >= DATA_RETRIES:
            self.fail(errno.ETIMEDOUT)
            return
        self.retries += 1
        for seq, kind, data in self.unacked:  # go back N
            self.stack.emit(self, kind, seq=seq, data=data)
        self.rto = min(self.rto * 2, MAX_RTO_MS)
        self.retransmit_at = now + self.rto


class HostStack:
    """The sockets, poller and segments of one node's host.

    ``addresses`` maps every node id to its ``(ip, port)``; ``handle`` names this
    incarnation (connection ids start with it, so a restarted host never takes an old
    connection for its own). Segments to send collect in ``outbox`` as
    ``(destination node id, segment)``; ``receive`` takes a delivered one.
    """

    def __init__(self, node_id: str, addresses: dict[str, tuple[str, int]], handle: str):
        self.node_id = node_id
        self.addresses = addresses
        self.by_address = {a: n for n, a in addresses.items()}
        self.handle = handle
        self.now = 0
        self.outbox: list[tuple[str, dict]] = []
        self.listener: SimSocket | None = None
        self.sockets: dict[tuple[str, str], SimSocket] = {}  # (peer, conn) -> socket
        self.silenced: set[tuple[str, str]] = set()  # half-open connections: their segments vanish
        self.subscribed: dict[int, tuple[Callable, int]] = {}  # fd -> (callback, event mask)
        self.files: dict[int, SimSocket] = {}
        self._fds = 100
        self._conns = 0

    # ------------------------------------------------------------------ for the sockets

    def new_fd(self) -> int:
        self._fds += 1
        return self._fds

    def new_conn(self) -> str:
        self._conns += 1
        return f"{self.handle}/{self._conns}"

    def node_at(self, address: tuple) -> str:
        node = self.by_address.get((address[0], int(address[1])))
        if node is None:
            raise _fail(errno.EHOSTUNREACH)
        return node

    def address_of(self, node: str) -> tuple[str, int]:
        return self.addresses[node]

    def bind(self, sock: SimSocket) -> None:
        if self.listener is not None and self.listener.state != "closed":
            raise _fail(errno.EADDRINUSE)
        self.listener = sock
        self.files[sock.fd] = sock

    def register(self, sock: SimSocket) -> None:
        self.sockets[(sock.peer, sock.conn)] = sock
        self.files[sock.fd] = sock

    def forget(self, sock: SimSocket) -> None:
        if sock.conn is not None and self.sockets.get((sock.peer, sock.conn)) is sock:
            del self.sockets[(sock.peer, sock.conn)]

    def close(self, sock: SimSocket) -> None:
        self.files.pop(sock.fd, None)
        if sock is self.listener:
            self.listener.state = "closed"
            self.listener = None
            return
        if sock.state == "established" and not sock.error and (sock.peer, sock.conn) not in self.silenced:
            sock._queue(FIN, b"")  # kept until the FIN is acknowledged
            sock.state = "closed"
            return
        sock.state = "closed"
        sock.fail(sock.error or errno.EBADF)

    def emit(self, sock: SimSocket, kind: str, **fields: Any) -> None:
        self._segment(sock.peer, sock.conn, kind, **fields)

    def _segment(self, peer: str, conn: str, kind: str, seq: int | None = None, data: bytes = b"",
                 ack: int | None = None) -> None:
        if (peer, conn) in self.silenced:
            return
        segment: dict[str, Any] = {"type": kind, "conn": conn}
        if seq is not None:
            segment["seq"] = seq
        if data:
            segment["data"] = base64.b64encode(data).decode("ascii")
        if ack is not None:
            segment["ack"] = ack
        self.outbox.append((peer, segment))

    # ------------------------------------------------------------------ the poller

    def poller(self) -> "SimPoller":
        return SimPoller(self)

    # ------------------------------------------------------------------ the network

    def receive(self, src: str, segment: dict) -> None:
        """A segment from ``src`` arrives (malformed ones raise KeyError/TypeError/ValueError)."""
        kind, conn = segment["type"], segment["conn"]
        if kind not in SEGMENT_KINDS or not isinstance(conn, str):
            raise ValueError(f"not a segment: {segment!r}")
        key = (src, conn)
        if key in self.silenced:
            return
        sock = self.sockets.get(key)
        if kind == RST:
            if sock is not None:
                sock.fail(errno.ECONNREFUSED if sock.state == "syn_sent" else errno.ECONNRESET)
            return
        if kind == SYN:
            if sock is not None:
                self._segment(src, conn, SYNACK)  # our SYNACK was lost: the SYN came again
            elif self.listener is None:
                self._segment(src, conn, RST)
            else:
                sock = SimSocket(self)
                sock.peer, sock.conn, sock.state = src, conn, "established"
                self.register(sock)
                self.listener.accept_queue.append(sock)
                self._segment(src, conn, SYNACK)
            return
        if sock is None or (sock.state == "closed" and kind == DATA and segment["seq"] >= sock.rcv_next):
            # nobody holds this connection (closed, or this host restarted): reset it
            if sock is not None:
                sock.fail(errno.ECONNRESET)
            self._segment(src, conn, RST)
            return
        sock.heard(self.now)
        if kind == PROBE:
            self._segment(src, conn, ACK, ack=sock.rcv_next)
            return
        if kind == SYNACK:
            if sock.state == "syn_sent":
                sock.state = "established"
                sock.retransmit_at, sock.retries = None, 0
            return
        if kind == ACK:
            sock.acked(int(segment["ack"]))
            return
        data = base64.b64decode(segment["data"]) if "data" in segment else b""
        sock.arrive(int(segment["seq"]), kind, data)

    def tick(self, now: int) -> None:
        """Retransmissions and timeouts due by ``now``."""
        self.now = now
        for key in sorted(self.sockets):
            sock = self.sockets.get(key)
            if sock is not None:
                sock.timer(now)

    def fault(self, peer: str, kind: str) -> None:
        """A ``LinkFault`` on this node's connections with ``peer``."""
        if kind not in LINK_FAULTS:
            raise ValueError(f"unknown link fault {kind!r} (known: {', '.join(LINK_FAULTS)})")
        for key in sorted(k for k in self.sockets if k[0] == peer):
            sock = self.sockets[key]
            if kind == "reset":
                sock.fail(errno.ECONNRESET)
                self._segment(peer, key[1], RST)
            else:
                self.silenced.add(key)


class SimPoller:
    """``pysyncobj.poller.Poller`` over a ``HostStack``: level-triggered, in fd order."""

    def __init__(self, stack: HostStack):
        self.stack = stack

    def subscribe(self, descr: int, callback: Callable, event_mask: int) -> None:
        self.stack.subscribed[descr] = (callback, event_mask)

    def unsubscribe(self, descr: int) -> None:
        self.stack.subscribed.pop(descr, None)

    def poll(self, timeout: float) -> None:
        """One round: every subscribed socket with an event it asked for (errors always)
        gets its callback once. Never waits: time is the simulator's."""
        subscribed, files = self.stack.subscribed, self.stack.files
        for fd in sorted(subscribed):
            entry = subscribed.get(fd)
            sock = files.get(fd)
            if entry is None or sock is None:
                continue
            events = sock.events() & (entry[1] | ERROR)
            if events:
                entry[0](fd, events)


class SocketModule:
    """What ``socket`` means to PySyncObj's connection code during an activation: the real
    module's constants, errors and helpers, with ``socket()`` making a ``SimSocket``."""

    def __init__(self, stack: HostStack):
        self._stack = stack

    def socket(self, *args: Any) -> SimSocket:
        return SimSocket(self._stack, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(_socket, name)
