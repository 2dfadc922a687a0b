"""A sans-IO RIP-44 controller node: a reference DLedger node whose committed log
entries are controller events, applied by the spec.

* Replication and election are the foundation's ``DLedgerNode``, unchanged: every
  DLedger message is handed to it.
* Log entries are JSON: ``{"events": [...]}`` (``spec.controller.codec``), or ``""``,
  the empty proposal a new leader commits before it serves: it enters the leader state
  when ``ControllerRules.enters_leader_state`` says (spec/controller/scheduling.py: once
  that very entry is applied, as upstream's ``DLedgerController.RoleChangeHandler``).
* Every node applies the committed prefix to its ``metadata`` with
  ``ControllerRules.apply_event``; a restarted node starts empty and replays.
* Only the *active* controller (leader state entered) answers requests; the others
  answer CONTROLLER_NOT_LEADER (2007). The active one decides with
  ``ControllerRules.handle`` on its applied metadata, one request at a time (upstream's
  single-threaded event scheduler): a request with events is answered once its entry
  is committed and applied; a leadership change drops it unanswered (the broker's
  request times out, as upstream's future does).
* Heartbeats are local to each node (``spec.controller.heartbeat``), never replicated.
  Every ``scan_not_active_broker_interval_ms`` each node expires silent brokers; the
  active one then elects for expired masters, and every
  ``scan_inactive_master_interval_ms`` re-elects for sets recording a dead master
  (``spec.controller.scheduling``). Elections go through the log like any request; a
  successful one notifies the set's live members (NOTIFY_BROKER_ROLE_CHANGED).

For the invariant monitor the node records every decision it answered or committed
(``decisions``: request, result, metadata before and after, the liveness used),
which the scenario drains after each step.
"""
from __future__ import annotations

import json
from collections import Counter, deque
from typing import Any, Optional

import attrs

from reference.dledger_node import DLedgerDurable, DLedgerNode
from reference.node_api import Draw, Message, Ready
from spec.controller import codec, scheduling
from spec.controller.heartbeat import (
    BrokerHeartbeat,
    HeartbeatLiveness,
    HeartbeatTable,
    on_broker_heartbeat,
    scan_not_active_broker,
)
from spec.controller.messages import (
    ControllerAnswer,
    ControllerCall,
    ControllerDecision,
    ControllerNodeView,
    NotifyBrokerRoleChanged,
)
from spec.controller.records import (
    EMPTY_METADATA,
    ControllerMetadata,
    ElectMasterRequest,
    ElectMasterResponse,
    RegisterBrokerRequest,
    ResponseCode,
)
from spec.controller.rules import API_OF_REQUEST, DEFAULT_RULES, ControllerRules
from spec.dledger.profiles import DEFAULT_PROFILE, Profile, Timing
from spec.dledger.records import ClientAppend, Role

NOOP = ""  # the empty proposal of a new leader


# ------------------------------------------------------------------ wire records


@attrs.frozen(slots=True)
class Decision:
    """One request the active controller decided, for the invariant monitor."""

    controller: str
    api: str
    request: Any
    result: Any  # spec.controller.api.ControllerResult
    before: ControllerMetadata
    after: ControllerMetadata
    liveness: Any
    trigger: str  # "call", "expiry_scan" or "reelect_scan"


def encode_events(events) -> str:
    return json.dumps({"events": [codec.event_to_dict(e) for e in events]}, sort_keys=True, separators=(",", ":"))


def decode_events(body: str) -> tuple:
    if body == NOOP:
        return ()
    return tuple(codec.event_from_dict(d) for d in json.loads(body)["events"])


class _Pending:
    """A decided request waiting for its entry to commit."""

    __slots__ = ("index", "term", "items")

    def __init__(self, index: int, term: int, items: list):
        self.index = index
        self.term = term
        self.items = items  # [(reply_to | None, call_id, Decision)]


