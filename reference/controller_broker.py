"""A sans-IO broker in controller mode: the broker replica (commitlog, epoch file, HA
connections from ``reference/broker_replica.py``) driven by a controller group.

What this layer adds, each decision a spec call (``spec/broker``, through a
``BrokerRules`` bundle so a mutant is one replaced field):

* registration (``spec.broker.register``): getNextBrokerId, the temp metadata file,
  applyBrokerId, the metadata file, registerBroker; the files are durable, a restart
  resumes from the furthest step;
* role: the register reply, the broker's own electMaster, the controller's
  NOTIFY_BROKER_ROLE_CHANGED and the 5-second getReplicaInfo poll
  (``spec.broker.role``); a restarted broker is fenced until its role is confirmed;
* heartbeats to every controller each second (epoch = last epoch of the epoch file);
* on the master: the SyncStateSet (``local``/``proposed``, shrink every 5 s, expand on
  acks, alterSyncStateSet applied only when the controller accepts it), confirmOffset,
  write admission and acknowledgement (``allAckInSyncStateSet`` or ``inSyncReplicas``);
* on every broker: the consume queue bound (dispatch up to confirmOffset) and queue
  offsets (``spec.broker.consume``).

Calls go to the controller the broker believes active; CONTROLLER_NOT_LEADER or no
answer within ``CALL_TIMEOUT_MS`` moves on to the next controller (at once). A
registration step the controller refuses is tried again after
``spec.broker.register.retry_pause_ms``, as upstream's ``startBasicService`` pauses.
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import attrs

from reference.broker_replica import (
    BecomeMaster,
    BecomeSlave,
    MAX_BATCH_BYTES,
    BrokerReplica,
    HandshakeRequest,
    ReplicaDurable,
    Role as ReplicaRole,
    SlaveReport,
)
from reference.controller_node import ControllerAnswer, ControllerCall, NotifyBrokerRoleChanged
from spec.broker.messages import BrokerNodeView, MessageTag, Produce, ProduceResult
from reference.node_api import Message, Ready
from spec.broker import register as reg
from spec.broker.confirm_offset import ConfirmOutcome
from spec.broker.records import BrokerRoleState, LogEntry, MasterSyncStateSet, PutMessageStatus, Role, SlaveConnection
from spec.broker.role import PollOutcome, RoleDecision, RoleOutcome
from spec.broker.rules import DEFAULT_BROKER_RULES, BrokerRules
from spec.broker.sync_state_set import ExpandOutcome, record_caught_up_time
from spec.broker.write import ReplicationOutcome
from spec.controller.heartbeat import HEARTBEAT_INTERVAL_MS, BrokerHeartbeat
from spec.controller.records import (
    AlterSyncStateSetRequest,
    AlterSyncStateSetResponse,
    ApplyBrokerIdResponse,
    ElectMasterRequest,
    ElectMasterResponse,
    GetNextBrokerIdResponse,
    GetReplicaInfoRequest,
    GetReplicaInfoResponse,
    RESPONSE_TYPE_OF,
    RegisterBrokerResponse,
    ResponseCode,
)
from spec.truncation.epoch_file import find_entry_by_epoch
from spec.truncation.replication import Message as LogMessage

# One entry object for a message however many brokers hold it: their views' logs then compare
# by identity, in C (the abstraction relates every broker's log to the master's whenever one
# changes). A cache of values, bounded: an entry built again is equal, only slower to compare.
log_entry = functools.lru_cache(maxsize=1 << 16)(LogEntry)

CALL_TIMEOUT_MS = 3_000
WRITE_TIMEOUT_MS = 3_000  # syncFlushTimeout: a write not acknowledged by then is FLUSH_SLAVE_TIMEOUT


@attrs.frozen(slots=True)
class BrokerSetup:
    """Static configuration of one broker of the set."""

    cluster_name: str
    broker_name: str
    controllers: tuple[str, ...]
    rules: BrokerRules = DEFAULT_BROKER_RULES
    async_learner: bool = False
    election_priority: int = 2**31 - 1


@attrs.frozen(slots=True)
class BrokerDurable:
    replica: ReplicaDurable
    registration: reg.BrokerRegistrationState
    role: BrokerRoleState  # persisted; a correct restart keeps only the id (spec.broker.role.on_restart)
    confirm_offset: int  # the checkpoint's confirmOffset


class ControllerModeBroker(BrokerReplica):
    def __init__(self, node_id: str, peers: tuple[str, ...], setup: BrokerSetup, durable: BrokerDurable | None = None,
                 now: int = 0):
        super().__init__(node_id, peers, durable.replica if durable else None, now)
        self._entries: list[LogEntry] = []  # log_entries' last answer
        self.setup = setup
        self.rules = setup.rules
        if durable is None:
            self.registration = reg.BrokerRegistrationState(setup.cluster_name, setup.broker_name, node_id)
            self.role_state = BrokerRoleState(broker_id=None)
        else:
            self.registration = reg.on_restart(durable.registration)
            self.role_state = self.rules.on_restart(durable.role)
            self.confirm_offset = min(durable.confirm_offset, self.max_offset)
        self.restarted = durable is not None
        self._view: tuple | None = None
        self.sync_state: Optional[MasterSyncStateSet] = None
        self.caught_up: dict[int, int] = {}
        self.connections: dict[str, SlaveConnection] = {}
        # (tag, end, need, deadline, producer): writes waiting for their acks
        self.pending_writes: list[tuple[MessageTag, int, int, int, str]] = []
        self.calls: dict[int, tuple[Any, int]] = {}  # call_id -> (request, sent at)
        self._call_ids = 0
        self.controller_index = 0
        self.next_heartbeat = now
        self.next_poll = now + self.rules.config.sync_broker_metadata_period_ms
        self.next_shrink = now + self.rules.config.check_sync_state_set_period_ms
        self.next_register_try = now
        self.register_failures = 0  # refused registration tries in a row (reg.retry_pause_ms)
        entries = self.log_entries()
        self.dispatch = self.rules.recovered_dispatch_end(self.confirm_offset, self.max_offset)
        self.next_queue_offsets = self.rules.next_queue_offsets_after_recovery(entries, self.confirm_offset)
        if self.role_state.writable and durable is not None:
            # Only a broker that does not wait for the controller (the #6508 mutant) starts as
            # a master; its SyncStateSet is itself, as no controller has named one.
            self._start_master(self.role_state.master_epoch, None, now)

    # ------------------------------------------------------------------ views

    def log_entries(self) -> tuple[LogEntry, ...]:
        """The commitlog as entries: those of the last call kept up to where the log was cut
        since, the rest built (a view is rebuilt on every change; building the whole log each
        time cost a long run more per step the longer its log grew)."""
        kept = min(len(self._entries), self.unchanged_below)
        del self._entries[kept:]
        self._entries += [log_entry(t.msg_id, m.offset, m.end, t.queue, t.queue_offset)
                          for m, t in zip(self.log[kept:], self.ids[kept:])]
        self.unchanged_below = len(self.log)
        return tuple(self._entries)

    def visible(self) -> tuple[LogEntry, ...]:
        """What a consumer reading from this broker sees (its consume queue)."""
        return self.observe().visible()

    def observe(self) -> BrokerNodeView:
        """The monitor's view; rebuilt only when something it shows has changed."""
        key = (self.version, self.dispatch, self.role_state, self.sync_state, self.confirm_offset, self.flushed)
        if self._view is None or self._view[0] != key:
            self._view = (key, BrokerNodeView(
                self.node_id, self.role_state, self.sync_state, self.max_offset, self.flushed, self.confirm_offset,
                self.dispatch, self.epoch_file, self.log_entries()))
        return self._view[1]

    @property
    def broker_id(self) -> Optional[int]:
        return self.role_state.broker_id

    def summary(self) -> dict:
        s = super().summary()
        s.update(
            id=self.broker_id,
            reg=self.registration.state.value,
            broker_role=self.role_state.role.value,
            master_epoch=self.role_state.master_epoch,
            fenced=self.role_state.fenced,
            confirm=self.confirm_offset,
            sss=None if self.sync_state is None else [sorted(self.sync_state.local), self.sync_state.local_epoch,
                                                     None if self.sync_state.proposed is None else sorted(self.sync_state.proposed)],
        )
        return s

    def durable(self) -> BrokerDurable:
        return BrokerDurable(super().durable(), self.registration, self.role_state, self.confirm_offset)

    def crash(self) -> BrokerDurable:
        return self.durable()

    # ------------------------------------------------------------------ driver API

    def tick(self, now: int) -> Ready:
        self._now = now
        self._tick_work(now)  # flushes, slave connection upkeep
        self._expire_calls(now)
        if now >= self.next_heartbeat:
            self.next_heartbeat = now + HEARTBEAT_INTERVAL_MS
            self._heartbeat()
        if self.registration.state is not reg.RegisterState.REGISTERED and now >= self.next_register_try:
            self.next_register_try = now + CALL_TIMEOUT_MS
            self._register_step(now)
        if self.role_state.registered and now >= self.next_poll:
            self.next_poll = now + self.rules.config.sync_broker_metadata_period_ms
            self._call(GetReplicaInfoRequest(self.setup.broker_name), now)
        if self._is_master() and now >= self.next_shrink:
            self.next_shrink = now + self.rules.config.check_sync_state_set_period_ms
            decision = self.rules.shrink(self.sync_state.local, self.broker_id, self.caught_up, now)
            self.coverage[("maybe_shrink", "SHRINK" if decision.changed else "KEEP")] += 1
            if decision.changed:
                self._propose(decision.new_set, now)
        self._settle_writes(now)
        return self._ready()

    def next_deadline(self) -> int:
        """The earliest time at which ``tick`` can do anything: the replica's timers, a
        controller call timing out, the next heartbeat, registration try, metadata poll or
        SyncStateSet check, a waiting write's timeout (at once when no longer master)."""
        due = min(super().next_deadline(), self.next_heartbeat)
        for _, sent in self.calls.values():
            due = min(due, sent + CALL_TIMEOUT_MS)
        if self.registration.state is not reg.RegisterState.REGISTERED:
            due = min(due, self.next_register_try)
        if self.role_state.registered:
            due = min(due, self.next_poll)
        master = self._is_master()
        if master:
            due = min(due, self.next_shrink)
        if self.pending_writes:
            due = min(due, min(w[3] for w in self.pending_writes) if master else self._now)
        return due

    def step(self, message: Message, now: int) -> Ready:
        self._now = now
        handler = _BROKER_HANDLERS.get(type(message.payload))
        if handler is not None:
            handler(self, message.src, message.payload, now)
        else:
            self._step_work(message, now)  # HA traffic
        self._settle_writes(now)
        return self._ready()

    # ------------------------------------------------------------------ controller calls

    def _controller(self) -> str:
        return self.setup.controllers[self.controller_index % len(self.setup.controllers)]

    def _call(self, request: Any, now: int) -> None:
        # One call of a kind at a time: a newer one replaces an unanswered older one.
        for cid, (pending, _) in list(self.calls.items()):
            if type(pending) is type(request):
                del self.calls[cid]
        self._call_ids += 1
        self.calls[self._call_ids] = (request, now)
        self._send(self._controller(), ControllerCall(self._call_ids, request))

    def _expire_calls(self, now: int) -> None:
        for cid, (request, sent) in list(self.calls.items()):
            if now - sent >= CALL_TIMEOUT_MS:
                del self.calls[cid]
                self.controller_index += 1

    def _on_answer(self, src: str, answer: ControllerAnswer, now: int) -> None:
        entry = self.calls.get(answer.call_id)
        response = answer.response
        # upstream decodes a reply by its own call's response header, so an answer of
        # another kind cannot be taken for it: the call stays open (and times out)
        if entry is None or type(response) is not RESPONSE_TYPE_OF.get(type(entry[0])):
            return
        del self.calls[answer.call_id]
        if response.code == ResponseCode.CONTROLLER_NOT_LEADER:
            self.controller_index += 1
            self.next_register_try = now  # try the next controller at the next tick
            return
        if isinstance(response, (GetNextBrokerIdResponse, ApplyBrokerIdResponse, RegisterBrokerResponse)):
            self._on_register_answer(response, now)
        elif isinstance(response, ElectMasterResponse):
            self._apply_role(self.rules.on_elect_reply(self.role_state, response), now, "elect_reply")
        elif isinstance(response, GetReplicaInfoResponse):
            self._on_replica_info(response, now)
        elif isinstance(response, AlterSyncStateSetResponse):
            self._on_alter_answer(response, now)

    def _heartbeat(self) -> None:
        if self.broker_id is None:
            return
        last = self.epoch_file.last_entry
        beat = BrokerHeartbeat(
            self.setup.cluster_name, self.setup.broker_name, self.node_id, self.broker_id,
            epoch=last.epoch if last is not None else -1, max_offset=self.max_offset,
            confirm_offset=self.confirm_offset, election_priority=self.setup.election_priority,
        )
        for c in self.setup.controllers:
            self._send(c, beat)

    # ------------------------------------------------------------------ registration

    def _register_step(self, now: int) -> None:
        request = reg.next_request(self.registration)
        if request is not None:
            self._call(request, now)

    def _on_register_answer(self, response, now: int) -> None:
        try:
            before = self.registration
            self.registration = reg.on_reply(self.registration, response, now)
        except ValueError:
            return  # an answer to a step this broker has already left
        self.coverage[("register", f"{before.state.value}->{self.registration.state.value}")] += 1
        self._changed(persist=True)
        if response.code == ResponseCode.SUCCESS:
            self.register_failures = 0
        if self.registration.broker_id is not None and self.role_state.broker_id is None:
            self.role_state = attrs.evolve(self.role_state, broker_id=self.registration.broker_id)
        if isinstance(response, RegisterBrokerResponse) and response.code == ResponseCode.SUCCESS:
            decision = self.rules.on_register_reply(self.role_state, response)
            self._apply_role(decision, now, "register_reply")
            if decision.outcome is RoleOutcome.NO_MASTER:
                self._call(ElectMasterRequest.of_broker_trigger(self.setup.cluster_name, self.setup.broker_name,
                                                                self.broker_id), now)
        elif response.code == ResponseCode.SUCCESS:
            self.next_register_try = now  # next step at the next tick
        else:
            self._register_failed(now)

    def _register_failed(self, now: int) -> None:
        """The controller refused a registration step: the next try after a pause, not at
        once (a broker the controller keeps refusing would otherwise ask again on every answer)."""
        self.register_failures += 1
        self.next_register_try = now + reg.retry_pause_ms(self.register_failures)

    # ------------------------------------------------------------------ roles

    def _on_notify(self, src: str, note: NotifyBrokerRoleChanged, now: int) -> None:
        decision = self.rules.role_change(self.role_state, note.master_broker_id, note.master_address,
                                          note.master_epoch, note.sync_state_set_epoch, note.sync_state_set)
        self._apply_role(decision, now, "notify")

    def _on_replica_info(self, response: GetReplicaInfoResponse, now: int) -> None:
        poll = self.rules.on_replica_info(self.role_state, response)
        self.coverage[("replica_info_poll", poll.outcome.value)] += 1
        if poll.outcome is PollOutcome.RE_REGISTER:
            self._changed()
            self.registration = attrs.evolve(self.registration, state=reg.RegisterState.CREATE_METADATA_FILE_DONE)
            self.role_state = attrs.evolve(self.role_state, registered=False)
            self.next_register_try = now
        elif poll.outcome is PollOutcome.CHANGE_ROLE:
            self._apply_role(poll.role, now, "poll")
        elif poll.outcome is PollOutcome.ELECT_SELF and self.broker_id is not None:
            self._call(ElectMasterRequest.of_broker_trigger(self.setup.cluster_name, self.setup.broker_name,
                                                            self.broker_id), now)
        elif poll.outcome is PollOutcome.APPLY_SYNC_STATE_SET and self.sync_state is not None:
            members, epoch = poll.sync_state_set
            self._apply_sync_state_set(members, epoch, now)

    def _apply_role(self, decision: RoleDecision, now: int, source: str) -> None:
        self.coverage[("change_broker_role", decision.outcome.value)] += 1
        state = decision.state
        if state.registered and state.role is not Role.NONE and state.fenced and decision.outcome in (
                RoleOutcome.CHANGE_TO_MASTER, RoleOutcome.CHANGE_TO_SLAVE):
            state = attrs.evolve(state, fenced=False)  # registered and the role is known: confirmed
        changed = state != self.role_state
        self.role_state = state
        if changed:
            self._changed(persist=True)
        if decision.outcome is RoleOutcome.CHANGE_TO_MASTER:
            self._start_master(state.master_epoch, MasterSyncStateSet(*decision.sync_state_set), now)
        elif decision.outcome is RoleOutcome.CHANGE_TO_SLAVE:
            self.sync_state = None
            self.pending_writes.clear()
            self._on_become_slave(self.node_id, BecomeSlave(state.master_address, state.master_epoch), now)
            self._changed(persist=True)

    def _start_master(self, epoch: int, sync_state: Optional[MasterSyncStateSet], now: int) -> None:
        self._on_become_master(self.node_id, BecomeMaster(epoch), now)
        if self.role is not ReplicaRole.MASTER:
            return
        self.sync_state = sync_state or MasterSyncStateSet(frozenset({self.broker_id}), 0)
        self.caught_up = {}
        self.connections = {}
        self.pending_writes.clear()
        self.next_shrink = now + self.rules.config.check_sync_state_set_period_ms
        self.next_queue_offsets = self.rules.next_queue_offsets_after_recovery(self.log_entries(), self.confirm_offset)
        self._changed(persist=True)

    def _is_master(self) -> bool:
        return self.role is ReplicaRole.MASTER and self.sync_state is not None and self.broker_id is not None

    # ------------------------------------------------------------------ SyncStateSet (master)

    def _propose(self, new_set: frozenset[int], now: int) -> None:
        s = self.sync_state
        if new_set == s.local and s.proposed is None:
            return
        self.sync_state = self.rules.propose(s, new_set)
        self.coverage[("alter_sync_state_set", "PROPOSED")] += 1
        self._call(AlterSyncStateSetRequest(self.setup.broker_name, self.broker_id, self.role_state.master_epoch,
                                            frozenset(new_set), s.local_epoch), now)
        self._changed()

    def _on_alter_answer(self, response: AlterSyncStateSetResponse, now: int) -> None:
        if self.sync_state is None:
            return
        outcome, self.sync_state = self.rules.on_alter_sync_state_set_reply(self.sync_state, response)
        self.coverage[("on_alter_sync_state_set_reply", outcome.value)] += 1
        self._changed(persist=True)
        self._acknowledge()  # a new set: confirmOffset over its members (upstream's setSyncStateSet)

    def _apply_sync_state_set(self, members: frozenset[int], epoch: int, now: int) -> None:
        outcome, self.sync_state = self.rules.apply_sync_state_set(self.sync_state, members, epoch)
        self.coverage[("apply_sync_state_set", outcome.value)] += 1
        self._changed(persist=True)
        self._acknowledge()

    def _epoch_start(self) -> int:
        entry = find_entry_by_epoch(self.epoch_file, self.epoch)
        return entry.start_offset if entry is not None else 0

    # ------------------------------------------------------------------ HA hooks (master side)

    def _on_handshake_request(self, src: str, r: HandshakeRequest, now: int) -> None:
        super()._on_handshake_request(src, r, now)
        if self._is_master() and r.epoch == self.epoch:
            # the connection is the slave its handshake names (AutoSwitchHAConnection.slaveId): never an id
            # an earlier connection from the same address gave (a replaced broker comes back with a new id)
            slave_id = r.broker_id if r.broker_id is not None else -1
            self.connections[src] = SlaveConnection(slave_id, is_async_learner=r.async_learner)

    def _on_slave_report(self, src: str, r: SlaveReport, now: int) -> None:
        if self._is_master() and r.epoch == self.epoch and src in self.connections:
            conn = self.connections[src]
            decision = self.rules.on_slave_ack(self.sync_state.local, conn, r.max_offset, self.max_offset,
                                               self.confirm_offset, self._epoch_start(), now)
            if decision.caught_up_time is not None and conn.slave_id >= 0:
                self.caught_up = record_caught_up_time(self.caught_up, conn.slave_id, decision.caught_up_time)
            if decision.expand is not None:
                self.coverage[("maybe_expand", decision.expand.outcome.value)] += 1
                if decision.expand.outcome is ExpandOutcome.EXPAND and conn.slave_id >= 0:
                    self._propose(decision.expand.new_set, now)
        super()._on_slave_report(src, r, now)

    def _push(self, slave: str) -> None:
        before = len(self._out)
        super()._push(slave)
        if len(self._out) > before and slave in self.connections:
            self.connections[slave] = attrs.evolve(self.connections[slave], last_master_max_offset=self.max_offset,
                                                   last_transfer_time_ms=self._now)

    def _slave_handshake(self, master_file, master_max: int):
        return self.rules.slave_handshake(self.epoch_file, self.max_offset, master_file, master_max)

    def _on_transfer_header(self, header):
        return self.rules.on_transfer_header(self.epoch_file, self.max_offset, header)

    def _next_batch(self, from_offset: int):
        return self.rules.next_batch(self.epoch_file, self.log, from_offset, self.confirm_offset, MAX_BATCH_BYTES)

    def _flushed_for_transfer(self, header) -> int:
        return self.rules.flushed_for_transfer(self.flushed, header)

    def _acknowledge(self) -> None:
        """Controller mode: confirmOffset by the spec; acknowledgement in ``_settle_writes``."""
        if not self._is_master():
            return
        acks = self._member_acks()
        decision = self.rules.compute_master_confirm_offset(
            self.max_offset, self.rules.in_use(self.sync_state), self.broker_id, acks, self.confirm_offset
        )
        self.coverage[("compute_master_confirm_offset", decision.outcome.value)] += 1
        if decision.outcome is ConfirmOutcome.COMPUTED and decision.confirm_offset != self.confirm_offset:
            self.confirm_offset = decision.confirm_offset
            self._changed()
        self._dispatch_to(self.confirm_offset)

    def _member_acks(self) -> dict[int, int]:
        """Broker id -> ack offset of every open HA connection (-1 until its first report)."""
        return {c.slave_id: self.acks.get(n, -1) for n, c in self.connections.items() if c.slave_id >= 0}

    def _dispatch_to(self, confirm: int) -> None:
        end = self.rules.dispatch_end(confirm, self.max_offset)
        if end > self.dispatch:
            self.dispatch = end

    # ------------------------------------------------------------------ writes (master)

    def _on_produce(self, src: str, p: Produce, now: int) -> None:
        admission = self.rules.admission(self.role_state, self.sync_state) if self._is_master() else None
        if admission is None or not admission.admitted:
            check = "broker_not_writable" if admission is None else admission.check
            self.coverage[("check_write_admission", check)] += 1
            status = PutMessageStatus.SERVICE_NOT_AVAILABLE if admission is None else admission.status
            self._send(src, ProduceResult(p.msg_id, status.value))
            return
        self.coverage[("check_write_admission", admission.check)] += 1
        queue_offset = self.next_queue_offsets.get(p.queue, 0)
        self.next_queue_offsets = {**self.next_queue_offsets, p.queue: queue_offset + 1}
        tag = MessageTag(p.msg_id, p.queue, queue_offset)
        msg = LogMessage(self.max_offset, p.size, self.epoch)
        self.log.append(msg)
        self.ids.append(tag)
        self._changed()
        self.pending_writes.append((tag, msg.end, admission.need_ack_nums, now + WRITE_TIMEOUT_MS, src))
        for peer in self.peers:
            self._push(peer)
        self._acknowledge()

    def _settle_writes(self, now: int) -> None:
        if not self.pending_writes:
            return
        if not self._is_master():
            for tag, _, _, _, producer in self.pending_writes:
                self._send(producer, ProduceResult(tag.msg_id, PutMessageStatus.SERVICE_NOT_AVAILABLE.value))
            self.pending_writes.clear()
            return
        acks = self._member_acks()
        in_use = self.rules.in_use(self.sync_state)
        waiting = []
        for tag, end, need, deadline, producer in self.pending_writes:
            outcome = self.rules.replication_status(need, end, in_use, self.broker_id, acks, now, deadline)
            if outcome is ReplicationOutcome.WAITING:
                waiting.append((tag, end, need, deadline, producer))
                continue
            self.coverage[("replication_status", outcome.value)] += 1
            if outcome is ReplicationOutcome.PUT_OK:
                self._flush(end)  # synchronous flush before acknowledging
            self._send(producer, ProduceResult(tag.msg_id, outcome.value))
        self.pending_writes = waiting

    # ------------------------------------------------------------------ slave side

    def _on_transfer_batch(self, src, b, now: int) -> None:
        super()._on_transfer_batch(src, b, now)  # sets the slave confirmOffset from the header
        if self.role is ReplicaRole.SLAVE:
            self._dispatch_to(self.confirm_offset)

    def _handshake_identity(self) -> dict:
        return {"broker_id": self.broker_id, "async_learner": self.setup.async_learner}


_BROKER_HANDLERS = {
    ControllerAnswer: ControllerModeBroker._on_answer,
    NotifyBrokerRoleChanged: ControllerModeBroker._on_notify,
    Produce: ControllerModeBroker._on_produce,
}
