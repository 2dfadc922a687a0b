"""Step conformance of controller-mode brokers (``spec/steps/__init__.py`` says what a step is).

``BrokerSteps.check(event)`` judges one step of one broker of the ``controller`` scenario
against ``spec.broker`` (the default ``BrokerRules`` with the broker's own
``BrokerHAConfig``) and returns the violations:

| property | what must hold |
|---|---|
| ``change_broker_role`` | on a role notification the role after is ``change_broker_role``'s (a stale masterEpoch changes nothing; a new master adopts the controller's SyncStateSet at its epoch; a slave drops its set); an answer naming a master (electMaster, the getReplicaInfo poll) changes the role as ``on_elect_reply`` / ``on_replica_info`` say, or not at all (an answer to a call given up may be ignored) |
| ``apply_sync_state_set`` | an alterSyncStateSet reply or a poll of the same masterEpoch changes a master's SyncStateSet as ``on_alter_sync_state_set_reply`` / ``apply_sync_state_set`` say (a rejection keeps the proposal; only a newer epoch is applied), or not at all |
| ``maybe_expand`` | an alter that adds a broker is sent only when ``maybe_expand`` says EXPAND for it: a connected, non-learner slave whose ack reached confirmOffset and the start of the master's epoch; the alter carries the master's id, masterEpoch and syncStateSetEpoch |
| ``maybe_shrink`` | an alter never drops the master itself |
| ``compute_master_confirm_offset`` | a master's confirmOffset rises only to what ``compute_master_confirm_offset`` allows over the acks its in-sync members reported (none while a member of ``local | proposed`` has reported nothing) |
| ``put_message`` | a write is refused with the status ``check_write_admission`` gives, and acknowledged (PUT_OK) only when ``replication_status`` says so over the acks reported |
| ``on_restart`` | a (re)started broker is fenced and knows no role (``on_restart``), and its consume queue ends at or before ``recovered_dispatch_end`` |
| ``next_batch`` | a batch a broker sends comes from a master in its masterEpoch, starts at the slave's latest (or highest) report on its connection, announces the master's confirmOffset, and is labelled, cut and filled with the master's own messages as ``next_batch`` labels and cuts it (its size is free; the replicas' judgement, ``spec/steps/replica.misbatched``) |
| ``flushed_for_transfer`` | by the end of a step in which a master sends a slave a batch, it has flushed the batch (a master ships only what it has flushed: docs/truncation.md) |
| ``handshake`` | a master answers only a handshake of its masterEpoch, with its max offset and every epoch entry; a slave hand-shaking with its master truncates its log and epoch file to ``slave_handshake``'s consistent point and reports its max offset, or, with no consistent point, keeps both and does not report (the replicas' judgement, ``misshaken``) |
| ``on_transfer_header`` | a slave in the transfer with its master appends a batch at its max offset and records its epoch as ``on_transfer_header`` says (confirmOffset included) and reports it once flushed (``flushed_for_report``); a batch elsewhere appends nothing (the connection drops); a keep-alive or a batch delivered twice may be ignored (``misapplied``) |

Hidden state rebuilt from the inputs: the slaves connected to a master (``HandshakeRequest``:
broker id, async learner) and the highest ack each reported (``SlaveReport``) in the
master's epoch. Acks are taken at their highest (a slave that restarted may report less):
every bound judged from them is an upper bound, so the check never asks more than the spec.
Where a batch starts is judged against the reports on the connection instead (a
handshake starts a connection over, with no report yet): its latest, as the replicas' is,
or its highest (a slave's log only grows within a connection, so a lower report is a late
copy the network delivered out of order, which rmqha's reference does not take). A slave's
side of the connection, which its view does not show either: the handshake it sent its
master (in the masterEpoch it follows), and whether a judged answer put it in the
transfer (it reported); a role change, a new handshake or a dropped batch ends that.

Freedoms (docs/step-conformance.md): when the broker heartbeats, polls, registers, checks
its set for shrinking and times a call or a write out (its timers); whether it acts on a
late answer; whether a broker that has not registered yet acts on a role notification
(upstream's ``changeBrokerRole`` does; the register reply gives the role either way); how
far confirmOffset lags behind what it may be; when a write that waits
for acks is acknowledged or times out. Shrinking a member because its connection closed
is allowed at any time (``on_connection_closed``: a closed connection is not observed),
so only the master's own membership is judged there.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import islice, takewhile
from operator import attrgetter
from typing import Optional

import attrs

from spec.broker.confirm_offset import ConfirmOutcome
from spec.broker.messages import BrokerNodeConfig, BrokerNodeView, Produce, ProduceResult
from spec.broker.records import LogEntry, MasterSyncStateSet, PutMessageStatus, Role
from spec.broker.role import PollOutcome, RoleDecision, RoleOutcome
from spec.broker.rules import BrokerRules
from spec.broker.sync_state_set import ExpandOutcome, maybe_expand
from spec.broker.write import ReplicationOutcome
from spec.controller.messages import ControllerAnswer, ControllerCall, NotifyBrokerRoleChanged
from spec.controller.records import (
    AlterSyncStateSetRequest,
    AlterSyncStateSetResponse,
    ElectMasterResponse,
    GetReplicaInfoResponse,
)
from spec.steps import NodeSteps, StepEvent, StepViolation, step_property, violation
from spec.truncation.epoch_file import EpochFile, find_entry_by_epoch
from spec.steps.replica import misapplied, misbatched, misshaken, shipped_unflushed
from spec.truncation.messages import HandshakeRequest, HandshakeResponse, SlaveReport, TransferBatch
from spec.truncation.replication import Message as LogMessage
from spec.truncation.replication import RoleChangeOutcome, change_to_master

PROCEDURES: dict[str, str] = {
    "change_broker_role": "a broker changes its role only as change_broker_role says for the masterEpoch it is told",
    "apply_sync_state_set": "a master applies a SyncStateSet only as the controller's reply or poll allows",
    "maybe_expand": "a master proposes to add a slave only when maybe_expand says EXPAND",
    "maybe_shrink": "a master never proposes to drop itself",
    "compute_master_confirm_offset": "a master's confirmOffset rises only to what its in-sync members acked",
    "put_message": "a write is refused as check_write_admission says and acknowledged only as replication_status says",
    "on_restart": "a restarted broker is fenced, knows no role, and serves consumers no further than confirmOffset",
    "next_batch": "a master sends whole messages of one epoch from the slave's report, labelled as next_batch labels them",
    "flushed_for_transfer": "a master has flushed every batch it sends a slave",
    "handshake": "a master answers a handshake with its log's end and epochs; a slave truncates to slave_handshake's point",
    "on_transfer_header": "a slave appends its master's batch at its end and records its epoch as on_transfer_header says",
}
PROPERTIES: tuple[str, ...] = tuple(step_property(p) for p in PROCEDURES)
_START = attrgetter("start")
_NEVER = 2**62  # a deadline that never passes: acknowledgements are judged, timeouts are the broker's


@attrs.define(slots=True)
class _Broker:
    view: Optional[BrokerNodeView] = None
    epoch: int = -1  # the masterEpoch of the slaves' connections below
    slaves: dict = attrs.field(factory=dict)  # node -> (broker id, async learner) from its handshake
    acks: dict = attrs.field(factory=dict)  # node -> the highest ack it reported in ``epoch``
    # node -> (its latest report, its highest) since its handshake, in ``epoch``
    reported: dict = attrs.field(factory=dict)
    shaking: Optional[tuple] = None  # (master, masterEpoch) of the handshake a slave sent and had no answer to
    transfer: Optional[tuple] = None  # (master, masterEpoch) of the transfer a slave is in


class BrokerSteps(NodeSteps):
    """Judges each step of every broker against spec/broker under its configuration."""

    def __init__(self, configs: dict[str, BrokerNodeConfig]):
        super().__init__()
        self.rules = {node: BrokerRules(config=c.ha) for node, c in configs.items()}
        self.judged: Counter = Counter()  # steps judged per procedure

    def start(self, event: StepEvent) -> _Broker:
        return _Broker()

    def booted(self, node: _Broker, event: StepEvent, out: list) -> None:
        if isinstance(event.view, BrokerNodeView):
            self._boot(self.rules.get(event.node) or BrokerRules(), event, event.view, out)
            node.view = event.view

    def judge(self, node: _Broker, event: StepEvent, out: list) -> None:
        view = event.view
        if not isinstance(view, BrokerNodeView) or node.view is None:
            return
        rules = self.rules.get(event.node) or BrokerRules()
        before = node.view
        reported_before = node.reported.get(event.src)
        self._connections(node, event, view)
        payload = event.payload
        if isinstance(payload, NotifyBrokerRoleChanged):
            decision = rules.role_change(before.role_state, payload.master_broker_id, payload.master_address,
                                         payload.master_epoch, payload.sync_state_set_epoch, payload.sync_state_set)
            # a broker that has not registered yet may leave it to the register reply
            self._role(event, before, view, decision, f"notification {_short_note(payload)}",
                       not before.role_state.registered, out)
        elif isinstance(payload, ControllerAnswer):
            self._answer(rules, event, before, view, payload.response, out)
        elif isinstance(payload, Produce):
            self._admission(rules, event, before, payload, out)
        self._proposals(rules, node, event, before, view, out)
        self._confirm_offset(rules, node, event, before, view, out)
        self._acknowledged(rules, node, event, view, out)
        self._transfers(rules, node, event, before, view, reported_before, out)
        self._ha_connection(node, event, before, view, out)
        node.view = view

    # ------------------------------------------------------------------ restart

    def _boot(self, rules: BrokerRules, event: StepEvent, view: BrokerNodeView, out) -> None:
        self.judged["on_restart"] += 1
        what = f"{event.node} at t={event.time} ms, (re)start"
        if view.role_state != rules.on_restart(view.role_state):
            out.append(violation("on_restart", event.node, what, f"{rules.on_restart(view.role_state)} (fenced, no role)",
                                 str(view.role_state)))
        bound = rules.recovered_dispatch_end(view.confirm_offset, view.max_offset)
        if view.dispatched_offset > bound:
            out.append(violation("on_restart", event.node, what,
                                 f"a consume queue ending at or before {bound} (confirmOffset {view.confirm_offset})",
                                 f"it ends at {view.dispatched_offset}"))

    # ------------------------------------------------------------------ what a master knows of its slaves

    def _connections(self, node: _Broker, event: StepEvent, view: BrokerNodeView) -> None:
        epoch = view.role_state.master_epoch if view.role_state.role is Role.MASTER else -1
        if epoch != node.epoch:
            node.epoch, node.slaves, node.acks, node.reported = epoch, {}, {}, {}
        payload = event.payload
        if epoch < 0 or event.src is None:
            return
        if isinstance(payload, HandshakeRequest) and payload.epoch == epoch:
            # the connection is the slave this handshake names; one naming no id (not registered yet) is no member
            if payload.broker_id is None:
                node.slaves.pop(event.src, None)
            else:
                node.slaves[event.src] = (payload.broker_id, payload.async_learner)
            node.reported.pop(event.src, None)
        elif isinstance(payload, SlaveReport) and payload.epoch == epoch:
            node.acks[event.src] = max(node.acks.get(event.src, -1), payload.max_offset)
            latest = payload.max_offset
            node.reported[event.src] = (latest, max(latest, node.reported.get(event.src, (latest, latest))[1]))

    def _member_acks(self, node: _Broker) -> dict[int, int]:
        acks: dict[int, int] = {}
        for peer, (broker_id, _) in node.slaves.items():
            acks[broker_id] = max(acks.get(broker_id, -1), node.acks.get(peer, -1))
        return acks

    # ------------------------------------------------------------------ what a master ships

    def _transfers(self, rules: BrokerRules, node: _Broker, event, before, view, reported_before, out) -> None:
        for m in event.outputs:
            b = m.payload
            if not isinstance(b, TransferBatch):
                continue
            h = b.header
            what = f"{event.node} at t={event.time} ms, a batch to {m.dst} [{h.offset}, {h.offset + h.size})"
            self.judged["next_batch"] += 1
            expected = self._misbatched(node, event, before, view, m.dst, b, reported_before)
            if expected is not None:
                out.append(violation("next_batch", event.node, what, expected,
                                     f"epoch {b.epoch}, header at {h.offset} labelled {h.epoch}@{h.epoch_start_offset}, "
                                     f"{h.size} bytes, {len(b.messages)} message(s), confirm offset {h.confirm_offset}"))
            if not h.size:
                continue  # a keep-alive ships nothing
            self.judged["flushed_for_transfer"] += 1
            short = shipped_unflushed(before.flushed, view.flushed, h, rules.flushed_for_transfer)
            if short is not None:
                out.append(violation("flushed_for_transfer", event.node, what, short, f"flushed to {view.flushed}"))

    @staticmethod
    def _misbatched(node: _Broker, event, before, view, dst: str, b: TransferBatch, reported_before) -> str | None:
        if view.role_state.role is not Role.MASTER:
            return f"no batch: only a master ships (the broker is {view.role_state.role.name})"
        h = b.header
        acks = set(node.reported.get(dst, (None,))) | (set(reported_before or (None,)) if dst == event.src else set())
        log = view.log
        first = bisect_left(log, h.offset, key=_START)
        entries = view.epoch_file.entries
        starts = [x.start_offset for x in entries]

        def messages():
            for e in islice(log, first, None):
                at = bisect_right(starts, e.start) - 1
                yield LogMessage(e.start, e.end - e.start, entries[at].epoch if at >= 0 else -1)

        held = [(e.start, e.end, e.msg_id, e.queue, e.queue_offset)
                for e in takewhile(lambda e: e.start < h.offset + h.size, islice(log, first, None))]
        shipped = [(m.offset, m.offset + m.size, getattr(i, "msg_id", i), getattr(i, "queue", None),
                    getattr(i, "queue_offset", None)) for m, i in zip(b.messages, b.ids)]
        return misbatched(b, view.role_state.master_epoch, view.epoch_file, messages(), acks,
                          {before.confirm_offset, view.confirm_offset}, held, shipped)

    # ------------------------------------------------------------------ the HA connection, both ends

    def _ha_connection(self, node: _Broker, event, before, view, out) -> None:
        """The handshake answers a broker sent, and, on a slave, its master's answer and batches."""
        payload, src = event.payload, event.src
        sent_to_src = [m.payload for m in event.outputs if m.dst == src]
        reports = [x for x in sent_to_src if isinstance(x, SlaveReport)]
        role = before.role_state
        following = _following(before)
        what = f"{event.node} at t={event.time} ms, {type(payload).__name__} from {src}"
        if isinstance(payload, HandshakeResponse) and following == (src, payload.epoch) and node.shaking == following \
                and node.transfer is None:
            self.judged["handshake"] += 1
            node.shaking = None

            def log_cut_to(cut):
                return view.log == (before.log if cut is None else tuple(x for x in before.log if x.end <= cut))

            expected = misshaken(role.master_epoch, before.epoch_file, before.max_offset, payload, view.epoch_file,
                                 view.max_offset, log_cut_to, None, reports)
            if expected is not None:
                out.append(violation("handshake", event.node,
                                     what + f" (master max {payload.max_offset}, {EpochFile(payload.entries).render()})",
                                     expected, f"max {view.max_offset}, epochs {view.epoch_file.render()}, "
                                     f"reports {[x.max_offset for x in reports]}"))
            node.transfer = following if reports else None
        elif isinstance(payload, TransferBatch) and following == (src, payload.epoch) and node.transfer == following:
            self.judged["on_transfer_header"] += 1
            h = payload.header

            def appended(with_batch: bool) -> bool:
                if not with_batch:
                    return view.log == before.log
                return view.log == before.log + tuple(
                    LogEntry(getattr(i, "msg_id", i), m.offset, m.offset + m.size, getattr(i, "queue", None),
                             getattr(i, "queue_offset", None))
                    for m, i in zip(payload.messages, payload.ids))

            dropped, expected = misapplied(role.master_epoch, before.epoch_file, before.max_offset,
                                           before.confirm_offset, payload, view.epoch_file, view.max_offset,
                                           view.confirm_offset, appended, None, reports, view.flushed)
            if expected is not None:
                out.append(violation("on_transfer_header", event.node,
                                     what + f" (header at {h.offset}, epoch {h.epoch}@{h.epoch_start_offset}, "
                                     f"{h.size} bytes)", expected,
                                     f"max {view.max_offset}, epochs {view.epoch_file.render()}, confirm offset "
                                     f"{view.confirm_offset}, reports {[x.max_offset for x in reports]}, "
                                     f"flushed {view.flushed}"))
            if dropped:
                node.transfer = None
        elif following is not None and _following(view) == following and \
                (view.log != before.log or view.epoch_file.entries != before.epoch_file.entries):
            self.judged["on_transfer_header"] += 1
            out.append(violation("on_transfer_header", event.node, what,
                                 f"its log and epoch file unchanged ({before.epoch_file.render()}, max {before.max_offset}): "
                                 "a slave's change only on its master's answer or a batch of the transfer it is in",
                                 f"{view.epoch_file.render()}, max {view.max_offset}"))
        if isinstance(payload, HandshakeRequest):
            answers = [x for x in sent_to_src if isinstance(x, HandshakeResponse)]
            if answers:
                self.judged["handshake"] += 1
                expected = HandshakeResponse.of_master(role.master_epoch, before.max_offset, before.epoch_file) \
                    if role.role is Role.MASTER and payload.epoch == role.master_epoch else None
                if answers != [expected]:
                    out.append(violation("handshake", event.node, what,
                                         "no answer (not the master of that masterEpoch)" if expected is None else
                                         f"HandshakeResponse(epoch {expected.epoch}, max {expected.max_offset}, "
                                         f"{before.epoch_file.render()})",
                                         ", ".join(f"HandshakeResponse(epoch {a.epoch}, max {a.max_offset}, "
                                                   f"{EpochFile(a.entries).render()})" for a in answers)))
        if _following(view) != following:
            node.shaking = node.transfer = None  # a new role: the connection is over
        for m in event.outputs:
            if isinstance(m.payload, HandshakeRequest):  # a new connection to its master
                node.shaking, node.transfer = (m.dst, m.payload.epoch), None

    # ------------------------------------------------------------------ roles and SyncStateSets

    def _role(self, event, before, view, decision: RoleDecision, source: str, may_ignore: bool, out) -> None:
        what = f"{event.node} at t={event.time} ms, {source}"
        self.judged["change_broker_role"] += 1
        expected = decision.state
        after = view.role_state
        if may_ignore and after == before.role_state:
            return
        # registered and the role known: it is confirmed (unfenced) with it
        confirmed = attrs.evolve(expected, fenced=False) if expected.registered and expected.role is not Role.NONE else expected
        if after not in (expected, confirmed):
            out.append(violation("change_broker_role", event.node, what,
                                 f"{decision.outcome.name}: {_role(expected)}", _role(after)))
            return
        if decision.outcome is RoleOutcome.CHANGE_TO_MASTER and after != before.role_state:
            adopted = MasterSyncStateSet(*decision.sync_state_set)
            if change_to_master(before.epoch_file, expected.master_epoch, before.max_offset).outcome \
                    is RoleChangeOutcome.REFUSED_OLDER_EPOCH:
                # its epoch file ends past that masterEpoch (a set an admin clean restarted starts
                # its epochs over): the replica refuses to lead in it, and adopts no set
                if view.sync_state != before.sync_state:
                    out.append(violation("change_broker_role", event.node, what,
                                         f"no new SyncStateSet: its epoch file ends at epoch "
                                         f"{before.epoch_file.last_epoch}, past masterEpoch {expected.master_epoch}",
                                         _sss(view.sync_state)))
                return
            if view.sync_state != adopted:
                out.append(violation("change_broker_role", event.node, what,
                                     f"the new master adopts the controller's SyncStateSet {_sss(adopted)}",
                                     _sss(view.sync_state)))
        elif decision.outcome is RoleOutcome.CHANGE_TO_SLAVE and view.sync_state is not None:
            out.append(violation("change_broker_role", event.node, what, "a slave keeps no SyncStateSet",
                                 _sss(view.sync_state)))

    def _answer(self, rules: BrokerRules, event, before, view, response, out) -> None:
        if isinstance(response, ElectMasterResponse):
            self._role(event, before, view, rules.on_elect_reply(before.role_state, response),
                       f"electMaster reply {response.code.name}", True, out)
        elif isinstance(response, GetReplicaInfoResponse):
            poll = rules.on_replica_info(before.role_state, response)
            if poll.outcome is PollOutcome.CHANGE_ROLE:
                self._role(event, before, view, poll.role, "getReplicaInfo poll", True, out)
            elif poll.outcome is PollOutcome.APPLY_SYNC_STATE_SET and before.sync_state is not None:
                _, applied = rules.apply_sync_state_set(before.sync_state, *poll.sync_state_set)
                self._sync_state(event, before, view, applied, "getReplicaInfo poll", out)
        elif isinstance(response, AlterSyncStateSetResponse) and before.sync_state is not None:
            _, applied = rules.on_alter_sync_state_set_reply(before.sync_state, response)
            self._sync_state(event, before, view, applied, f"alterSyncStateSet reply {response.code.name}", out)

    def _sync_state(self, event, before, view, expected, source: str, out) -> None:
        self.judged["apply_sync_state_set"] += 1
        if view.sync_state not in (before.sync_state, expected) and view.role_state == before.role_state:
            out.append(violation("apply_sync_state_set", event.node, f"{event.node} at t={event.time} ms, {source}",
                                 _sss(expected), _sss(view.sync_state)))

    def _proposals(self, rules: BrokerRules, node: _Broker, event, before, view, out) -> None:
        state = before.sync_state
        for m in event.outputs:
            if not (isinstance(m.payload, ControllerCall) and isinstance(m.payload.request, AlterSyncStateSetRequest)):
                continue
            r = m.payload.request
            what = f"{event.node} at t={event.time} ms, alterSyncStateSet {sorted(r.new_sync_state_set)}"
            self.judged["maybe_shrink"] += 1
            self.judged["maybe_expand"] += 1
            role = before.role_state
            if state is None or role.role is not Role.MASTER:
                out.append(violation("maybe_expand", event.node, what, "alters only from a master", _role(role)))
                continue
            if (r.master_broker_id, r.master_epoch, r.sync_state_set_epoch) != (role.broker_id, role.master_epoch,
                                                                                state.local_epoch):
                out.append(violation("maybe_expand", event.node, what,
                                     f"master {role.broker_id}, masterEpoch {role.master_epoch}, "
                                     f"syncStateSetEpoch {state.local_epoch}",
                                     f"master {r.master_broker_id}, masterEpoch {r.master_epoch}, "
                                     f"syncStateSetEpoch {r.sync_state_set_epoch}"))
            if role.broker_id not in r.new_sync_state_set:
                out.append(violation("maybe_shrink", event.node, what, f"the master {role.broker_id} stays a member",
                                     "it drops itself"))
            self._expansion(rules, node, event, before, r.new_sync_state_set - state.local, what, out)

    def _expansion(self, rules: BrokerRules, node: _Broker, event, before, added, what: str, out) -> None:
        if not added:
            return
        entry = find_entry_by_epoch(before.epoch_file, before.role_state.master_epoch)
        epoch_start = entry.start_offset if entry is not None else 0
        acks = self._member_acks(node)
        learners = {broker_id for broker_id, learner in node.slaves.values() if learner}
        for member in sorted(added):
            ack = acks.get(member, -1)
            decision = maybe_expand(before.sync_state.local, member, ack, before.confirm_offset, epoch_start,
                                    member in learners)
            if decision.outcome is not ExpandOutcome.EXPAND:
                outcome = "not connected" if member not in acks else decision.outcome.name
                out.append(violation("maybe_expand", event.node, what,
                                     f"{member} joins only when maybe_expand says EXPAND (ack {ack}, confirmOffset "
                                     f"{before.confirm_offset}, epoch start {epoch_start})", f"{member} added: {outcome}"))

    # ------------------------------------------------------------------ confirmOffset and writes

    def _confirm_offset(self, rules: BrokerRules, node: _Broker, event, before, view, out) -> None:
        if view.confirm_offset <= before.confirm_offset or view.sync_state is None or view.role_state.role is not Role.MASTER:
            return
        in_use = rules.in_use(view.sync_state)
        self.judged["compute_master_confirm_offset"] += 1
        decision = rules.compute_master_confirm_offset(view.max_offset, in_use, view.broker_id, self._member_acks(node),
                                                       before.confirm_offset)
        if decision.outcome is not ConfirmOutcome.COMPUTED or view.confirm_offset > decision.confirm_offset:
            bound = (f"it stays at {before.confirm_offset}: {', '.join(map(str, decision.unconnected))} reported no ack"
                     if decision.outcome is not ConfirmOutcome.COMPUTED else f"at most {decision.confirm_offset}")
            out.append(violation("compute_master_confirm_offset", event.node,
                                 f"{event.node} at t={event.time} ms, in-sync {sorted(in_use)}, acks "
                                 f"{dict(sorted(self._member_acks(node).items()))}",
                                 bound, f"confirmOffset {view.confirm_offset}"))

    def _admission(self, rules: BrokerRules, event, before, produce: Produce, out) -> None:
        decision = rules.admission(before.role_state, before.sync_state)
        self.judged["put_message"] += 1
        for m in event.outputs:
            p = m.payload
            if isinstance(p, ProduceResult) and p.msg_id == produce.msg_id and not decision.admitted \
                    and p.status != decision.status.value:
                out.append(violation("put_message", event.node, f"{event.node} at t={event.time} ms, write {p.msg_id}",
                                     f"{decision.status.value} ({decision.check})", p.status))

    def _acknowledged(self, rules: BrokerRules, node: _Broker, event, view, out) -> None:
        for m in event.outputs:
            p = m.payload
            if not (isinstance(p, ProduceResult) and p.status == PutMessageStatus.PUT_OK.value):
                continue
            what = f"{event.node} at t={event.time} ms, write {p.msg_id} acknowledged"
            entry = next((e for e in view.log if e.msg_id == p.msg_id), None)
            if entry is None or view.sync_state is None:
                out.append(violation("put_message", event.node, what, "a write the master holds, as master",
                                     "not in its log" if entry is None else "not a master"))
                continue
            in_use = rules.in_use(view.sync_state)
            need = rules.check_write_admission(attrs.evolve(view.role_state, fenced=False, role=Role.MASTER), in_use,
                                               rules.config).need_ack_nums
            acks = self._member_acks(node)
            status = rules.replication_status(need, entry.end, in_use, view.broker_id, acks, event.time, _NEVER)
            if status is not ReplicationOutcome.PUT_OK:
                out.append(violation("put_message", event.node, what,
                                     f"PUT_OK once the in-sync members {sorted(in_use)} acked offset {entry.end}",
                                     f"acks {dict(sorted(acks.items()))}"))


def _following(view: BrokerNodeView) -> Optional[tuple]:
    """(master, masterEpoch) a slave follows; None for a broker that is not a slave."""
    role = view.role_state
    return (role.master_address, role.master_epoch) if role.role is Role.SLAVE else None


def _role(state) -> str:
    return (f"{state.role.name} (masterEpoch {state.master_epoch}, master {state.master_broker_id}, "
            f"{'fenced' if state.fenced else 'unfenced'})")


def _sss(state) -> str:
    if state is None:
        return "no SyncStateSet"
    proposed = "" if state.proposed is None else f", proposed {sorted(state.proposed)}"
    return f"{sorted(state.local)} at epoch {state.local_epoch}{proposed}"


def _short_note(note: NotifyBrokerRoleChanged) -> str:
    return (f"(master {note.master_broker_id}, masterEpoch {note.master_epoch}, SyncStateSet "
            f"{sorted(note.sync_state_set)} at {note.sync_state_set_epoch})")
