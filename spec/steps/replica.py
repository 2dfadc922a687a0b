"""Step conformance of broker replicas (the truncation scenario's node kind ``replica``).

``ReplicaSteps.check(event)`` judges one step of one replica (``AutoSwitchHAService``'s
role changes, the HA connection's handshake and transfer, a master's writes and their
acknowledgements) against ``spec/truncation`` (``algebra.py`` through ``replication.py``)
and ``spec/broker/confirm_offset.py``, and returns the violations. What it judges:

| procedure | input | what must hold |
|---|---|---|
| ``role_change`` | ``BecomeMaster`` / ``BecomeSlave`` | the role, epoch and epoch file after are ``change_to_master``'s (the epoch recorded at the log's end, epochs from it dropped) or ``change_to_slave``'s; an older epoch is refused and changes nothing; the log is untouched |
| ``handshake`` | ``HandshakeRequest`` at a master, ``HandshakeResponse`` at a slave | a master of the request's epoch answers with its max offset and every epoch entry; a slave hand-shaking with its master truncates its log and epoch file to ``slave_handshake``'s consistent point and reports its max offset, or, with no consistent point, keeps both and starts over |
| ``next_batch`` | any step of a master | each batch starts at the slave's ack, carries the master's own messages of one epoch, is labelled and cut as ``next_batch`` labels and cuts it (its size is free), announces the master's confirm offset, and is flushed on the master by the end of the step that sends it (``flushed_for_transfer``) |
| ``on_transfer_header`` | ``TransferBatch`` at a slave | a batch at the slave's max offset is appended and its epoch recorded as ``on_transfer_header`` says (confirm offset included), and the slave reports it once flushed (``flushed_for_report``); a batch elsewhere drops the connection |
| ``confirm_offset`` | ``ClientWrite``, any step of a master | a master appends a client's write at its end in its epoch (a replica that is not master changes nothing); a write is acknowledged only once ``compute_master_confirm_offset`` over every replica's ack passes it |

Freedoms (docs/step-conformance.md): when a slave hand-shakes after becoming slave or
losing its connection, and when it re-sends its report; how many messages a batch
carries; empty batches (keep-alives); a batch the network delivered twice (below the
slave's max offset) may be ignored instead of dropping the connection; when the master
pushes (one batch in flight or several) and re-sends; when flushes happen, as long as a
master has flushed what it sends and a slave what it reports of a batch.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable

import attrs

from spec.broker.confirm_offset import ConfirmOutcome, compute_master_confirm_offset
from spec.steps import MESSAGE, NodeSteps, StepEvent, violation
from spec.truncation.epoch_file import EpochEntry, EpochFile
from spec.truncation.messages import (
    BecomeMaster,
    BecomeSlave,
    ClientWrite,
    HandshakeRequest,
    HandshakeResponse,
    ReplicaRole,
    ReplicaView,
    SlaveReport,
    SlaveState,
    TransferBatch,
    WriteAcknowledged,
)
from spec.truncation.replication import (
    HandshakeOutcome,
    HeaderOutcome,
    Message as LogMessage,
    RoleChangeOutcome,
    change_to_master,
    change_to_slave,
    flushed_for_report,
    flushed_for_transfer,
    next_batch,
    on_transfer_header,
    slave_handshake,
)

def shipped_unflushed(flushed_before: int, flushed_after: int, header, rule=flushed_for_transfer) -> str | None:
    """What a master that sent ``header``'s batch must have flushed by the end of the step,
    if it has not (None: it has, or the batch is a keep-alive). ``rule``: the spec's
    ``flushed_for_transfer`` (a broker's ``BrokerRules`` field)."""
    need = rule(flushed_before, header)
    if not header.size or flushed_after >= need:
        return None
    return (f"flushed to {need} at least by the end of the step that sends it (a master ships only what it has "
            f"flushed; upstream's ASYNC_FLUSH does not: ships-unflushed)")


def misbatched(b: TransferBatch, epoch: int, epoch_file: EpochFile, messages: Iterable[LogMessage], acks: set,
               confirms: set, held: list, shipped: list) -> str | None:
    """What a master of ``epoch`` should have sent instead of batch ``b`` (None: ``b`` is a
    batch ``next_batch`` allows). ``acks``: the slave's ack before and after the step (the
    batch starts there); ``confirms``: the master's confirm offset before and after (the
    batch announces one); ``messages``: the master's log from the batch's offset on, as
    the spec's messages; ``held`` and ``shipped``: the master's messages in the batch's range
    and the batch's own, in one projection the caller picks (replicas and controller-mode
    brokers keep different records of a message)."""
    h = b.header
    if b.epoch != epoch or h.offset not in acks or h.confirm_offset not in confirms:
        return (f"a batch in epoch {epoch} from the slave's ack "
                f"({' or '.join(str(a) for a in sorted(x for x in acks if x is not None)) or 'none: no report yet'}), "
                f"confirm offset {' or '.join(map(str, sorted(confirms)))}")
    if not (b.messages or h.size):
        return None  # a keep-alive
    want = next_batch(epoch_file, messages, h.offset, h.confirm_offset, max(h.size, 1))
    if want == h and held == shipped:
        return None
    if want is None:
        return "nothing (next_batch: no message there)"
    return (f"a batch at {want.offset} labelled {want.epoch}@{want.epoch_start_offset}, whole messages of "
            f"one epoch ({want.size} bytes at most {h.size}), confirm offset {h.confirm_offset}, the master's own")


def misshaken(epoch: int, before_file: EpochFile, before_max: int, r: HandshakeResponse, after_file: EpochFile,
              after_max: int, log_cut_to: Callable[[int | None], bool], transfer: bool | None,
              reports: list) -> str | None:
    """What a slave hand-shaking in ``epoch`` should have done on its master's answer ``r``
    (None: what ``slave_handshake`` says). ``log_cut_to(cut)``: whether its log after is
    its log before cut at ``cut`` (None: untouched), in the caller's records of a message;
    ``transfer``: whether it moved on to the transfer (None: not observable, the report
    shows it, and ignoring the answer altogether is allowed: the slave may have given the
    handshake up on its own timer, which no view shows); ``reports``: the reports it sent
    its master in the step."""
    if transfer is None and not reports and log_cut_to(None) and after_file.entries == before_file.entries:
        return None
    d = slave_handshake(before_file, before_max, EpochFile(r.entries), r.max_offset)
    if d.outcome is HandshakeOutcome.NO_CONSISTENT_POINT:
        ok = log_cut_to(None) and after_file.entries == before_file.entries and not transfer and not reports
        return None if ok else f"no consistent point: log and epochs kept ({_entries(before_file)}), no transfer"
    cut = d.truncate_log_to if d.truncate_log_to is not None else before_max
    # the file is cut at the point too (truncate_suffix_by_offset, as upstream's doTruncate):
    # an entry kept past it would later make the slave refuse the epoch its master ships
    # from there and file the copied messages under the stale epoch
    ok = log_cut_to(cut) and after_file.entries == d.epoch_file.entries \
        and transfer is not False and reports == [SlaveReport(epoch, after_max)]
    return None if ok else (f"{d.outcome.value}: the log cut at {cut}, epochs {_entries(d.epoch_file)}, TRANSFER, "
                            f"a report of {cut}")


def misapplied(epoch: int, before_file: EpochFile, before_max: int, before_confirm: int, b: TransferBatch,
               after_file: EpochFile, after_max: int, after_confirm: int, appended: Callable[[bool], bool],
               transfer: bool | None, reports: list, after_flushed: int) -> tuple[bool, str | None]:
    """Whether a slave in the transfer of ``epoch`` dropped the connection on its master's
    batch ``b`` (OFFSET_MISMATCH), and what it should have done instead (None: what
    ``on_transfer_header`` says). ``appended(True)``: whether its log after is its log
    before with the batch's messages; ``appended(False)``: whether it is untouched.
    ``transfer``: whether it is still in the transfer (None: not observable; then a batch
    left alone, nothing appended or reported, counts as dropped: the slave may have dropped
    the connection on its own timer, which no view shows). ``after_flushed``: how far it
    has flushed by the end of the step (it reports only what it has flushed:
    ``flushed_for_report``)."""
    h = b.header
    unchanged = appended(False) and after_file.entries == before_file.entries
    if (not b.messages or h.offset < before_max) and unchanged:
        return False, None  # a keep-alive, or a batch delivered twice: ignoring it is allowed
    if transfer is None and unchanged and not reports:
        return True, None
    d = on_transfer_header(before_file, before_max, h)
    if d.outcome is HeaderOutcome.OFFSET_MISMATCH:
        ok = unchanged and not transfer
        return True, None if ok else (f"OFFSET_MISMATCH (the slave is at {before_max}): the connection dropped, "
                                      f"nothing appended")
    files = {d.epoch_file.entries}
    if d.outcome is HeaderOutcome.APPEND_AND_RECORD_EPOCH:
        files |= {_replacing(before_file.entries, h.epoch, at)
                  for at in (h.epoch_start_offset, max(h.epoch_start_offset, before_max))}
    ok = appended(True) and after_file.entries in files \
        and after_confirm in (d.confirm_offset, max(d.confirm_offset, before_confirm)) \
        and reports == [SlaveReport(epoch, after_max)] and after_flushed >= flushed_for_report(after_max)
    return False, None if ok else (f"{d.outcome.value}: the batch appended at {h.offset}, epochs "
                                   f"{_entries(d.epoch_file)}, confirm offset {d.confirm_offset}, a report of "
                                   f"{h.offset + h.size} once flushed to {flushed_for_report(h.offset + h.size)} "
                                   f"(a slave reports only what it has flushed; upstream's ASYNC_FLUSH slave "
                                   f"reports its page cache)")


PROCEDURES: dict[str, str] = {
    "role_change": "a replica becomes master or slave as change_to_master / change_to_slave say",
    "handshake": "a master answers a handshake with its log's end and epochs; a slave truncates to slave_handshake's point",
    "next_batch": "a master sends whole messages of one epoch from the slave's ack, labelled as next_batch labels them",
    "on_transfer_header": "a slave appends a batch at its end and records its epoch as on_transfer_header says",
    "confirm_offset": "a master appends writes in its epoch and acknowledges only what every replica holds",
}
PROPERTIES = tuple("step-conformance:" + p for p in PROCEDURES)


@attrs.define(slots=True)
class _Replica:
    view: ReplicaView
    master: str | None = None  # whom it was told to follow (BecomeSlave)
    pending: dict = attrs.Factory(dict)  # a master's writes awaiting acknowledgement: id -> end offset


def _entries(f: EpochFile) -> str:
    return f.render()


def _replacing(entries: tuple, epoch: int, start: int) -> tuple:
    """``entries`` with (epoch, start) recorded by replacing the entries from ``start`` on
    (epochs during which nothing was written) instead of refusing it: a freedom."""
    return tuple(x for x in entries if x.start_offset < start) + (EpochEntry(epoch, start),)


def _messages(view: ReplicaView) -> list[LogMessage]:
    """The log as the spec's messages (a message's size: up to the next one, or the log's end)."""
    log = view.log
    ends = [o for o, _, _ in log[1:]] + [view.max_offset]
    return [LogMessage(o, end - o, epoch) for (o, epoch, _), end in zip(log, ends)]


class ReplicaSteps(NodeSteps):
    """Judges every step of the replicas of one set (``peers``: every replica's id)."""

    def __init__(self, peers: Iterable[str]):
        super().__init__()
        self.peers = frozenset(peers)
        self.judged: Counter = Counter()

    def start(self, e: StepEvent) -> _Replica:
        return _Replica(e.view)

    def judge(self, s: _Replica, e: StepEvent, out: list) -> None:
        self._judge(s, e, out)
        s.view = e.view

    # ------------------------------------------------------------------ one step

    def _judge(self, s: _Replica, e: StepEvent, out: list) -> None:
        before, after, p = s.view, e.view, e.payload
        sent = [(m.dst, m.payload) for m in e.outputs]
        where = f"{e.node} at t={e.time}: " + (f"{type(p).__name__} from {e.src}" if e.input == MESSAGE else e.input)
        handled = False  # whether this input may change the log or the epoch file
        if e.input == MESSAGE:
            if isinstance(p, BecomeMaster):
                handled = True
                self._become_master(s, e, p, where, out)
            elif isinstance(p, BecomeSlave):
                handled = True
                self._become_slave(s, e, p, where, out)
            elif isinstance(p, HandshakeRequest):
                self._handshake_request(s, e, p, sent, where, out)
            elif isinstance(p, HandshakeResponse):
                handled = self._handshake_response(s, e, p, sent, where, out)
            elif isinstance(p, TransferBatch):
                handled = self._batch(s, e, p, sent, where, out)
            elif isinstance(p, ClientWrite):
                handled = self._write(s, e, p, where, out)
        if not handled and (after.log != before.log or after.epoch_file.entries != before.epoch_file.entries):
            # a write changes nothing at a replica that is not master (confirm_offset's rule)
            procedure = "confirm_offset" if before.role is ReplicaRole.MASTER or \
                (e.input == MESSAGE and isinstance(p, ClientWrite)) else "on_transfer_header"
            self.judged[procedure] += 1
            out.append(violation(procedure, e.node, where,
                                 f"its log and epoch file unchanged ({_entries(before.epoch_file)}, max {before.max_offset})",
                                 f"{_entries(after.epoch_file)}, max {after.max_offset}"))
        if after.role is ReplicaRole.MASTER:
            self._batches_sent(s, e, sent, where, out)
            self._acks_sent(s, e, sent, where, out)
        else:
            s.pending.clear()

    # ------------------------------------------------------------------ roles

    def _become_master(self, s: _Replica, e: StepEvent, m: BecomeMaster, where: str, out: list) -> None:
        before, after = s.view, e.view
        self.judged["role_change"] += 1
        d = change_to_master(before.epoch_file, m.epoch, before.max_offset)
        s.pending.clear()
        if d.outcome is RoleChangeOutcome.ACCEPTED:
            s.master = None
            expected = (ReplicaRole.MASTER, m.epoch, d.epoch_file.entries, before.log)
            files = {d.epoch_file.entries}
            if m.epoch > before.epoch_file.last_epoch:
                files.add(_replacing(before.epoch_file.entries, m.epoch, before.max_offset))
        else:
            expected = (before.role, before.epoch, before.epoch_file.entries, before.log)
            files = {before.epoch_file.entries}
        observed = (after.role, after.epoch, after.log)
        if observed != (expected[0], expected[1], expected[3]) or after.epoch_file.entries not in files:
            out.append(violation("role_change", e.node, where + f" (epoch {m.epoch})",
                                 f"{expected[0].value} of epoch {expected[1]}, epochs {_entries(EpochFile(expected[2]))}, "
                                 f"max {before.max_offset} (change_to_master: {d.outcome.value})",
                                 f"{after.role.value} of epoch {after.epoch}, epochs {_entries(after.epoch_file)}, "
                                 f"max {after.max_offset}"))

    def _become_slave(self, s: _Replica, e: StepEvent, m: BecomeSlave, where: str, out: list) -> None:
        before, after = s.view, e.view
        self.judged["role_change"] += 1
        outcome = change_to_slave(before.epoch_file, m.epoch)
        s.pending.clear()
        if outcome is RoleChangeOutcome.ACCEPTED:
            s.master = m.master
            expected = (ReplicaRole.SLAVE, m.epoch, before.epoch_file.entries, before.log)
            ok = after.slave_state in (SlaveState.READY, SlaveState.HANDSHAKE)  # (hand-shaking at once is free)
        else:
            expected = (before.role, before.epoch, before.epoch_file.entries, before.log)
            ok = True
        observed = (after.role, after.epoch, after.epoch_file.entries, after.log)
        if observed != expected or not ok:
            out.append(violation("role_change", e.node, where + f" (master {m.master}, epoch {m.epoch})",
                                 f"{expected[0].value} of epoch {expected[1]}, epochs {_entries(before.epoch_file)}, "
                                 f"log untouched, about to hand-shake (change_to_slave: {outcome.value})",
                                 f"{after.role.value} of epoch {after.epoch}, epochs {_entries(after.epoch_file)}, "
                                 f"max {after.max_offset}, state {after.slave_state}"))

    # ------------------------------------------------------------------ the handshake

    def _handshake_request(self, s: _Replica, e: StepEvent, r: HandshakeRequest, sent: list, where: str,
                           out: list) -> None:
        before = s.view
        answers = [x for d, x in sent if d == e.src and isinstance(x, HandshakeResponse)]
        if before.role is not ReplicaRole.MASTER or r.epoch != before.epoch:
            if answers:
                self.judged["handshake"] += 1
                out.append(violation("handshake", e.node, where, "no answer (not the master of that epoch)",
                                     "a HandshakeResponse"))
            return
        self.judged["handshake"] += 1
        expected = HandshakeResponse.of_master(before.epoch, before.max_offset, before.epoch_file)
        if answers != [expected]:
            out.append(violation("handshake", e.node, where,
                                 f"HandshakeResponse(epoch {before.epoch}, max {before.max_offset}, "
                                 f"{_entries(before.epoch_file)})",
                                 ", ".join(f"HandshakeResponse(epoch {a.epoch}, max {a.max_offset}, "
                                           f"{_entries(EpochFile(a.entries))})" for a in answers) or "no answer"))

    def _handshake_response(self, s: _Replica, e: StepEvent, r: HandshakeResponse, sent: list, where: str,
                            out: list) -> bool:
        before, after = s.view, e.view
        if before.role is not ReplicaRole.SLAVE or e.src != s.master or before.slave_state is not SlaveState.HANDSHAKE \
                or r.epoch != before.epoch:
            return False
        self.judged["handshake"] += 1
        reports = [x for dst, x in sent if dst == e.src and isinstance(x, SlaveReport)]

        def log_cut_to(cut):
            if cut is None:
                return after.log == before.log
            return after.log == tuple(x for x, m in zip(before.log, _messages(before)) if m.end <= cut)

        expected = misshaken(before.epoch, before.epoch_file, before.max_offset, r, after.epoch_file, after.max_offset,
                             log_cut_to, after.slave_state is SlaveState.TRANSFER, reports)
        if expected is not None:
            out.append(violation("handshake", e.node, where + f" (master max {r.max_offset}, {_entries(EpochFile(r.entries))})",
                                 expected, f"max {after.max_offset}, epochs {_entries(after.epoch_file)}, "
                                 f"{after.slave_state.value if after.slave_state else None}, "
                                 f"reports {[x.max_offset for x in reports]}"))
        return True

    # ------------------------------------------------------------------ transfer

    def _batch(self, s: _Replica, e: StepEvent, b: TransferBatch, sent: list, where: str, out: list) -> bool:
        before, after = s.view, e.view
        if before.role is not ReplicaRole.SLAVE or e.src != s.master or b.epoch != before.epoch \
                or before.slave_state is not SlaveState.TRANSFER:
            return False
        self.judged["on_transfer_header"] += 1
        h = b.header
        reports = [x for dst, x in sent if dst == e.src and isinstance(x, SlaveReport)]

        def appended(with_batch: bool) -> bool:
            if not with_batch:
                return after.log == before.log
            return after.log == before.log + tuple((m.offset, m.epoch, i) for m, i in zip(b.messages, b.ids))

        _, expected = misapplied(before.epoch, before.epoch_file, before.max_offset, before.confirm_offset, b,
                                 after.epoch_file, after.max_offset, after.confirm_offset, appended,
                                 after.slave_state is SlaveState.TRANSFER, reports, after.flushed)
        if expected is not None:
            out.append(violation("on_transfer_header", e.node,
                                 where + f" (header at {h.offset}, epoch {h.epoch}@{h.epoch_start_offset}, {h.size} bytes)",
                                 expected, f"max {after.max_offset}, epochs {_entries(after.epoch_file)}, confirm offset "
                                 f"{after.confirm_offset}, {after.slave_state.value if after.slave_state else None}, "
                                 f"reports {[x.max_offset for x in reports]}, flushed {after.flushed}"))
        return True

    def _batches_sent(self, s: _Replica, e: StepEvent, sent: list, where: str, out: list) -> None:
        before, after = s.view, e.view
        batches = [(dst, x) for dst, x in sent if isinstance(x, TransferBatch)]
        if not batches:
            return
        acks = (dict(before.acks), dict(after.acks))
        messages = _messages(after)
        for dst, b in batches:
            self.judged["next_batch"] += 1
            h = b.header
            held = [(o, ep, i) for o, ep, i in after.log if h.offset <= o < h.offset + h.size]
            shipped = [(m.offset, m.epoch, i) for m, i in zip(b.messages, b.ids)]
            expected = misbatched(b, after.epoch, after.epoch_file, messages, {a.get(dst) for a in acks},
                                  {before.confirm_offset, after.confirm_offset}, held, shipped)
            if expected is not None:
                out.append(violation("next_batch", e.node, where + f": a batch to {dst}", expected,
                                     f"epoch {b.epoch}, header at {h.offset} labelled {h.epoch}@{h.epoch_start_offset}, "
                                     f"{h.size} bytes, {len(b.messages)} message(s), confirm offset {h.confirm_offset}"))
            elif (short := shipped_unflushed(before.flushed, after.flushed, h)) is not None:
                out.append(violation("next_batch", e.node, where + f": a batch to {dst}", short,
                                     f"flushed to {after.flushed}, the batch [{h.offset}, {h.offset + h.size})"))

    # ------------------------------------------------------------------ writes and acknowledgements

    def _write(self, s: _Replica, e: StepEvent, w: ClientWrite, where: str, out: list) -> bool:
        before, after = s.view, e.view
        self.judged["confirm_offset"] += 1
        if before.role is not ReplicaRole.MASTER:
            return False
        appended = before.log + ((before.max_offset, before.epoch, w.id),)
        if after.log != appended or after.max_offset <= before.max_offset or \
                after.epoch_file.entries != before.epoch_file.entries:
            out.append(violation("confirm_offset", e.node, where + f" ({w.id})",
                                 f"{w.id} appended at {before.max_offset} in epoch {before.epoch}, epochs unchanged",
                                 f"max {after.max_offset}, last message {after.log[-1] if after.log else None}, "
                                 f"epochs {_entries(after.epoch_file)}"))
        else:
            s.pending[w.id] = after.max_offset
        return True

    def _acks_sent(self, s: _Replica, e: StepEvent, sent: list, where: str, out: list) -> None:
        acked = [x for dst, x in sent if isinstance(x, WriteAcknowledged)]
        if not acked:
            return
        before, after = s.view, e.view
        d = compute_master_confirm_offset(after.max_offset, self.peers, e.node, dict(after.acks), before.confirm_offset)
        bound = d.confirm_offset if d.outcome is ConfirmOutcome.COMPUTED else before.confirm_offset
        for a in acked:
            self.judged["confirm_offset"] += 1
            end = s.pending.pop(a.id, None)
            if end is None or end > bound:
                out.append(violation("confirm_offset", e.node, where + f": {a.id} acknowledged",
                                     "no acknowledgement " + (f"before every replica holds {end} (confirm offset "
                                                              f"{bound}: {d.outcome.value}, acks {dict(after.acks)})"
                                                              if end is not None else "(no such write awaits one)"),
                                     "WriteAcknowledged"))
