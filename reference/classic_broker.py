"""A sans-IO classic broker: master (SYNC_MASTER / ASYNC_MASTER) or slave, with HA.

Every decision is a call into ``spec/classic`` through a ``ClassicRules`` bundle (a
mutant is the bundle with a procedure replaced); this module keeps state, moves bytes
and turns decisions into messages.

* **Commitlog**: real bytes in files of ``mappedFileSizeCommitLog`` (``min_offset`` is
  the first file's start; files before it were deleted). ``flushed`` marks the durable
  prefix: a crash keeps exactly the flushed bytes (and the role the operator
  configured), and recovery drops a torn last record. Flushing runs as upstream:
  ASYNC_FLUSH every flushIntervalCommitLog ms with flushCommitLogLeastPages (a thorough
  flush every flushCommitLogThoroughInterval), SYNC_FLUSH every tick (GroupCommitService
  waits 10 ms) and for each waiting producer.
* **Connections** model TCP: the slave opens one (``HAOpen``; any broker accepts, as
  AcceptSocketService runs in every role) and both sides then exchange an ordered,
  reliable stream (``HAStream`` with sequence numbers; the simulated network may delay,
  reorder, duplicate and lose messages, so the receiver reorders, drops duplicates,
  and treats a gap that stays open for ``GAP_TIMEOUT_MS`` as a broken connection). A
  closed connection sends ``HAReset`` (FIN/RST); a stream message for a connection the
  receiver does not know is answered with ``HAReset``. A crash sends nothing: the peer
  notices by housekeeping, by a reset on its next message, or never (4.x slaves).
* **Threads** are ticks: each tick runs a round of the flush service, of every
  connection's WriteSocketService (as many batches as there are, up to a cap) and
  housekeeping, GroupTransferService's timeouts, and the HAClient loop. A producer's
  write wakes the write services at once, and a report wakes GroupTransferService.

The scenario's monitor reads the node only through ``observe()`` (a ``ClassicView``)
and its messages (``PutResult`` to the producer, the HA stream), as it reads an
implementation under test (node kind ``classic``).
"""
from __future__ import annotations

import enum
from collections import Counter

import attrs

from reference.node_api import Message, Outbox, Ready
from spec.classic.commitlog import (
    MESSAGE_MAGIC_CODE, DataOutcome, PlaceOutcome, blank_record, commit_log_data, encode_record,
)
from spec.classic.master import NO_OFFSET, ConnectionView, LogView, WriteView
from spec.classic.records import BrokerRole, ClassicConfig, PutMessageStatus, SlaveReport, TransferHeader
from spec.classic.rules import DEFAULT_CLASSIC_RULES, ClassicRules
from spec.classic.stream import GAP_TIMEOUT_MS, OrderedStream
from spec.classic.slave import ClientView, ReportKind
from spec.classic.wire import (
    ClassicNodeConfig, ClassicView, CleanFiles, ClientConnectionView, HAAccept, HAOpen, HAReset, HAStream,
    MasterConnectionView, Put, PutResult, Reconfigure, TransferFrame,
)
from spec.classic.write import FlushRequestOutcome, ReplicaRequest, TransferOutcome

NEVER = 1 << 62
CONNECT_TIMEOUT_MS = 5_000  # RemotingUtil.connect
CONNECT_RETRY_MS = 5_000  # HAClient: waitForRunning(5 s) after a failed connect
CLIENT_SELECT_MS = 1_000  # HAClient: selector.select(1000) between rounds
MAX_FRAMES_PER_TICK = 32  # WriteSocketService's batches per 10 ms (bandwidth)
GROUP_COMMIT_FLUSHES = 2  # GroupCommitService flushes at most twice per request


# ------------------------------------------------------------------ state


@attrs.frozen(slots=True)
class ClassicDurable:
    min_offset: int
    data: bytes  # the flushed bytes from min_offset


