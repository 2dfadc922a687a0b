"""Step conformance of classic master/slave brokers (``spec/steps/__init__.py`` says what a step is).

``ClassicSteps.check(event)`` judges one step of one broker of a classic HA group
(seed 001) against the spec's procedures (``spec/classic``) in the declared profile
and configuration, and returns the violations. What it judges:

| procedure | input | what must hold |
|---|---|---|
| ``place_message`` | a producer's ``Put`` | a master appends the message where ``place_message`` puts it (a blank record first when it does not fit its file); a slave answers SERVICE_NOT_AVAILABLE and changes nothing; only a ``Put`` grows a master's log |
| ``transfer_status`` | any step of a master | a producer's status is the replica request's (``submit_replica_request``: at once when it does not wait; ``transfer_status``: PUT_OK only once a connection whose transfer began at or before the message acknowledged its end, at the answer or any step since the request, FLUSH_SLAVE_TIMEOUT not before the deadline), combined with the flush's (``combine_put_status``) |
| ``group_commit_status`` | any step of a SYNC_FLUSH master | a waiting producer's flush part is ``group_commit_status`` over what is flushed when it is answered |
| ``on_slave_report`` | a slave's report reaching its master | the connection's request and ack offsets, push2SlaveMaxOffset, and whether it closes are ``on_slave_report``'s |
| ``write_socket_round`` | any step of a master | every frame a connection sends is a round of ``write_socket_round``: nothing before the slave's first report, the first transfer offset, each batch's offset, size and bytes, no heartbeat frame before haSendHeartbeatInterval |
| ``on_connect`` | the HA connection's handshake | ``HAOpen`` is answered ``HAAccept`` (in every role); a slave that accepts starts with ``on_connect``'s view (its max offset as the reported offset); a segment for no connection is answered ``HAReset`` |
| ``on_frame`` | a frame reaching a slave | the slave appends, or refuses and closes, as ``on_frame`` and ``fits_last_file`` say (an empty log starts at the frame's file); only frames grow a slave's log |
| ``slave_report`` | any step of a slave | each report is a progress report (``progress_report``: the max offset, at once after a frame that grows it) or a heartbeat (``periodic_report``: the last reported offset, not before haSendHeartbeatInterval), and the reported offset is ``on_report``'s |

The hidden state (where each connection's transfer began, its write clock, the slave
client's ``ClientView``, the producers awaiting an answer and their requests) is rebuilt
from the inputs and outputs; a connection's segments are read in order through
``spec.classic.stream.OrderedStream``, as a broker reads them. Freedoms (accepted, not
judged; docs/step-conformance.md): when rounds run (how many batches a step sends, when
a heartbeat frame or report goes out after its interval, when a waiting producer is
answered after its request is decided), the bytes of a message's body, when the flush
services flush, when connections close by housekeeping or a broken stream, and the
operator's reconfiguration.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

import attrs

from spec.classic.commitlog import BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, PlaceOutcome, place_message, read_record
from spec.classic.master import NO_OFFSET, ConnectionView, LogView, WriteView, on_slave_report, write_socket_round
from spec.classic.profiles import DEFAULT_PROFILE, ClassicProfile
from spec.classic.records import DEFAULT_CONFIG, ClassicConfig, FlushDiskType, PutMessageStatus, SlaveReport
from spec.classic.slave import (
    ClientView,
    FrameOutcome,
    ReportKind,
    fits_last_file,
    on_connect,
    on_frame,
    on_read,
    on_report,
    periodic_report,
    progress_report,
)
from spec.classic.stream import OrderedStream
from spec.classic.wire import (
    ClassicView,
    HAAccept,
    HAOpen,
    HAReset,
    HAStream,
    Put,
    PutResult,
    Reconfigure,
    TransferFrame,
)
from spec.classic.write import (
    FlushRequestOutcome,
    TransferOutcome,
    combine_put_status,
    group_commit_status,
    submit_flush_request,
    submit_replica_request,
    transfer_status,
)
from spec.steps import MESSAGE, NodeSteps, StepEvent, violation

PROCEDURES: dict[str, str] = {
    "place_message": "a master appends a producer's message where place_message says; a slave refuses it",
    "transfer_status": "a producer's status is the replica request's (answered at once, or PUT_OK once a slave holds it)",
    "group_commit_status": "under SYNC_FLUSH a producer's status waits for the flush (group_commit_status)",
    "on_slave_report": "a master folds each report into the connection and push2SlaveMaxOffset as on_slave_report says",
    "write_socket_round": "a master sends each connection the frames write_socket_round gives, from the slave's offset",
    "on_connect": "HAOpen is accepted, a slave connects with on_connect's view, a stray segment is reset",
    "on_frame": "a slave appends or refuses each frame as on_frame says",
    "slave_report": "a slave reports its max offset after progress and its last report as a heartbeat after the interval",
}
PROPERTIES = tuple("step-conformance:" + p for p in PROCEDURES)
_ANY_FLUSH = (PutMessageStatus.PUT_OK, PutMessageStatus.FLUSH_DISK_TIMEOUT)


# ------------------------------------------------------------------ hidden state


class _MasterConn:
    """What the checker knows of one connection on the master's side."""

    __slots__ = ("stream", "view", "where", "last_write")

    def __init__(self, slave: str, now: int):
        self.stream = OrderedStream(slave)
        self.view = ConnectionView()  # request, ack, and where the acked bytes begin
        self.where = NO_OFFSET  # nextTransferFromWhere
        self.last_write = now


