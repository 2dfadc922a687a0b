"""A sans-IO broker replica: commitlog, epoch file, and the HA connection (AutoSwitchHA*).

Roles come from outside (``BecomeMaster`` / ``BecomeSlave`` control messages: the
truncation scenario's script, or a controller): this node only replicates. Every
decision is a spec call (``spec/truncation``); this module keeps state and turns
decisions into messages.

* Commitlog: messages ``(offset, size, epoch, id)``; ``flushed`` marks the durable
  prefix. Unacknowledged data is flushed every ``FLUSH_INTERVAL_MS``; a master flushes
  a batch before it sends it, and acknowledged data is flushed before it is acknowledged
  (synchronous flush on acknowledgement), so a crash loses only a tail that no other
  replica holds.
* Durable state (``ReplicaDurable``): the flushed commitlog prefix and the epoch file.
* Slave connection: READY → HANDSHAKE → TRANSFER. READY drops the dirty tail and sends
  the handshake; the master's reply (its max offset and epoch entries) is decided by
  ``slave_handshake``; in TRANSFER the slave reports its max offset, and each batch
  header is checked by ``on_transfer_header`` (an offset mismatch drops the connection).
* Master connection per slave: HANDSHAKE until the slave's first report, then TRANSFER:
  one batch (``next_batch``) in flight per slave, flushed before it is sent
  (``flushed_for_transfer``); the slave's reported offset is its ack.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import attrs

from reference.node_api import Message, Outbox, Ready
from spec.broker.confirm_offset import ConfirmOutcome, compute_master_confirm_offset
from spec.truncation.algebra import REFERENCE, Variant
from spec.truncation.epoch_file import EpochFile
from spec.truncation.messages import (
    BecomeMaster,
    BecomeSlave,
    ClientWrite,
    HandshakeRequest,
    MESSAGE_SIZE,
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

MAX_BATCH_BYTES = 30
FLUSH_INTERVAL_MS = 500
RETRY_MS = 200  # a slave retries a failed handshake or a dropped connection after this long


# ------------------------------------------------------------------ state


Role = ReplicaRole  # (the name this module has always used)


@attrs.frozen(slots=True)
class ReplicaDurable:
    log: tuple[tuple[LogMessage, Any], ...]  # flushed messages with their ids (a str, or a broker's MessageTag)
    epoch_file: EpochFile


class BrokerReplica(Outbox):
    def __init__(self, node_id: str, peers: tuple[str, ...], durable: ReplicaDurable | None = None, now: int = 0,
                 variant: Variant = REFERENCE, confirm=compute_master_confirm_offset):
        self.node_id = node_id
        self.variant = variant  # a known-bad variant of the algorithm (mutants), else the reference
        self.confirm = confirm  # computeConfirmOffset (a replica mutant replaces it)
        self.peers = tuple(p for p in peers if p != node_id)
        durable = durable or ReplicaDurable((), EpochFile())
        self.log: list[LogMessage] = [m for m, _ in durable.log]
        self.ids: list[str] = [i for _, i in durable.log]
        # the log's entries below this index are those a view last read (views built from the
        # log extend what they built rather than build it again: a log only grows or is cut)
        self.unchanged_below = 0
        self.flushed = self.log[-1].end if self.log else 0
        self.epoch_file = durable.epoch_file
        self.role = Role.NONE
        self.epoch = 0
        self.master: str | None = None
        self.slave_state: SlaveState | None = None
        self.retry_at = now
        self.confirm_offset = 0
        self.acks: dict[str, int] = {}
        self.in_flight: dict[str, bool] = {}
        self.pending_acks: dict[str, tuple[int, str]] = {}  # message id -> (offset end, client), awaiting the whole set
        self.last_flush = now
        self.last_handshake: tuple | None = None
        self.coverage: Counter = Counter()
        self.version = 0
        self._out: list[Message] = []
        self._dirty = False
        self._now = now

    # ------------------------------------------------------------------ helpers

    @property
    def max_offset(self) -> int:
        return self.log[-1].end if self.log else 0

    def durable(self) -> ReplicaDurable:
        kept = tuple((m, i) for m, i in zip(self.log, self.ids) if m.end <= self.flushed)
        return ReplicaDurable(kept, self.epoch_file)

    def observe(self) -> ReplicaView:
        return ReplicaView(
            self.node_id, self.role, self.epoch, self.max_offset, self.flushed, self.epoch_file,
            tuple((m.offset, m.epoch, i) for m, i in zip(self.log, self.ids)), self.confirm_offset,
            self.slave_state, tuple(sorted(self.acks.items())), self.last_handshake,
        )

    def summary(self) -> dict:
        return {"role": self.role.value, "epoch": self.epoch, "max": self.max_offset, "flushed": self.flushed,
                "epochs": [[e.epoch, e.start_offset] for e in self.epoch_file.entries],
                "state": self.slave_state.value if self.slave_state else None}

    def _changed(self, persist: bool = False) -> None:
        self.version += 1
        self._dirty = self._dirty or persist

    def _truncate_log(self, offset: int) -> None:
        keep = sum(1 for m in self.log if m.end <= offset)
        del self.log[keep:]
        del self.ids[keep:]
        self.unchanged_below = min(self.unchanged_below, keep)
        self.flushed = min(self.flushed, self.max_offset)

    def _flush(self, upto: int | None = None) -> None:
        target = self.max_offset if upto is None else min(upto, self.max_offset)
        if target > self.flushed:
            self.flushed = target
            self._changed(persist=True)

    # ------------------------------------------------------------------ driver API

    def tick(self, now: int) -> Ready:
        self._now = now
        self._tick_work(now)
        return self._ready()

    def next_deadline(self) -> int:
        """The earliest time at which ``tick`` can do anything: the next periodic flush, or
        a slave connection's retry (every connection state has one)."""
        due = self.last_flush + FLUSH_INTERVAL_MS
        if self.role is Role.SLAVE and self.slave_state is not None and self.retry_at < due:
            due = self.retry_at
        return due

    def _handshake_identity(self) -> dict:
        """Extra handshake fields (controller mode names the slave's broker id)."""
        return {}

    def _tick_work(self, now: int) -> None:
        if now - self.last_flush >= FLUSH_INTERVAL_MS:
            self.last_flush = now
            self._flush()
        if self.role is Role.SLAVE and self.slave_state is SlaveState.READY and now >= self.retry_at:
            # READY: the dirty tail is gone already (restart); connect and hand-shake
            self.slave_state = SlaveState.HANDSHAKE
            self.retry_at = now + RETRY_MS * 5
            self._send(self.master, HandshakeRequest(self.epoch, **self._handshake_identity()))
            self._changed()
        elif self.role is Role.SLAVE and self.slave_state is SlaveState.HANDSHAKE and now >= self.retry_at:
            self.slave_state = SlaveState.READY  # no answer: start over
            self._changed()
        elif self.role is Role.SLAVE and self.slave_state is SlaveState.TRANSFER and now >= self.retry_at:
            self.retry_at = now + RETRY_MS * 5
            self._send(self.master, SlaveReport(self.epoch, self.max_offset))  # keep-alive report

    def step(self, message: Message, now: int) -> Ready:
        self._now = now
        self._step_work(message, now)
        return self._ready()

    def _step_work(self, message: Message, now: int) -> None:
        handler = _HANDLERS.get(type(message.payload))
        if handler is not None:
            getattr(self, handler)(message.src, message.payload, now)  # by name: subclasses may extend

    # ------------------------------------------------------------------ roles

    def _on_become_master(self, src: str, m: BecomeMaster, now: int) -> None:
        change = change_to_master(self.epoch_file, m.epoch, self.max_offset, had_dirty_tail=False,
                                  variant=self.variant)
        self.coverage[("change_to_master", change.outcome.value)] += 1
        if change.outcome is not RoleChangeOutcome.ACCEPTED:
            return
        self.epoch_file = change.epoch_file
        self.role, self.epoch, self.master = Role.MASTER, m.epoch, self.node_id
        self.slave_state = None
        self.acks = {}
        self.in_flight = {}
        self.pending_acks = {}
        self.confirm_offset = min(self.confirm_offset, self.max_offset)
        self._changed(persist=True)

    def _on_become_slave(self, src: str, m: BecomeSlave, now: int) -> None:
        outcome = change_to_slave(self.epoch_file, m.epoch)
        self.coverage[("change_to_slave", outcome.value)] += 1
        if outcome is not RoleChangeOutcome.ACCEPTED:
            return
        self.role, self.epoch, self.master = Role.SLAVE, m.epoch, m.master
        self.slave_state = SlaveState.READY
        self.retry_at = now
        self.acks = {}
        self.pending_acks = {}
        self._changed()

    # ------------------------------------------------------------------ master side

    def _on_client_write(self, src: str, w: ClientWrite, now: int) -> None:
        if self.role is not Role.MASTER:
            self.coverage[("client_write", "NOT_MASTER")] += 1
            return
        self.coverage[("client_write", "APPENDED")] += 1
        msg = LogMessage(self.max_offset, MESSAGE_SIZE, self.epoch)
        self.log.append(msg)
        self.ids.append(w.id)
        self.pending_acks[w.id] = (msg.end, src)
        self._changed()
        for peer in self.peers:
            self._push(peer)
        self._acknowledge()

    def _on_handshake_request(self, src: str, r: HandshakeRequest, now: int) -> None:
        if self.role is not Role.MASTER or r.epoch != self.epoch:
            return
        self.acks.pop(src, None)
        self.in_flight[src] = False
        self._changed()
        self._send(src, HandshakeResponse.of_master(self.epoch, self.max_offset, self.epoch_file))

    def _on_slave_report(self, src: str, r: SlaveReport, now: int) -> None:
        if self.role is not Role.MASTER or r.epoch != self.epoch:
            return
        # the highest offset the slave reported on this connection (a handshake starts it
        # over): its log only grows within one, so a lower report is a late copy, which
        # the network may deliver out of order; taken as the ack, it lowered confirmOffset
        # and let a slave short of acknowledged messages into the SyncStateSet
        self.acks[src] = max(r.max_offset, self.acks.get(src, r.max_offset))
        self.in_flight[src] = False
        self._changed()
        self._acknowledge()
        self._push(src)

    def _push(self, slave: str) -> None:
        if slave not in self.acks or self.in_flight.get(slave):
            return
        header = self._next_batch(self.acks[slave])
        if header is None:
            return
        chosen = [(m, i) for m, i in zip(self.log, self.ids) if header.offset <= m.offset < header.offset + header.size]
        self._flush(self._flushed_for_transfer(header))  # ship only what is flushed
        self.in_flight[slave] = True
        self._send(slave, TransferBatch(self.epoch, header, tuple(m for m, _ in chosen), tuple(i for _, i in chosen)))

    def _slave_handshake(self, master_file: EpochFile, master_max: int):
        return slave_handshake(self.epoch_file, self.max_offset, master_file, master_max, variant=self.variant)

    def _on_transfer_header(self, header):
        return on_transfer_header(self.epoch_file, self.max_offset, header, self.variant)

    def _next_batch(self, from_offset: int):
        return next_batch(self.epoch_file, self.log, from_offset, self.confirm_offset, MAX_BATCH_BYTES, self.variant)

    def _flushed_for_transfer(self, header) -> int:
        return flushed_for_transfer(self.flushed, header, self.variant)

    def _acknowledge(self) -> None:
        """allAckInSyncStateSet over every replica: confirmOffset is the spec's over the
        whole set (it stays put while a replica has not reported); acknowledge what all of
        them hold."""
        decision = self.confirm(self.max_offset, frozenset((self.node_id, *self.peers)),
                                self.node_id, self.acks, self.confirm_offset)
        if decision.outcome is not ConfirmOutcome.COMPUTED:
            return
        everyone = decision.confirm_offset
        if everyone > self.confirm_offset:
            self.confirm_offset = everyone
            self._changed()
        done = [i for i, (end, _) in self.pending_acks.items() if end <= everyone]
        if done:
            self._flush(everyone)  # synchronous flush on acknowledgement
            for i in done:
                _, client = self.pending_acks.pop(i)
                self._send(client, WriteAcknowledged(i))
            self._changed()

    # ------------------------------------------------------------------ slave side

    def _on_handshake_response(self, src: str, r: HandshakeResponse, now: int) -> None:
        # an answer of an earlier epoch belongs to a connection the failover closed (a late
        # copy on the network), as every other message of the HA connection does
        if self.role is not Role.SLAVE or src != self.master or self.slave_state is not SlaveState.HANDSHAKE \
                or r.epoch != self.epoch:
            return
        decision = self._slave_handshake(EpochFile(r.entries), r.max_offset)
        self.coverage[("slave_handshake", decision.outcome.value)] += 1
        self.last_handshake = (src, decision.transfer_from, decision.outcome.value, r.max_offset)
        if decision.outcome is HandshakeOutcome.NO_CONSISTENT_POINT:
            self.slave_state = SlaveState.READY  # retried forever; the scenario reports it
            self.retry_at = now + RETRY_MS
            self._changed()
            return
        if decision.truncate_log_to is not None:
            self._truncate_log(decision.truncate_log_to)
        self.epoch_file = decision.epoch_file
        self.slave_state = SlaveState.TRANSFER
        self.retry_at = now + RETRY_MS * 5
        self._changed(persist=True)
        self._send(src, SlaveReport(self.epoch, self.max_offset))

    def _on_transfer_batch(self, src: str, b: TransferBatch, now: int) -> None:
        if self.role is not Role.SLAVE or src != self.master or b.epoch != self.epoch or \
                self.slave_state is not SlaveState.TRANSFER:
            return
        decision = self._on_transfer_header(b.header)
        self.coverage[("on_transfer_header", decision.outcome.value)] += 1
        if decision.outcome is HeaderOutcome.OFFSET_MISMATCH:
            self.slave_state = SlaveState.READY  # drop the connection
            self.retry_at = now + RETRY_MS
            self._changed()
            return
        self.log.extend(b.messages)
        self.ids.extend(b.ids)
        self.epoch_file = decision.epoch_file
        self.confirm_offset = decision.confirm_offset
        self._flush(flushed_for_report(self.max_offset))  # a slave acknowledges only what it has flushed
        self._changed(persist=True)
        self.retry_at = now + RETRY_MS * 5
        self._send(src, SlaveReport(self.epoch, self.max_offset))


_HANDLERS = {
    BecomeMaster: "_on_become_master",
    BecomeSlave: "_on_become_slave",
    ClientWrite: "_on_client_write",
    HandshakeRequest: "_on_handshake_request",
    HandshakeResponse: "_on_handshake_response",
    SlaveReport: "_on_slave_report",
    TransferBatch: "_on_transfer_batch",
}