class ControllerNode:
    def __init__(
        self,
        node_id: str,
        peers: tuple[str, ...],
        draw: Draw,
        durable: DLedgerDurable | None = None,
        now: int = 0,
        rules: ControllerRules = DEFAULT_RULES,
        profile: Profile = DEFAULT_PROFILE,
        timing: Timing | None = None,
    ):
        self.node_id = node_id
        self.rules = rules
        self.dledger = DLedgerNode(node_id, peers, draw, durable, now, profile, timing)
        self._now = now
        self.metadata: ControllerMetadata = EMPTY_METADATA
        self.applied = 0  # entries of the DLedger log applied to ``metadata``
        self.active_term = -1  # the term whose empty proposal committed (leader state)
        self.table = HeartbeatTable()
        self.queue: deque = deque()  # (reply_to, call_id, request) awaiting the scheduler
        self.pending: _Pending | None = None
        self.expired_queue: list = []  # expired identities waiting for their elections
        self.reelect_due = False
        self.next_expiry_scan = now + rules.config.scan_not_active_broker_interval_ms
        self.next_reelect_scan = now + rules.config.scan_inactive_master_interval_ms
        self.noop_index = -1
        self.decisions: list[Decision] = []  # reported (and forgotten) by the next observe()
        self._view: tuple | None = None
        self.coverage: Counter = Counter()
        self._out: list[Message] = []
        self._dirty = False

    # ------------------------------------------------------------------ views

    @property
    def is_active(self) -> bool:
        d = self.dledger
        return d.role is Role.LEADER and self.active_term == d.curr_term

    def liveness(self, now: int) -> HeartbeatLiveness:
        return HeartbeatLiveness(self.table, now)

    @property
    def version(self):
        """Changes whenever ``observe()`` or ``summary()`` would show something new."""
        return (self.dledger.version, self.metadata, self.applied, self.active_term, len(self.decisions))

    def observe(self) -> ControllerNodeView:
        """The monitor's view; the decisions it carries are reported once (then forgotten)."""
        key = self.version
        if self._view is None or self._view[0][1:] != key[1:] or self._view[1].term != self.dledger.curr_term:
            decisions = tuple(
                ControllerDecision(d.api, d.trigger, d.request, d.result.response, tuple(d.result.events), d.before,
                                   d.after, d.liveness)
                for d in self.decisions)
            self.decisions.clear()
            view = ControllerNodeView(self.node_id, self.is_active, self.dledger.curr_term, self.applied,
                                      self.metadata, ())
            self._view = (self.version, view)
            if decisions:
                return attrs.evolve(view, decisions=decisions)
        return self._view[1]

    def summary(self) -> dict:
        s = self.dledger.summary()
        s["active"] = self.is_active
        s["applied"] = self.applied
        return s

    # ------------------------------------------------------------------ driver API

    def tick(self, now: int) -> Ready:
        self._now = now
        inner = self.dledger.tick(now)
        self._after_dledger(now)
        cfg = self.rules.config
        if now >= self.next_expiry_scan:
            self.next_expiry_scan = now + cfg.scan_not_active_broker_interval_ms
            self._expiry_scan(now)
        if now >= self.next_reelect_scan:
            self.next_reelect_scan = now + cfg.scan_inactive_master_interval_ms
            if self.is_active:
                self.reelect_due = True
        self._schedule(now)
        return self._ready(inner)

    def next_deadline(self) -> int | None:
        """The earliest time at which ``tick`` can do anything: the DLedger node's own
        deadline, the next expiry or re-election scan, or at once while the scheduler has
        work it could not start (or a new leader still has to propose its no-op)."""
        d = self.dledger
        due = min(self.next_expiry_scan, self.next_reelect_scan)
        inner = d.next_deadline()
        if inner is not None and inner < due:
            due = inner
        waiting = self.queue or self.expired_queue or self.reelect_due
        if (self.is_active and self.pending is None and waiting) or (
                d.role is Role.LEADER and self.active_term != d.curr_term and self.noop_index < 0):
            return self._now
        return due

    def step(self, message: Message, now: int) -> Ready:
        self._now = now
        payload = message.payload
        if isinstance(payload, ControllerCall):
            self._on_call(message.src, payload, now)
            return self._ready(None)
        if isinstance(payload, BrokerHeartbeat):
            self.table = self.rules.on_broker_heartbeat(self.table, payload, now)
            self.coverage[("controller_heartbeat", "RECORDED")] += 1
            return self._ready(None)
        inner = self.dledger.step(message, now)
        self._after_dledger(now)
        self._schedule(now)
        return self._ready(inner)

    def crash(self):
        """What survives: the DLedger durable state (term, vote, log). Metadata is replayed."""
        return self.dledger.durable()

    # ------------------------------------------------------------------ plumbing

    def _ready(self, inner: Ready | None) -> Ready:
        messages = (inner.messages if inner is not None else ()) + tuple(self._out)
        self._out.clear()
        persist = None
        if self._dirty or (inner is not None and inner.persist is not None):
            self._dirty = False
            persist = self.dledger.durable()  # the complete durable state, as the contract asks
        return Ready(messages, persist) if (messages or persist is not None) else Ready()

    def _send(self, dst: str, payload: Any) -> None:
        self._out.append(Message(self.node_id, dst, payload))

    def _append(self, body: str, now: int) -> int | None:
        """Propose ``body`` to the DLedger group; the entry's index, or None if not leader."""
        d = self.dledger
        before = len(d.log)
        ready = d.step(Message(self.node_id, self.node_id, ClientAppend(body)), now)
        self._out.extend(ready.messages)
        self._dirty = self._dirty or ready.persist is not None
        return before if len(d.log) > before else None

    # ------------------------------------------------------------------ the replicated state machine

    def _after_dledger(self, now: int) -> None:
        d = self.dledger
        if d.role is not Role.LEADER:
            self.active_term = -1
            self.noop_index = -1
            self._abandon_pending()
        elif self.active_term != d.curr_term and self.noop_index < 0:
            index = self._append(NOOP, now)
            self.noop_index = -1 if index is None else index
        committed = d.committed_index
        while self.applied <= committed and self.applied < len(d.log):
            entry = d.log[self.applied]
            self.metadata = self.rules.apply(self.metadata, decode_events(entry.body))
            self.applied += 1
            if d.role is Role.LEADER and self.active_term != d.curr_term \
                    and self.rules.enters_leader_state(self.applied, self.noop_index, entry.term, d.curr_term):
                self.active_term = d.curr_term  # serve
                self.coverage[("controller_role", "ENTER_LEADER_STATE")] += 1
        p = self.pending
        if p is not None and self.applied > p.index:
            self.pending = None
            if p.index < len(d.log) and d.log[p.index].term == p.term:
                self._answer(p, now)

    def _abandon_pending(self) -> None:
        if self.pending is not None:
            self.coverage[("controller_request", "DROPPED_LEADERSHIP_LOST")] += len(self.pending.items)
            self.pending = None
        self.queue.clear()
        self.expired_queue.clear()
        self.reelect_due = False

    def _answer(self, p: _Pending, now: int) -> None:
        for reply_to, call_id, decision in p.items:
            decision = attrs.evolve(decision, after=self.metadata)
            self.decisions.append(decision)
            if reply_to is not None:
                self._send(reply_to, ControllerAnswer(call_id, decision.result.response))
            self._notify(decision, now)

    def _notify(self, decision: Decision, now: int) -> None:
        """A successful election notifies the set's live members (``notifyBrokerRoleChanged``)."""
        response = decision.result.response
        if not isinstance(response, ElectMasterResponse) or response.code != ResponseCode.SUCCESS:
            return
        if not self.rules.config.notify_broker_role_changed:
            return
        known = self.metadata.known(decision.request.broker_name)
        if known is None:
            return
        note = NotifyBrokerRoleChanged(
            decision.request.broker_name,
            response.master_broker_id,
            response.master_address,
            response.master_epoch,
            response.sync_state_set_epoch,
            frozenset(response.sync_state_set or ()),
        )
        live = self.liveness(now)
        for broker_id, registration in sorted(known.replicas.brokers.items()):
            if live.is_alive(known.cluster_name, decision.request.broker_name, broker_id):
                self._send(registration.address, note)

    # ------------------------------------------------------------------ requests

    def _on_call(self, src: str, call: ControllerCall, now: int) -> None:
        api = API_OF_REQUEST.get(type(call.request))
        if api is None:
            return
        if not self.is_active:
            result = self.rules.handle(self.metadata, call.request, self.liveness(now), is_leader=False)
            self.decisions.append(
                Decision(self.node_id, api, call.request, result, self.metadata, self.metadata, None, "call")
            )
            self._send(src, ControllerAnswer(call.call_id, result.response))
            return
        self.queue.append((src, call.call_id, call.request))
        self._schedule(now)

    def _schedule(self, now: int) -> None:
        """The event scheduler: one decision at a time, each after the previous committed."""
        while self.is_active and self.pending is None:
            if self.queue:
                src, call_id, request = self.queue.popleft()
                self._decide(src, call_id, request, now)
            elif self.expired_queue:
                identity = self.expired_queue.pop(0)
                if scheduling.on_broker_inactive(self.metadata, identity):
                    self._elect(identity.broker_name, now, "expiry_scan")
            elif self.reelect_due:
                self.reelect_due = False
                live = self.liveness(now)
                for broker_name in self.rules.scan_need_reelect_broker_sets(self.metadata, live):
                    self._elect(broker_name, now, "reelect_scan")
                    if self.pending is not None:
                        break
            else:
                return

    def _decide(self, src: str | None, call_id: int, request: Any, now: int) -> None:
        api = API_OF_REQUEST[type(request)]
        live = self.liveness(now)
        result = self.rules.handle(self.metadata, request, live, is_leader=True)
        if isinstance(request, RegisterBrokerRequest) and result.code == ResponseCode.SUCCESS:
            # Registering is a sign of life: the node that registers a broker records it
            # (upstream's registerBroker), whatever its heartbeat handling does.
            self.table = on_broker_heartbeat(
                self.table,
                BrokerHeartbeat(request.cluster_name, request.broker_name, request.broker_address, request.broker_id),
                now,
            )
        decision = Decision(self.node_id, api, request, result, self.metadata, self.metadata, live, "call")
        self._commit([(src, call_id, decision)], result.events, now)

    def _elect(self, broker_name: str, now: int, trigger: str) -> None:
        """``triggerElectMaster``: controller-triggered tries until one succeeds, as one entry."""
        live = self.liveness(now)
        outcome = scheduling.trigger_elect_master(self.metadata, broker_name, live, self.rules)
        items, events = [], []
        before = self.metadata
        for result in outcome.attempts:
            request = ElectMasterRequest.of_controller_trigger(broker_name)
            items.append((None, 0, Decision(self.node_id, "elect_master", request, result, before, before, live, trigger)))
            before = self.rules.apply(before, result.events)
            events.extend(result.events)
        self._commit(items, tuple(events), now)

    def _commit(self, items: list, events: tuple, now: int) -> None:
        if not events:
            for reply_to, call_id, decision in items:
                self.decisions.append(decision)
                if reply_to is not None:
                    self._send(reply_to, ControllerAnswer(call_id, decision.result.response))
            return
        index = self._append(encode_events(events), now)
        if index is None:
            return  # leadership lost while deciding: nobody is answered
        self.pending = _Pending(index, self.dledger.curr_term, items)
        self._after_dledger(now)  # a group of one commits at once

    # ------------------------------------------------------------------ scans

    def _expiry_scan(self, now: int) -> None:
        self.table, expired = scan_not_active_broker(self.table, now)
        if expired:
            self.coverage[("controller_scan", "BROKERS_EXPIRED")] += 1
        if self.is_active:
            self.expired_queue.extend(expired)