class MasterConnection:
    """``HAConnection``: the master's side of one slave's connection."""

    __slots__ = ("conn", "stream", "view", "write", "last_read_ms")

    def __init__(self, conn: str, slave: str, now: int):
        self.conn = conn
        self.stream = OrderedStream(slave)
        self.view = ConnectionView()
        self.write = WriteView(NO_OFFSET, NO_OFFSET, now)
        self.last_read_ms = now


class ClientState(enum.Enum):
    CONNECTING = "CONNECTING"
    CONNECTED = "CONNECTED"


class SlaveClient:
    """``HAClient``'s connection to its master."""

    __slots__ = ("conn", "stream", "state", "view", "connect_deadline", "next_round")

    def __init__(self, conn: str, master: str, now: int):
        self.conn = conn
        self.stream = OrderedStream(master)
        self.state = ClientState.CONNECTING
        self.view: ClientView | None = None
        self.connect_deadline = now + CONNECT_TIMEOUT_MS
        self.next_round = now


class ClassicBroker(Outbox):
    def __init__(self, node_id: str, setup: ClassicNodeConfig, durable: ClassicDurable | None = None,
                 now: int = 0, draw=None, rules: ClassicRules = DEFAULT_CLASSIC_RULES):
        self.node_id = node_id
        self.rules = rules
        self.config: ClassicConfig = attrs.evolve(rules.config, broker_role=setup.role)
        self.master = setup.master
        self.min_offset = durable.min_offset if durable else 0
        data = durable.data if durable else b""
        end = rules.recovered_end(data, self.min_offset, rules.file_size)
        self.log = bytearray(data[:end - self.min_offset])
        self.flushed = self.max_offset
        self.nonce = draw(2**31) if draw else 0
        self.conn_counter = 0
        self.coverage: Counter = Counter()
        self._out: list[Message] = []
        self._dirty = False
        self._bytes: bytes | None = None
        self._now = now
        self._reset_ha(now)

    def _reset_ha(self, now: int) -> None:
        self.connections: dict[str, MasterConnection] = {}
        self.push2_slave_max_offset = 0
        self.replica_waits: list[tuple[PutResult, ReplicaRequest, PutMessageStatus | None]] = []
        self.flush_waits: list[PutResult] = []
        self.flush_status: dict[str, PutMessageStatus] = {}
        self.client: SlaveClient | None = None
        self.next_connect_at = now
        self.last_report_write_ms = now  # HAClient.lastWriteTimestamp survives reconnects in 5.x
        self.last_flush_round_ms = now
        self.last_thorough_ms = now

    # ------------------------------------------------------------------ views

    @property
    def max_offset(self) -> int:
        return self.min_offset + len(self.log)

    @property
    def data(self) -> bytes:
        if self._bytes is None:
            self._bytes = bytes(self.log)
        return self._bytes

    @property
    def role(self) -> BrokerRole:
        return self.config.broker_role

    def observe(self) -> ClassicView:
        conns = tuple(MasterConnectionView(c.conn, c.stream.peer, c.view.slave_request_offset, c.view.slave_ack_offset,
                                           c.write.next_transfer_from_where) for c in self.connections.values())
        client = None
        if self.client is not None:
            connected = self.client.state is ClientState.CONNECTED
            client = ClientConnectionView(self.client.conn, connected,
                                          self.client.view.current_reported_offset if connected else -1)
        return ClassicView(self.node_id, self.role, self.master, self.min_offset, self.max_offset, self.flushed,
                           self.data, self.push2_slave_max_offset, conns, client)

    def summary(self) -> dict:
        return {"role": self.role.value, "min": self.min_offset, "max": self.max_offset, "flushed": self.flushed,
                "connections": len(self.connections),
                "client": self.client.state.value if self.client else None}

    def durable(self) -> ClassicDurable:
        return ClassicDurable(self.min_offset, bytes(self.log[:self.flushed - self.min_offset]))

    # ------------------------------------------------------------------ plumbing

    def _stream_send(self, stream: OrderedStream, conn: str, payload) -> None:
        self._send(stream.peer, HAStream(conn, stream.send_seq, payload))
        stream.send_seq += 1

    def _append(self, chunk: bytes) -> None:
        self.log += chunk
        self._bytes = None

    def _covered(self, procedure: str, outcome) -> None:
        self.coverage[(procedure, getattr(outcome, "value", outcome))] += 1

    # ------------------------------------------------------------------ driver API

    def next_deadline(self) -> int:
        """The earliest time ``tick`` can do anything (deadline scheduling): the flush
        service's next round, and per connection its stream gap, housekeeping, heartbeat
        or waiting batch, a waiting producer's deadline, the HAClient's next round."""
        now = self._now
        if self.config.flush_disk_type.value == "SYNC_FLUSH":
            due = now if self.flush_waits or self.flushed < self.max_offset else NEVER
        else:
            due = self.last_flush_round_ms + self.config.flush_interval_commit_log_ms
        for c in self.connections.values():
            due = min(due, c.last_read_ms + self.config.ha_housekeeping_interval_ms + 1)
            if c.stream.gap_since is not None:
                due = min(due, c.stream.gap_since + GAP_TIMEOUT_MS)
            if c.write.slave_request_offset != NO_OFFSET:
                due = min(due, c.write.last_write_ms + self.config.ha_send_heartbeat_interval_ms + 1)
                if self._has_batch(c):
                    due = now
        for _, request, status in self.replica_waits:
            if status is None:
                due = min(due, request.deadline)
        c = self.client
        if self.role is BrokerRole.SLAVE and self.master is not None:
            if c is None:
                due = min(due, self.next_connect_at)
            elif c.state is ClientState.CONNECTING:
                due = min(due, c.connect_deadline)
            else:
                due = min(due, c.next_round)
                if c.stream.gap_since is not None:
                    due = min(due, c.stream.gap_since + GAP_TIMEOUT_MS)
        return due

    def _has_batch(self, c: MasterConnection) -> bool:
        where = c.write.next_transfer_from_where
        return where == NO_OFFSET or commit_log_data(where, self.min_offset, self.max_offset,
                                                     self.rules.file_size).outcome is not DataOutcome.NOT_FOUND

    def tick(self, now: int) -> Ready:
        self._now = now
        self._flush_service(now)
        for c in list(self.connections.values()):
            if c.stream.broken(now):
                self._close_master_connection(c, "stream broken", now)
                continue
            decision = self.rules.master_housekeeping(c.last_read_ms, now, self.config)
            self._covered("master_housekeeping", decision)
            if decision.value == "EXPIRED":
                self._close_master_connection(c, "housekeeping", now)
                continue
            self._write_rounds(c, now)
        self._group_transfer(now)
        self._client_loop(now)
        return self._ready()

    def step(self, message: Message, now: int) -> Ready:
        self._now = now
        handler = _HANDLERS.get(type(message.payload))
        if handler is not None:
            getattr(self, handler)(message.src, message.payload, now)
        return self._ready()

    # ------------------------------------------------------------------ flush services

    def _flush_once(self, least_pages: int) -> None:
        decision = self.rules.flush_commit_log(self.flushed, self.max_offset, self.rules.file_size, least_pages,
                                               self.config.os_page_size)
        if decision.flushed > self.flushed:
            self.flushed = decision.flushed
            self._dirty = True

    def _flush_service(self, now: int) -> None:
        if self.config.flush_disk_type.value == "SYNC_FLUSH":
            # GroupCommitService: each waiting producer gets up to two flushes; with
            # none waiting it flushes anyway (messages that do not wait for the store).
            waiting, self.flush_waits = self.flush_waits, []
            for result in waiting:
                for _ in range(GROUP_COMMIT_FLUSHES):
                    if self.flushed >= result.end:
                        break
                    self._flush_once(0)
                status = self.rules.group_commit_status(self.flushed, result.end)
                self._covered("group_commit_status", status)
                self._flush_done(result, status, now)
            if not waiting:
                self._flush_once(0)
            return
        if now - self.last_flush_round_ms < self.config.flush_interval_commit_log_ms:
            return
        self.last_flush_round_ms = now
        decision = self.rules.async_flush_round(now, self.last_thorough_ms, self.config.flush_commit_log_least_pages,
                                                self.config.flush_commit_log_thorough_interval_ms)
        if decision.thorough:
            self.last_thorough_ms = now
        self._flush_once(decision.least_pages)

    # ------------------------------------------------------------------ master: writes

    def _on_put(self, src: str, put: Put, now: int) -> None:
        if not self.role.is_master:
            self._covered("put", "SERVICE_NOT_AVAILABLE")
            self._reply(PutResult(put.msg_id, PutMessageStatus.SERVICE_NOT_AVAILABLE))
            return
        placement = self.rules.place_message(self.max_offset, put.size, self.rules.file_size)
        self._covered("place_message", placement.outcome)
        if placement.outcome is PlaceOutcome.MESSAGE_SIZE_EXCEEDED:
            return
        if placement.outcome is PlaceOutcome.END_OF_FILE:
            self._append(blank_record(placement.blank_size))
        self._append(encode_record(put.size, MESSAGE_MAGIC_CODE, f"{put.msg_id}|".encode()))
        result = PutResult(put.msg_id, PutMessageStatus.PUT_OK, placement.start, placement.start + put.size)
        flush = self.rules.submit_flush_request(self.config, put.wait_store_msg_ok)
        self._covered("submit_flush_request", flush)
        replica = self.rules.submit_replica_request(result.start, put.size, now, len(self.connections),
                                                    self.push2_slave_max_offset, put.wait_store_msg_ok,
                                                    self.config, self.rules.profile)
        self._covered("submit_replica_request", replica.outcome)
        if flush is FlushRequestOutcome.WAIT_FLUSH:
            self.flush_waits.append(result)
        else:
            self.flush_status[result.msg_id] = PutMessageStatus.PUT_OK
        self.replica_waits.append((result, replica.request, replica.status))
        for c in list(self.connections.values()):  # getWaitNotifyObject().wakeupAll()
            self._write_rounds(c, now)
        self._group_transfer(now)

    def _flush_done(self, result: PutResult, status: PutMessageStatus, now: int) -> None:
        self.flush_status[result.msg_id] = status
        self._group_transfer(now)

    def _group_transfer(self, now: int) -> None:
        """GroupTransferService (and the futures' combination): answer every producer
        whose flush and replica requests are both decided."""
        if not self.replica_waits:
            return
        acks = [(c.view.transfer_from, c.view.slave_ack_offset) for c in self.connections.values()]
        still = []
        for result, request, status in self.replica_waits:
            if status is None:
                outcome = self.rules.transfer_status(request, self.push2_slave_max_offset, acks, now)
                if outcome is not TransferOutcome.WAITING:
                    self._covered("transfer_status", outcome)
                    status = PutMessageStatus[outcome.value]
            flush = self.flush_status.get(result.msg_id)
            if status is None or flush is None:
                still.append((result, request, status))
                continue
            del self.flush_status[result.msg_id]
            final = self.rules.combine_put_status(flush, status)
            self._reply(attrs.evolve(result, status=final))
        self.replica_waits = still

    def _reply(self, result: PutResult) -> None:
        self._send("client", result)

    def _on_clean_files(self, src: str, clean: CleanFiles, now: int) -> None:
        keep_from = self.rules.clean_files_keep_from(self.min_offset, self.max_offset, clean.keep, self.rules.file_size)
        if keep_from > self.min_offset:
            cut = keep_from - self.min_offset
            del self.log[:cut]
            self._bytes = None
            self.min_offset = keep_from
            self.flushed = max(self.flushed, keep_from)
            self._dirty = True

    # ------------------------------------------------------------------ master: connections

    def _on_ha_open(self, src: str, m: HAOpen, now: int) -> None:
        if m.conn not in self.connections:  # AcceptSocketService, in every role
            self.connections[m.conn] = MasterConnection(m.conn, src, now)
        self._send(src, HAAccept(m.conn))

    def _on_slave_report(self, c: MasterConnection, report: SlaveReport, now: int) -> None:
        c.last_read_ms = now
        decision = self.rules.on_slave_report(c.view, report.offset, self.max_offset, self.push2_slave_max_offset,
                                              self.rules.profile)
        self._covered("on_slave_report", decision.outcome)
        c.view = decision.connection
        if c.write.slave_request_offset == NO_OFFSET:
            c.write = attrs.evolve(c.write, slave_request_offset=c.view.slave_request_offset)
        if decision.close:
            self._close_master_connection(c, "report past the master's max offset", now)
            return
        self.push2_slave_max_offset = decision.push2_slave_max_offset
        self._group_transfer(now)
        self._write_rounds(c, now)

    def _write_rounds(self, c: MasterConnection, now: int) -> None:
        log = LogView(self.min_offset, self.max_offset)
        for _ in range(MAX_FRAMES_PER_TICK):
            decision = self.rules.write_socket_round(c.write, log, now, self.config)
            self._covered("write_socket_round", decision.outcome)
            if decision.first_offset is not None:
                self._covered("first_transfer_offset", decision.first_offset)
                c.view = attrs.evolve(c.view, transfer_from=decision.transfer_from)
            write = attrs.evolve(c.write, next_transfer_from_where=decision.next_transfer_from_where)
            if decision.heartbeat is not None:
                self._stream_send(c.stream, c.conn, TransferFrame(decision.heartbeat))
                write = attrs.evolve(write, last_write_ms=now)
            if decision.batch is not None:
                start = decision.read_from - self.min_offset
                body = self.data[start:start + decision.batch.body_size]
                self._stream_send(c.stream, c.conn, TransferFrame(decision.batch, body))
                write = attrs.evolve(write, last_write_ms=now)
            c.write = write
            if decision.batch is None:
                return

    def _close_master_connection(self, c: MasterConnection, reason: str, now: int) -> None:
        if self.connections.pop(c.conn, None) is not None:
            self._covered("connection_closed", reason)
            self._send(c.stream.peer, HAReset(c.conn))
            self._group_transfer(now)

    # ------------------------------------------------------------------ slave: HAClient

    def _client_loop(self, now: int) -> None:
        if self.role is not BrokerRole.SLAVE or self.master is None:
            return
        c = self.client
        if c is None:
            if now >= self.next_connect_at:
                self.conn_counter += 1
                conn = f"{self.node_id}:{self.nonce}:{self.conn_counter}"
                self.client = SlaveClient(conn, self.master, now)
                self._send(self.master, HAOpen(conn))
            return
        if c.state is ClientState.CONNECTING:
            if now >= c.connect_deadline:
                self.client = None  # connect failed: waitForRunning(5 s)
                self.next_connect_at = now + CONNECT_RETRY_MS
            return
        if c.stream.broken(now):
            self._close_client("stream broken", now)
            return
        if now >= c.next_round:
            # select(1000) timed out: the round runs at the time the thread woke
            self._client_round(c, c.next_round)

    def _client_round(self, c: SlaveClient, at: int) -> None:
        """One round of HAClient.run (the frames, if any, were read just before)."""
        c.next_round = at + CLIENT_SELECT_MS
        report = self.rules.periodic_report(c.view, at, self.config)
        self._covered("periodic_report", report.kind)
        if report.kind is ReportKind.HEARTBEAT:
            self._report(c, report.offset, at)
        housekeeping = self.rules.slave_housekeeping(c.view, at, self.config, self.rules.profile)
        self._covered("slave_housekeeping", housekeeping)
        if housekeeping.value == "EXPIRED":
            self._close_client("housekeeping", at)

    def _report(self, c: SlaveClient, offset: int, now: int) -> None:
        self._stream_send(c.stream, c.conn, SlaveReport(offset))
        c.view = self.rules.on_report(c.view, offset, now)
        self.last_report_write_ms = now

    def _on_ha_accept(self, src: str, m: HAAccept, now: int) -> None:
        c = self.client
        if c is not None and c.conn == m.conn and c.state is ClientState.CONNECTED:
            return  # a duplicate
        if c is None or c.conn != m.conn:
            self._send(src, HAReset(m.conn))  # a connection this broker gave up on
            return
        c.state = ClientState.CONNECTED
        c.view = self.rules.on_connect(self.max_offset, now, self.last_report_write_ms, self.rules.profile)
        self._client_round(c, now)  # the loop goes on at once (a report may be due)

    def _on_frame(self, c: SlaveClient, frame: TransferFrame, now: int) -> None:
        c.view = self.rules.on_read(c.view, now)
        decision = self.rules.on_frame(self.max_offset, frame.header, self.config)
        self._covered("on_frame", decision.outcome)
        if decision.close:
            self._close_client("frame offset mismatch", now)
            return
        body = frame.body
        if body and self.rules.fits_last_file(decision.append_at, len(body), self.config):
            if not self.log:  # an empty log: a new file where the frame says (CommitLog.appendData)
                self.min_offset = self.flushed = decision.append_at
            self._append(body)
        progress = self.rules.progress_report(c.view, self.max_offset)
        self._covered("progress_report", progress.kind)
        if progress.kind is ReportKind.PROGRESS:
            self._report(c, progress.offset, now)

    def _close_client(self, reason: str, now: int) -> None:
        c = self.client
        if c is None:
            return
        self.client = None
        self._covered("connection_closed", reason)
        self._send(c.stream.peer, HAReset(c.conn))
        self.next_connect_at = now + self.rules.profile.reconnect_delay_ms

    # ------------------------------------------------------------------ both sides

    def _on_ha_stream(self, src: str, m: HAStream, now: int) -> None:
        master_side = self.connections.get(m.conn)
        if master_side is not None:
            for payload in master_side.stream.receive(m.seq, m.payload, now):
                if self.connections.get(m.conn) is not master_side:
                    return
                if isinstance(payload, SlaveReport):
                    self._on_slave_report(master_side, payload, now)
            return
        c = self.client
        if c is not None and c.conn == m.conn and c.state is ClientState.CONNECTED:
            frames = c.stream.receive(m.seq, m.payload, now)
            for payload in frames:
                if self.client is not c:
                    return
                if isinstance(payload, TransferFrame):
                    self._on_frame(c, payload, now)
            if frames and self.client is c:
                self._client_round(c, now)  # select() returned on the read: the loop goes round
            return
        self._send(src, HAReset(m.conn))  # a segment for no socket: RST

    def _on_ha_reset(self, src: str, m: HAReset, now: int) -> None:
        c = self.connections.get(m.conn)
        if c is not None:
            self.connections.pop(m.conn)
            self._group_transfer(now)
        elif self.client is not None and self.client.conn == m.conn:
            self.client = None
            self.next_connect_at = now + self.rules.profile.reconnect_delay_ms

    def _on_reconfigure(self, src: str, m: Reconfigure, now: int) -> None:
        """A graceful restart with a new role: flush everything, close every connection,
        and recover as a start does (``CommitLog.recoverNormally``): the log ends after
        its last whole record, so a slave's torn last message (a batch may end inside
        one) is dropped, not appended after when it is promoted."""
        for c in list(self.connections.values()):
            self._close_master_connection(c, "restart", now)
        self._close_client("restart", now)
        self.config = attrs.evolve(self.config, broker_role=m.role)
        self.master = m.master
        end = self.rules.recovered_end(self.data, self.min_offset, self.rules.file_size)
        if end < self.max_offset:
            del self.log[end - self.min_offset:]
            self._bytes = None
        self.flushed = self.max_offset
        self._dirty = True
        self._reset_ha(now)


_HANDLERS = {
    Put: "_on_put",
    CleanFiles: "_on_clean_files",
    Reconfigure: "_on_reconfigure",
    HAOpen: "_on_ha_open",
    HAAccept: "_on_ha_accept",
    HAStream: "_on_ha_stream",
    HAReset: "_on_ha_reset",
}