class _Client:
    """The slave's connection to its master."""

    __slots__ = ("conn", "stream", "view")

    def __init__(self, conn: str, master: str):
        self.conn = conn
        self.stream = OrderedStream(master)
        self.view: ClientView | None = None  # once connected


@attrs.define(slots=True)
class _Pending:
    """A producer awaiting its answer: where its message went and what the requests decided."""

    start: int
    end: int
    flush: FlushRequestOutcome
    replica: Any  # ReplicaDecision
    # transfer_status said PUT_OK at some step since: the replica request is done (upstream
    # completes its future once), even if that connection closes before the flush is
    replicated: bool = False


@attrs.define(slots=True)
class _Broker:
    view: ClassicView
    time: int
    conns: dict = attrs.Factory(dict)  # conn -> _MasterConn
    client: _Client | None = None
    last_report_write: int = 0  # HAClient.lastWriteTimestamp across reconnects (5.x); a lower bound
    pending: dict = attrs.Factory(dict)  # msg id -> _Pending


def _show_status(s: Iterable[PutMessageStatus]) -> str:
    return " or ".join(sorted(x.value for x in s)) or "no answer"


# ------------------------------------------------------------------ the checker


class ClassicSteps(NodeSteps):
    """Judges every step of the brokers of one classic group (``config``: the group's
    ``MessageStoreConfig``, whose role each broker's view overrides)."""

    def __init__(self, config: ClassicConfig = DEFAULT_CONFIG, profile: ClassicProfile = DEFAULT_PROFILE):
        super().__init__()
        self.config = config
        self.profile = profile
        self._configs: dict = {}
        self.judged: Counter = Counter()  # procedure -> steps judged by it

    def _config(self, view: ClassicView) -> ClassicConfig:
        c = self._configs.get(view.role)
        if c is None:
            c = self._configs[view.role] = attrs.evolve(self.config, broker_role=view.role)
        return c

    def start(self, e: StepEvent) -> _Broker:
        return _Broker(e.view, e.time, last_report_write=e.time)

    def judge(self, s: _Broker, e: StepEvent, out: list) -> None:
        self._judge(s, e, out)
        s.view, s.time = e.view, e.time

    # ------------------------------------------------------------------ one step

    def _judge(self, s: _Broker, e: StepEvent, out: list) -> None:
        before, after, p = s.view, e.view, e.payload
        sent_frames: dict[str, list] = {}  # conn -> frames the master sent
        reports: dict[str, list] = {}  # conn -> reports the slave sent
        results, resets, accepts = [], set(), set()
        for m in e.outputs:
            x = m.payload
            if isinstance(x, HAStream):
                if isinstance(x.payload, TransferFrame):
                    sent_frames.setdefault(x.conn, []).append(x.payload)
                elif isinstance(x.payload, SlaveReport):
                    reports.setdefault(x.conn, []).append(x.payload.offset)
            elif isinstance(x, PutResult):
                results.append(x)
            elif isinstance(x, HAReset):
                resets.add(x.conn)
            elif isinstance(x, HAAccept):
                accepts.add((m.dst, x.conn))
        grew = False  # whether this input may grow the log
        push2 = before.push2_slave_max_offset
        if e.input == MESSAGE and isinstance(p, Reconfigure):
            s.conns, s.client, s.pending, s.last_report_write = {}, None, {}, e.time
            return  # an operator's restart: the HA state starts over
        if e.input == MESSAGE and isinstance(p, Put):
            grew = self._put(s, e, p, results, out)
        elif e.input == MESSAGE and isinstance(p, HAOpen):
            self.judged["on_connect"] += 1
            if (e.src, p.conn) not in accepts:
                out.append(violation("on_connect", e.node, f"{e.node} at t={e.time}: HAOpen {p.conn} from {e.src}",
                                     "HAAccept (AcceptSocketService accepts in every role)", "no HAAccept"))
            if p.conn not in s.conns and any(c.conn == p.conn for c in after.connections):
                s.conns[p.conn] = _MasterConn(e.src, e.time)
        elif e.input == MESSAGE and isinstance(p, HAAccept):
            self._accept(s, e, p, resets, reports, out)
        elif e.input == MESSAGE and isinstance(p, HAStream):
            if p.conn in s.conns and any(c.conn == p.conn for c in before.connections):
                push2 = self._reports_in(s, e, p, push2, out)
            elif s.client is not None and s.client.conn == p.conn and before.client is not None \
                    and before.client.connected and s.client.view is not None:
                grew = self._frames_in(s, e, p, reports, out)
            else:
                self.judged["on_connect"] += 1
                if p.conn not in resets:
                    out.append(violation("on_connect", e.node, f"{e.node} at t={e.time}: a segment of {p.conn}, "
                                         "a connection it does not have", f"HAReset({p.conn})", "no reset"))
        if not grew and after.max_offset != before.max_offset:
            procedure = "place_message" if before.role.is_master else "on_frame"
            self.judged[procedure] += 1
            out.append(violation(procedure, e.node, f"{e.node} at t={e.time}: {_input(e)}",
                                 f"its log still ends at {before.max_offset}", f"it ends at {after.max_offset}"))
        if after.push2_slave_max_offset != push2:
            self.judged["on_slave_report"] += 1
            out.append(violation("on_slave_report", e.node, f"{e.node} at t={e.time}: {_input(e)}",
                                 f"push2SlaveMaxOffset {push2}", f"{after.push2_slave_max_offset}"))
        self._rounds(s, e, sent_frames, out)
        if e.input != MESSAGE or not isinstance(p, (HAStream, HAAccept)):
            self._tick_reports(s, e, reports, out)
        self._results(s, e, results, out)
        self._forget_closed(s, e)

    # ------------------------------------------------------------------ the master's write path

    def _put(self, s: _Broker, e: StepEvent, put: Put, results: list, out: list) -> bool:
        before, after = s.view, e.view
        self.judged["place_message"] += 1
        where = f"{e.node} at t={e.time}: Put {put.msg_id} ({put.size} bytes)"
        if not before.role.is_master:
            mine = [r for r in results if r.msg_id == put.msg_id]
            if not mine or mine[0].status is not PutMessageStatus.SERVICE_NOT_AVAILABLE:
                out.append(violation("place_message", e.node, where + " at a slave", "SERVICE_NOT_AVAILABLE",
                                     _show_status(r.status for r in mine)))
            results[:] = [r for r in results if r.msg_id != put.msg_id]
            return False
        config = self._config(before)
        fs = config.mapped_file_size_commit_log
        placement = place_message(before.max_offset, put.size, fs)
        if placement.outcome is PlaceOutcome.MESSAGE_SIZE_EXCEEDED:
            return False
        end = placement.start + put.size
        base = after.min_offset
        wrong = []
        if after.max_offset != end:
            wrong.append(f"the log ends at {after.max_offset}")
        elif read_record(after.data, placement.start - base) != (put.size, MESSAGE_MAGIC_CODE):
            wrong.append(f"no {put.size}-byte message record at {placement.start}")
        if placement.outcome is PlaceOutcome.END_OF_FILE and \
                read_record(after.data, placement.blank_at - base) != (placement.blank_size, BLANK_MAGIC_CODE):
            wrong.append(f"no {placement.blank_size}-byte blank record at {placement.blank_at}")
        kept = before.max_offset - base
        if kept > 0 and after.data[:kept] != before.data[base - before.min_offset:]:
            wrong.append("bytes before the message changed")
        if wrong:
            expected = f"the message at [{placement.start}, {end}) ({placement.outcome.value}" + (
                f", a blank record at {placement.blank_at})" if placement.blank_at >= 0 else ")")
            out.append(violation("place_message", e.node, where, expected, "; ".join(wrong)))
        flush = submit_flush_request(config, put.wait_store_msg_ok)
        replica = submit_replica_request(placement.start, put.size, e.time, len(before.connections),
                                         before.push2_slave_max_offset, put.wait_store_msg_ok, config, self.profile)
        s.pending[put.msg_id] = _Pending(placement.start, end, flush, replica)
        if flush is FlushRequestOutcome.ASYNC_FLUSH and replica.status is not None and \
                not any(r.msg_id == put.msg_id for r in results):
            self.judged["transfer_status"] += 1
            status = combine_put_status(PutMessageStatus.PUT_OK, replica.status)
            out.append(violation("transfer_status", e.node, where,
                                 f"an answer at once: {status.value} ({replica.outcome.value})", "no answer"))
        return True

    def _results(self, s: _Broker, e: StepEvent, results: list, out: list) -> None:
        after = e.view
        waiting = [p for p in s.pending.values() if p.replica.status is None and not p.replicated]
        if waiting:
            acks = self._acks(s, e)
            for pending in waiting:
                pending.replicated = transfer_status(pending.replica.request, s.view.push2_slave_max_offset, acks,
                                                     e.time) is TransferOutcome.PUT_OK
        for r in results:
            pending = s.pending.pop(r.msg_id, None)
            where = f"{e.node} at t={e.time}: the answer to {r.msg_id}"
            self.judged["transfer_status"] += 1
            if pending is None:
                out.append(violation("transfer_status", e.node, where, "no answer (no such message awaits one)",
                                     r.status.value))
                continue
            if pending.flush is FlushRequestOutcome.ASYNC_FLUSH:
                flush = {PutMessageStatus.PUT_OK}
            else:
                self.judged["group_commit_status"] += 1
                flush = {group_commit_status(after.flushed, pending.end)}
            replica = self._replica_statuses(s, e, pending)
            allowed = {combine_put_status(f, x) for f in flush for x in replica}
            if r.status in allowed and (r.start, r.end) == (pending.start, pending.end):
                continue
            if r.status not in allowed and r.status in {combine_put_status(f, x) for f in _ANY_FLUSH for x in replica}:
                procedure, why = "group_commit_status", f"flushed to {after.flushed}, the message ends at {pending.end}"
            else:
                procedure, why = "transfer_status", self._why(s, e, pending)
            out.append(violation(procedure, e.node, where,
                                 f"{_show_status(allowed)} at [{pending.start}, {pending.end}) ({why})",
                                 f"{r.status.value} at [{r.start}, {r.end})"))

    def _replica_statuses(self, s: _Broker, e: StepEvent, pending: _Pending) -> set:
        decision = pending.replica
        if decision.status is not None:
            return {decision.status}
        request = decision.request
        allowed = set()
        if pending.replicated:
            allowed.add(PutMessageStatus.PUT_OK)
        if e.time >= request.deadline:
            allowed.add(PutMessageStatus.FLUSH_SLAVE_TIMEOUT)
        return allowed

    def _acks(self, s: _Broker, e: StepEvent) -> list:
        """(where the acked bytes begin, ack) of every connection open in the step."""
        acks = []
        for view in (s.view, e.view):
            for c in view.connections:
                known = s.conns.get(c.conn)
                acks.append((known.view.transfer_from if known else 0, c.slave_ack_offset))
        acks += [(c.view.transfer_from, c.view.slave_ack_offset) for c in s.conns.values()]
        return acks

    def _why(self, s: _Broker, e: StepEvent, pending: _Pending) -> str:
        d = pending.replica
        if d.status is not None:
            return f"submit_replica_request: {d.outcome.value}"
        # each connection once, by name, with the distinct acks the step saw (before, after, hidden state)
        seen: dict[str, list] = {}
        for view in (s.view, e.view):
            for c in view.connections:
                known = s.conns.get(c.conn)
                seen.setdefault(c.conn, []).append((known.view.transfer_from if known else 0, c.slave_ack_offset))
        for conn, c in s.conns.items():
            seen.setdefault(conn, []).append((c.view.transfer_from, c.view.slave_ack_offset))
        acks = "; ".join(f"{conn} " + ", then ".join(f"ack {a} of bytes from {b}" for b, a in dict.fromkeys(pairs))
                         for conn, pairs in seen.items()) or "no connection"
        return f"waiting until t={d.request.deadline} for an ack of {d.request.next_offset}: {acks}"

    # ------------------------------------------------------------------ HAConnection

    def _reports_in(self, s: _Broker, e: StepEvent, m: HAStream, push2: int, out: list) -> int:
        c = s.conns[m.conn]
        self.judged["on_slave_report"] += 1
        for payload in c.stream.receive(m.seq, m.payload, e.time):
            if not isinstance(payload, SlaveReport):
                continue
            d = on_slave_report(c.view, payload.offset, s.view.max_offset, push2, self.profile)
            c.view = attrs.evolve(d.connection, transfer_from=c.view.transfer_from)
            now = next((x for x in e.view.connections if x.conn == m.conn), None)
            where = f"{e.node} at t={e.time}: report {payload.offset} on {m.conn}"
            if d.close:
                if now is not None:
                    out.append(violation("on_slave_report", e.node, where,
                                         f"the connection closes ({d.outcome.value})", "it stays open"))
                return push2
            push2 = d.push2_slave_max_offset
            if now is None:
                out.append(violation("on_slave_report", e.node, where, f"the connection stays open ({d.outcome.value})",
                                     "it closed"))
                return push2
        now = next((x for x in e.view.connections if x.conn == m.conn), None)
        if now is not None and (now.slave_request_offset, now.slave_ack_offset) != (
                c.view.slave_request_offset, c.view.slave_ack_offset):
            out.append(violation("on_slave_report", e.node, f"{e.node} at t={e.time}: reports on {m.conn}",
                                 f"request offset {c.view.slave_request_offset}, ack {c.view.slave_ack_offset}",
                                 f"request offset {now.slave_request_offset}, ack {now.slave_ack_offset}"))
        return push2

    def _rounds(self, s: _Broker, e: StepEvent, sent: dict, out: list) -> None:
        """Every frame sent is a round of write_socket_round over the log after the step
        (or before it: the first transfer offset may be chosen before a write lands)."""
        if not s.conns and not sent:
            return
        after = e.view
        config = self._config(after)
        logs = ((LogView(after.min_offset, after.max_offset), after.data),
                (LogView(s.view.min_offset, s.view.max_offset), s.view.data))
        open_ = {x.conn: x for x in after.connections}
        for conn, c in s.conns.items():
            frames = sent.pop(conn, ())
            now = open_.get(conn)
            if not frames and (now is None or now.next_transfer_from_where == c.where):
                continue
            self.judged["write_socket_round"] += 1
            request = now.slave_request_offset if now is not None else c.view.slave_request_offset
            for frame in frames:
                d = self._round(c, request, logs, e.time, config, frame)
                if d is None:
                    out.append(violation("write_socket_round", e.node,
                                         f"{e.node} at t={e.time}: a frame on {conn}", self._expected_round(
                                             c, request, logs[0][0], e.time, config), _show_frame(frame)))
                    break
            else:
                if now is not None and now.next_transfer_from_where != c.where:
                    if c.where == NO_OFFSET and not frames:  # a first round that had nothing to send
                        d = write_socket_round(WriteView(request, NO_OFFSET, c.last_write), logs[0][0], e.time, config)
                        if d.first_offset is not None and d.next_transfer_from_where == now.next_transfer_from_where:
                            c.where, c.view = d.next_transfer_from_where, attrs.evolve(
                                c.view, transfer_from=d.transfer_from)
                            continue
                    out.append(violation("write_socket_round", e.node, f"{e.node} at t={e.time}: connection {conn}",
                                         f"nextTransferFromWhere {c.where}", f"{now.next_transfer_from_where}"))
                    c.where = now.next_transfer_from_where
                continue
            c.where = now.next_transfer_from_where if now is not None else c.where
        for conn, frames in sent.items():
            self.judged["write_socket_round"] += 1
            out.append(violation("write_socket_round", e.node, f"{e.node} at t={e.time}: a frame on {conn}",
                                 "no frame (no such connection on the master's side)", _show_frame(frames[0])))

    def _round(self, c: _MasterConn, request: int, logs, now: int, config: ClassicConfig, frame) -> Any:
        """The round that sent ``frame`` (None: no round sends it); ``c`` moves past it."""
        for log, data in logs:
            d = write_socket_round(WriteView(request, c.where, c.last_write), log, now, config)
            if frame.header.is_heartbeat:
                ok = d.heartbeat is not None and frame.header == d.heartbeat and not frame.body
            else:
                at = d.read_from - log.min_offset
                ok = d.batch is not None and frame.header == d.batch and \
                    frame.body == data[at:at + d.batch.body_size]
            if ok:
                if d.first_offset is not None:
                    c.view = attrs.evolve(c.view, transfer_from=d.transfer_from)
                c.where = d.heartbeat.master_phy_offset if frame.header.is_heartbeat else d.next_transfer_from_where
                c.last_write = now
                return d
        return None

    def _expected_round(self, c: _MasterConn, request: int, log: LogView, now: int, config: ClassicConfig) -> str:
        d = write_socket_round(WriteView(request, c.where, c.last_write), log, now, config)
        parts = []
        if d.heartbeat is not None:
            parts.append(f"a heartbeat frame ({d.heartbeat.master_phy_offset}, 0)")
        if d.batch is not None:
            parts.append(f"a batch ({d.batch.master_phy_offset}, {d.batch.body_size}) of the log's bytes from "
                         f"{d.read_from}")
        return (" or ".join(parts) or "no frame") + f" ({d.outcome.value})"

    # ------------------------------------------------------------------ HAClient

    def _accept(self, s: _Broker, e: StepEvent, m: HAAccept, resets: set, reports: dict, out: list) -> None:
        before, after = s.view, e.view
        c = s.client
        self.judged["on_connect"] += 1
        if c is None or c.conn != m.conn:
            if m.conn not in resets:
                out.append(violation("on_connect", e.node, f"{e.node} at t={e.time}: HAAccept {m.conn}",
                                     f"HAReset({m.conn}) (not its connection)", "no reset"))
            return
        if before.client is not None and before.client.connected:
            return  # a duplicate
        c.view = on_connect(before.max_offset, e.time, s.last_report_write, self.profile)
        where = f"{e.node} at t={e.time}: HAAccept {m.conn}"
        if after.client is None or after.client.conn != m.conn or not after.client.connected:
            out.append(violation("on_connect", e.node, where, "the slave is connected", "it is not"))
            return
        sent = reports.pop(m.conn, [])
        first = sent[0] if sent else after.client.current_reported_offset
        if first != c.view.current_reported_offset:
            out.append(violation("on_connect", e.node, where, f"currentReportedOffset {c.view.current_reported_offset} "
                                 "(on_connect: the slave's max offset)", f"{first}"))
            c.view = attrs.evolve(c.view, current_reported_offset=first)
            return
        self._client_round(s, e, c, e.time, sent, out)

    def _frames_in(self, s: _Broker, e: StepEvent, m: HAStream, reports: dict, out: list) -> bool:
        c = s.client
        config = self._config(s.view)
        fs = config.mapped_file_size_commit_log
        before, after = s.view, e.view
        sent = reports.pop(c.conn, [])
        reported = bool(sent)
        frames = [x for x in c.stream.receive(m.seq, m.payload, e.time) if isinstance(x, TransferFrame)]
        if not frames:
            return False
        self.judged["on_frame"] += 1
        self.judged["slave_report"] += 1
        min_offset, max_offset, data = before.min_offset, before.max_offset, [before.data]
        wrong_report = None
        for frame in frames:
            c.view = on_read(c.view, e.time)
            d = on_frame(max_offset, frame.header, config)
            where = f"{e.node} at t={e.time}: frame ({frame.header.master_phy_offset}, {frame.header.body_size}) on {c.conn}"
            if d.close:
                if after.client is not None and after.client.conn == c.conn:
                    out.append(violation("on_frame", e.node, where, f"the connection closes ({d.outcome.value}: "
                                         f"the slave is at {max_offset})", "it stays open"))
                break
            if frame.body and fits_last_file(d.append_at, len(frame.body), config):
                if max_offset == min_offset:
                    min_offset = max_offset = d.append_at
                    data = []
                data.append(frame.body)
                max_offset += len(frame.body)
            progress = progress_report(c.view, max_offset)
            if progress.kind is ReportKind.PROGRESS and wrong_report is None:
                if not sent or sent[0] != progress.offset:
                    wrong_report = violation("slave_report", e.node, where, f"a report of {progress.offset} "
                                             "(progress_report: the max offset passed the last report)",
                                             f"a report of {sent[0]}" if sent else "no report")
                    continue
                sent.pop(0)
                c.view = on_report(c.view, progress.offset, e.time)
                s.last_report_write = e.time
        else:
            if wrong_report is None:
                self._client_round(s, e, c, e.time, sent, out)
        logged = _log_is(after, min_offset, max_offset, data)
        if (wrong_report is not None or not logged) and after.client is not None \
                and after.client.conn == c.conn:
            # go on from the node's own reading (a slip is reported once, not at every later step)
            c.view = attrs.evolve(c.view, current_reported_offset=after.client.current_reported_offset,
                                  last_write_ms=e.time if reported else c.view.last_write_ms)
        if not logged:
            span = (after.min_offset, after.max_offset) == (min_offset, max_offset)
            out.append(violation("on_frame", e.node, f"{e.node} at t={e.time}: {len(frames)} frame(s) on {c.conn}",
                                 f"the log [{min_offset}, {max_offset}): its bytes and the frames' bodies",
                                 f"[{after.min_offset}, {after.max_offset})" + ("" if not span else " with other bytes")))
        elif wrong_report is not None:
            out.append(wrong_report)
        return True

    def _client_round(self, s: _Broker, e: StepEvent, c: _Client, at: int, sent: list, out: list) -> None:
        """A round of the HAClient loop at ``at``: a heartbeat report if the interval passed
        (optional: when the loop runs is the implementation's), then nothing else may be sent."""
        config = self._config(s.view)
        for offset in sent:
            self.judged["slave_report"] += 1
            report = periodic_report(c.view, at, config)
            if report.kind is ReportKind.HEARTBEAT and offset == report.offset:
                c.view = on_report(c.view, offset, at)
                s.last_report_write = at
                continue
            progress = progress_report(c.view, e.view.max_offset)
            if progress.kind is ReportKind.PROGRESS and offset == progress.offset:
                c.view = on_report(c.view, offset, at)
                s.last_report_write = at
                continue
            out.append(violation("slave_report", e.node, f"{e.node} at t={e.time}: a report of {offset} on {c.conn}",
                                 f"a heartbeat of {c.view.current_reported_offset} after t="
                                 f"{c.view.last_write_ms + config.ha_send_heartbeat_interval_ms} or a progress "
                                 f"report of {e.view.max_offset} above it", "this report"))
            return
        now = e.view.client
        if now is not None and now.conn == c.conn and now.connected and \
                now.current_reported_offset != c.view.current_reported_offset:
            self.judged["slave_report"] += 1
            out.append(violation("slave_report", e.node, f"{e.node} at t={e.time}: connection {c.conn}",
                                 f"currentReportedOffset {c.view.current_reported_offset} (on_report: the last "
                                 "report, or the max offset at connect)", f"{now.current_reported_offset}"))
            c.view = attrs.evolve(c.view, current_reported_offset=now.current_reported_offset)

    def _tick_reports(self, s: _Broker, e: StepEvent, reports: dict, out: list) -> None:
        c = s.client
        if c is None:
            return
        sent = reports.pop(c.conn, [])
        if c.view is None:
            return
        # a tick's round ran at some instant after the node's previous step: judged at the
        # step's time (lax), stamped at the earliest instant it can have run (lax again)
        if sent:
            self._client_round(s, e, c, e.time, sent, out)
            c.view = attrs.evolve(c.view, last_write_ms=min(c.view.last_write_ms, s.time + 1))
            s.last_report_write = min(s.last_report_write, s.time + 1)
        else:
            self._client_round(s, e, c, e.time, [], out)

    def _forget_closed(self, s: _Broker, e: StepEvent) -> None:
        after = e.view
        if s.conns:
            open_ = {c.conn for c in after.connections}
            for conn in [x for x in s.conns if x not in open_]:
                del s.conns[conn]
        a = after.client
        if a is None:
            s.client = None
        elif s.client is None or s.client.conn != a.conn:  # the slave opened a new connection
            s.client = _Client(a.conn, after.master or "")


def _log_is(view: ClassicView, min_offset: int, max_offset: int, data: list) -> bool:
    """Whether ``view``'s log is ``[min_offset, max_offset)`` holding ``data``'s bytes."""
    return (view.min_offset, view.max_offset) == (min_offset, max_offset) and view.data == b"".join(data)


def _input(e: StepEvent) -> str:
    if e.input != MESSAGE:
        return e.input
    return f"{type(e.payload).__name__} from {e.src}"


def _show_frame(frame) -> str:
    h = frame.header
    return f"a frame ({h.master_phy_offset}, {h.body_size})" + (" (a heartbeat)" if h.is_heartbeat else "")
