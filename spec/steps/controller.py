"""Step conformance of RIP-44 controller nodes (``spec/steps/__init__.py`` says what a step is).

``ControllerSteps.check(event)`` judges one step of one controller node against the
declared profile's procedures (``spec.controller.rules.ControllerRules`` with the
scenario's config) and returns the violations. A controller's view reports every
request it decided since its previous view (``ControllerNodeView.decisions``: API,
trigger, request, response, events, the metadata before and after, the liveness it
judged brokers by); each is judged, with the node's answers and notifications:

| property | what must hold |
|---|---|
| ``controller_not_leader`` | a node that is not active answers every call with the API's CONTROLLER_NOT_LEADER reply, and an active one never does |
| ``register_broker``, ``elect_master``, ``alter_sync_state_set``, ``clean_broker_data``, ``apply_broker_id``, ``get_next_broker_id``, ``get_replica_info`` | a decision's reply and events are the API's on metadata the node had applied, with broker liveness as the heartbeats it received make it (the checker's own heartbeat table, not the node's) at the decision's instant; an answer goes to a call the node received, with the reply it decided (or, when it reports no decision, a reply the API gives on metadata it held); a successful election notifies (NOTIFY_BROKER_ROLE_CHANGED) every registered broker of the set that is alive by every possible heartbeat table, with its result, and nobody else |
| ``apply_event`` | the metadata after a decision is its events applied (``apply_event``) to the metadata before |
| ``trigger_elect_master`` | a controller elects on its own only for a set whose recorded master is dead (the expiry scan: the master's heartbeat expired; the re-elect scan: ``scan_need_reelect_broker_sets``), trying as ``trigger_elect_master`` does (until a SUCCESS, at most electMasterMaxRetryCount tries) |

Hidden state rebuilt from the inputs: the heartbeat table (``on_broker_heartbeat`` per
``BrokerHeartbeat`` received; a successful registration records one too, as upstream's
registerBroker does), the calls received and not yet answered, and the metadata the
node applied (every view's, and each judged decision's after).

Freedoms (docs/step-conformance.md): *when* a controller decides a call (any instant
between its arrival and its answer, on the metadata it had then), when it scans
(the expiry scan's instant decides whether a broker that heartbeats again after its
entry expired gets a fresh entry or an updated one: both tables are kept), whether a
scan happens at all by a given time (the ``no_stuck_dead_master`` invariant bounds
that), which controller is active (the DLedger election inside a group, or a fixed
leader), and everything between controllers (their own protocol).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from typing import Any, Optional

import attrs

from spec.broker.messages import BrokerNodeConfig
from spec.controller.api import controller_not_leader
from spec.controller.heartbeat import BrokerHeartbeat, HeartbeatLiveness, HeartbeatTable
from spec.controller.messages import ControllerAnswer, ControllerCall, ControllerNodeView, NotifyBrokerRoleChanged
from spec.controller.records import (
    DEFAULT_CONFIG,
    EMPTY_METADATA,
    ControllerConfig,
    BrokerIdentity,
    ControllerMetadata,
    ElectMasterResponse,
    RegisterBrokerRequest,
    RESPONSE_TYPE_OF,
    ResponseCode,
)
from spec.controller.rules import API_OF_REQUEST, ControllerRules, UnsupportedRequest
from spec.steps import NodeSteps, StepEvent, StepViolation, step_property, violation
from spec.steps.broker import BrokerSteps

PROCEDURES: dict[str, str] = {
    "controller_not_leader": "a controller that is not active answers CONTROLLER_NOT_LEADER, an active one never does",
    **{api: f"a {api} call is decided (and answered) as the API says on applied metadata and the heartbeats received"
       for api in API_OF_REQUEST.values()},
    "apply_event": "the metadata after a decision is its events applied to the metadata before",
    "trigger_elect_master": "a controller elects on its own only for a set whose master is dead, as triggerElectMaster tries",
}
_API_OF_RESPONSE = {response: API_OF_REQUEST[request] for request, response in RESPONSE_TYPE_OF.items()}
PROPERTIES: tuple[str, ...] = tuple(step_property(p) for p in PROCEDURES)

# more possible heartbeat tables of one node than this are not kept (in practice one or two)
MAX_TABLES = 8
# heartbeat tables older than this (ms) are forgotten (a decision is reported at its commit)
TABLE_HISTORY_MS = 60_000
# metadata states a decision may have been made on (the node's most recent ones)
MAX_KNOWN_METADATA = 64
_SCAN_TRIGGERS = ("expiry_scan", "reelect_scan")


@attrs.define(slots=True)
class _Controller:
    view: Optional[ControllerNodeView] = None
    # (time, possible heartbeat tables after the inputs at that time), in time order
    times: list = attrs.field(factory=list)
    tables: list = attrs.field(factory=list)
    known: list = attrs.field(factory=lambda: [EMPTY_METADATA])  # metadata it applied, newest last
    # (src, call_id) -> [[request, arrived at, copies not answered], ...]: a broker that restarts
    # numbers its calls from scratch (upstream's opaque is a per-process counter; its new
    # connection keeps them apart), so one key may name calls of several incarnations
    calls: dict = attrs.field(factory=dict)
    registered: list = attrs.field(factory=list)  # (time, RegisterBrokerRequest) of successful registrations

    def remember(self, metadata: ControllerMetadata) -> None:
        recent = self.known[-8:]
        if any(m is metadata for m in recent) or metadata in recent:
            return
        self.known.append(metadata)
        del self.known[:-MAX_KNOWN_METADATA]

    def holds(self, metadata: ControllerMetadata) -> bool:
        return any(m is metadata for m in self.known) or metadata in self.known

    def current_tables(self) -> tuple:
        return self.tables[-1] if self.tables else (HeartbeatTable(),)

    def push_tables(self, now: int, tables: tuple) -> None:
        self.times.append(now)
        self.tables.append(tables)
        cut = bisect_left(self.times, now - TABLE_HISTORY_MS)
        if cut > 1:  # keep one snapshot from before the window: the state at its start
            del self.times[:cut - 1], self.tables[:cut - 1]

    def tables_at(self, instant: int) -> tuple:
        """Every table the node may have judged by at ``instant``: the last one before it
        and each one of that instant (inputs of one instant may come before or after)."""
        lo, hi = bisect_left(self.times, instant), bisect_right(self.times, instant)
        found = list(self.tables[lo - 1]) if lo > 0 else [HeartbeatTable()]
        for k in range(lo, hi):
            found += self.tables[k]
        return tuple(dict.fromkeys(found))


def _expired_before(node: _Controller, cluster: str, name: str, broker_id: int, instant: int) -> bool:
    """Whether the broker's heartbeat had expired, before ``instant``, in a table the node
    held (in its history): the expiry scan finds an inactive master and its election
    comes later, from the node's event queue (upstream's onBrokerInactive ->
    triggerElectMaster is an event too), maybe after the master heartbeated again."""
    for k, tables in enumerate(node.tables):
        if node.times[k] > instant:
            break
        until = min(instant, node.times[k + 1] - 1) if k + 1 < len(node.times) else instant
        if any(not HeartbeatLiveness(t, until).is_alive(cluster, name, broker_id) for t in tables):
            return True
    return False


def _identity(request) -> BrokerIdentity:
    return BrokerIdentity(request.cluster_name, request.broker_name, request.broker_id)


def _call_answered(same: list, response, decided: dict) -> list:
    """Which of the calls received under one (src, call_id) an answer is to: the one this
    step decided with that reply, else the newest one of the reply's kind, else the newest."""
    for call in reversed(same):
        if response in decided.get(call[0], ()):
            return call
    kind = type(response)
    return next((c for c in reversed(same) if RESPONSE_TYPE_OF.get(type(c[0])) is kind), same[-1])


def _dedupe(tables) -> tuple:
    if len(tables) == 1:
        return tuple(tables)
    return tuple(dict.fromkeys(tables))[:MAX_TABLES]


class ControllerSteps(NodeSteps):
    """Judges each step of every controller node against the declared profile."""

    def __init__(self, profile: str, config: ControllerConfig = DEFAULT_CONFIG):
        super().__init__()
        self.rules = ControllerRules.for_profile(profile, config)
        self.judged: Counter = Counter()  # steps judged per procedure

    def start(self, event: StepEvent) -> _Controller:
        return _Controller()

    def booted(self, node: _Controller, event: StepEvent, out: list) -> None:
        self.judge(node, event, out)  # (a start's view, or the first step seen, judged as any)

    def judge(self, node: _Controller, event: StepEvent, out: list) -> None:
        before, view = node.view, event.view
        payload = event.payload
        if isinstance(payload, BrokerHeartbeat):
            node.push_tables(event.time, self._heartbeat(node.current_tables(), payload, event.time))
        elif isinstance(payload, ControllerCall) and type(payload.request) in API_OF_REQUEST:
            same = node.calls.setdefault((event.src, payload.call_id), [])
            call = next((c for c in same if c[0] == payload.request), None)
            if call is None:
                call = [payload.request, event.time, 0]
                same.append(call)
            call[2] += 1  # (a duplicated call may be answered once per copy)
        if isinstance(view, ControllerNodeView):
            if before is None or view.metadata is not before.metadata:
                node.remember(view.metadata)
            self._decisions(node, event, before, view, out)
            self._outputs(node, event, before, view, out)
            node.view = view

    # ------------------------------------------------------------------ liveness

    def _heartbeat(self, tables, beat: BrokerHeartbeat, now: int) -> tuple:
        """The tables after a heartbeat; an entry that expired may have been scanned away
        first (the scan's instant is the implementation's), giving a fresh entry instead."""
        identity = beat.identity
        after = []
        for table in tables:
            info = table.get(identity)
            variants = [table]
            if info is not None and now - info.last_update_timestamp > info.heartbeat_timeout_millis:
                variants.append(HeartbeatTable(table.entries.remove(identity)))
            after += [self.rules.on_broker_heartbeat(v, beat, now) for v in variants]
        return _dedupe(after)

    def _livenesses(self, node: _Controller, instant: int) -> tuple:
        """Every liveness the node may have judged by at ``instant``. An implementation may
        also count a successful registration as a heartbeat (rmqha's reference does; 5.1.4's
        ControllerRequestProcessor does not): each table is also taken with the
        registrations since then recorded."""
        tables = node.tables_at(instant)
        registered = [(t, r) for t, r in node.registered if instant - TABLE_HISTORY_MS <= t <= instant]
        if registered:
            more = []
            for table in tables:
                variants = (table,)
                for at, r in registered:
                    beat = BrokerHeartbeat(r.cluster_name, r.broker_name, r.broker_address, r.broker_id)
                    after = []
                    for t in variants:
                        info = t.get(_identity(r))
                        # (at the heartbeat's own instant either may have come first: the table
                        # without the registration stays among the others)
                        if info is None or info.last_update_timestamp <= at:
                            # an expired entry may have been scanned away first: the
                            # registration then makes a fresh one, without the epoch and
                            # offsets of the broker's last heartbeat (seed 40021)
                            after += self._heartbeat((t,), beat, at)
                        else:
                            after.append(t)
                    variants = _dedupe(after)
                more += variants
            # not capped: the tables with the registrations are the likelier ones (rmqha's
            # reference records them), and cutting the list at MAX_TABLES dropped them all
            # once a partition had left 2^3 tables (a false step-conformance:elect_master)
            tables = tuple(dict.fromkeys(tables + tuple(more)))
        return tuple(HeartbeatLiveness(t, instant) for t in tables)

    # ------------------------------------------------------------------ decisions

    def _handle(self, metadata, request, liveness):
        try:
            return self.rules.handle(metadata, request, liveness)
        except UnsupportedRequest:
            return None

    def _decisions(self, node: _Controller, event: StepEvent, before, view: ControllerNodeView, out) -> None:
        # a scan's tries for one set: (trigger, broker name, [decisions]), committed as one entry
        chains: list[tuple] = []
        for d in view.decisions:
            if d.trigger in _SCAN_TRIGGERS:
                name = d.request.broker_name
                last = chains[-1] if chains else None
                if last is not None and last[:2] == (d.trigger, name) and last[2][-1].response.code != ResponseCode.SUCCESS:
                    last[2].append(d)
                else:
                    chains.append((d.trigger, name, [d]))
            else:
                chains.append((d.trigger, None, [d]))
        for chain in chains:
            tries = chain[2]
            for k, d in enumerate(tries):
                # one entry carries every try: the metadata after may be the whole entry's
                rest = tuple(e for later in tries[k:] for e in later.events)
                self._decision(node, event, before, view, d, rest, out)
            if chain[1] is not None:
                self._scan(node, event, chain, out)

    def _decision(self, node: _Controller, event: StepEvent, before, view, d, rest: tuple, out) -> None:
        what = _What(event, d)
        self.judged["controller_not_leader" if d.liveness is None else d.api] += 1
        if d.liveness is None:  # answered as a node that is not the leader
            expected = controller_not_leader(d.request).response
            if d.response != expected:
                out.append(violation("controller_not_leader", event.node, what, _short(expected), _short(d.response)))
            if before is not None and before.active and view.active:
                out.append(violation("controller_not_leader", event.node, what, "an active controller decides the call",
                                     "CONTROLLER_NOT_LEADER"))
            return
        if before is not None and not before.active and not view.active and d.trigger == "call":
            out.append(violation("controller_not_leader", event.node, what, "CONTROLLER_NOT_LEADER (the node is not active)",
                                 f"decided as the leader: {_short(d.response)}"))
            return
        if not node.holds(d.before):
            out.append(violation(d.api, event.node, what, "a decision on metadata the node had applied",
                                 "metadata it never held"))
            return
        instant = d.liveness.now
        if instant > event.time:
            out.append(violation(d.api, event.node, what, f"a decision at or before t={event.time}",
                                 f"liveness read at t={instant}"))
            return
        results = [r for r in (self._handle(d.before, d.request, live) for live in self._livenesses(node, instant))
                   if r is not None]
        if results and not any(r.response == d.response and tuple(r.events) == tuple(d.events) for r in results):
            expected = results[0]
            out.append(violation(d.api, event.node, what,
                                 f"{_short(expected.response)} with events {_events(expected.events)} "
                                 f"({self.rules.profile.name}, row {expected.check})",
                                 f"{_short(d.response)} with events {_events(d.events)}"))
        applied = self.rules.apply(d.before, d.events)
        self.judged["apply_event"] += 1
        node.remember(applied)  # the next try of a scan decides on it
        if applied != d.after and self.rules.apply(d.before, rest) != d.after:
            out.append(violation("apply_event", event.node, what, f"metadata {_meta(applied, d.request)}",
                                 f"metadata {_meta(d.after, d.request)}"))
        if isinstance(d.request, RegisterBrokerRequest) and d.response.code == ResponseCode.SUCCESS:
            node.registered = [(t, r) for t, r in node.registered if t >= event.time - TABLE_HISTORY_MS]
            node.registered.append((instant, d.request))

    def _scan(self, node: _Controller, event: StepEvent, chain: tuple, out) -> None:
        """A controller's own election: for a set whose master is dead, tried as
        ``trigger_elect_master`` tries (each try on the previous one's metadata)."""
        trigger, name, tries = chain
        first = tries[0]
        if first.liveness is None or not node.holds(first.before):
            return  # judged (and reported) as a decision
        what = f"{event.node} at t={event.time} ms, {trigger} election of {name}"
        self.judged["trigger_elect_master"] += 1
        lives = self._livenesses(node, first.liveness.now)
        if trigger == "reelect_scan":
            due = any(name in self.rules.scan_need_reelect_broker_sets(first.before, live) for live in lives)
            why = "a set recording a dead master while a replica lives (scan_need_reelect_broker_sets)"
        else:
            known = first.before.known(name)
            master = known.sync_state.master_broker_id if known is not None else None
            due = master is not None and (
                any(not live.is_alive(known.cluster_name, name, master) for live in lives)
                or _expired_before(node, known.cluster_name, name, master, first.liveness.now))
            why = "a set whose recorded master's heartbeat expired (onBrokerInactive)"
        if not due:
            out.append(violation("trigger_elect_master", event.node, what, f"an election only for {why}",
                                 f"an election of {name}"))
            return
        # each try is judged as an electMaster on its own (above); here: how many there are
        codes = [d.response.code for d in tries]
        retries = self.rules.config.elect_master_max_retry_count
        succeeded = ResponseCode.SUCCESS in codes
        if (succeeded and codes.index(ResponseCode.SUCCESS) != len(codes) - 1) or len(codes) > retries or (
                not succeeded and len(codes) < retries):
            out.append(violation("trigger_elect_master", event.node, what,
                                 f"tries until one succeeds, at most {retries} (electMasterMaxRetryCount)",
                                 f"{len(tries)} tries: {', '.join(c.name for c in codes)}"))

    # ------------------------------------------------------------------ outputs

    def _outputs(self, node: _Controller, event: StepEvent, before, view: ControllerNodeView, out) -> None:
        decided = {}
        for d in view.decisions:
            if d.trigger == "call":
                decided.setdefault(d.request, []).append(d.response)
        notified = []
        for m in event.outputs:
            payload = m.payload
            if isinstance(payload, ControllerAnswer):
                self._answer(node, event, m.dst, payload, decided, out)
            elif isinstance(payload, NotifyBrokerRoleChanged):
                notified.append((m.dst, payload))
        elections = [d for d in view.decisions if isinstance(d.response, ElectMasterResponse)
                     and d.response.code == ResponseCode.SUCCESS]
        if notified or elections:
            self._notifications(node, event, elections, notified, out)

    def _answer(self, node: _Controller, event: StepEvent, dst: str, answer: ControllerAnswer, decided, out) -> None:
        same = node.calls.get((dst, answer.call_id))
        what = f"{event.node} at t={event.time} ms, answer {answer.call_id} to {dst}"
        if not same:
            out.append(violation(_API_OF_RESPONSE.get(type(answer.response), "controller_not_leader"), event.node, what,
                                 "an answer to a call received and not yet answered", _short(answer.response)))
            return
        call = _call_answered(same, answer.response, decided)
        request = call[0]
        self.judged[API_OF_REQUEST[type(request)]] += 1
        call[2] -= 1
        if call[2] == 0:
            same.remove(call)
            if not same:
                del node.calls[(dst, answer.call_id)]
        responses = decided.get(request)
        if responses is not None:
            if answer.response not in responses:
                out.append(violation(API_OF_REQUEST[type(request)], event.node, what,
                                     f"the reply decided: {_short(responses[0])}", _short(answer.response)))
            return
        # no decision reported for it: judge the reply itself, on any metadata the node held
        api = API_OF_REQUEST[type(request)]
        if answer.response.code == ResponseCode.CONTROLLER_NOT_LEADER:
            expected = controller_not_leader(request).response
            if answer.response != expected:
                out.append(violation("controller_not_leader", event.node, what, _short(expected), _short(answer.response)))
            return
        lives = self._livenesses(node, event.time)
        results = [r for r in (self._handle(m, request, live) for m in node.known for live in lives) if r is not None]
        if results and not any(r.response == answer.response for r in results):
            out.append(violation(api, event.node, what, f"{_short(results[-1].response)} ({self.rules.profile.name})",
                                 _short(answer.response)))

    def _notifications(self, node: _Controller, event: StepEvent, elections, notified, out) -> None:
        if not self.rules.config.notify_broker_role_changed:
            return
        what = f"{event.node} at t={event.time} ms"
        lives = self._livenesses(node, event.time)
        sent = {}
        for d in elections:
            r = d.response
            note = NotifyBrokerRoleChanged(d.request.broker_name, r.master_broker_id, r.master_address, r.master_epoch,
                                           r.sync_state_set_epoch, frozenset(r.sync_state_set or ()))
            known = d.after.known(d.request.broker_name)
            if known is None:
                continue
            ids_at: dict[str, list[int]] = {}  # a replaced machine's address holds its old ids too
            for i, reg in known.replicas.brokers.items():
                ids_at.setdefault(reg.address, []).append(i)
            alive = {i: [live.is_alive(known.cluster_name, note.broker_name, i) for live in lives]
                     for i in known.replicas.brokers}
            # an address may be notified when some table the node may have judged by holds one
            # of its ids alive (upstream's notifyBrokerRoleChanged skips inactive brokers); it
            # must be when every table holds one id alive
            sent[note] = {a for a, ids in ids_at.items() if any(any(alive[i]) for i in ids)}
            must = sorted(a for a, ids in ids_at.items() if any(all(alive[i]) for i in ids))
            got = {dst for dst, p in notified if p == note}
            missing = [a for a in must if a not in got]
            if missing:
                out.append(violation("elect_master", event.node, f"{what}, election of {_short(r)}",
                                     f"a notification to every live member ({', '.join(must)})",
                                     f"none to {', '.join(missing)}"))
        for dst, payload in notified:
            if payload not in sent or dst not in sent[payload]:
                out.append(violation("elect_master", event.node, f"{what}, to {dst}",
                                     "a notification of an election decided in this step, to a live member of its set",
                                     _short(payload)))


# ------------------------------------------------------------------ rendering


class _What:
    """A violation's subject, rendered only when one is reported."""

    __slots__ = ("event", "decision")

    def __init__(self, event: StepEvent, decision) -> None:
        self.event, self.decision = event, decision

    def __str__(self) -> str:
        d = self.decision
        return f"{self.event.node} at t={self.event.time} ms, {d.api} ({d.trigger}) of {_short(d.request)}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _short(value: Any) -> str:
    """A record without its empty fields, for messages."""
    if not attrs.has(type(value)):
        return repr(value)
    fields = []
    for a in attrs.fields(type(value)):
        v = getattr(value, a.name)
        if v is None or v == () or v == frozenset():
            continue
        v = getattr(v, "name", v)
        if isinstance(v, frozenset):
            v = sorted(v)
        fields.append(f"{a.name}={_short(v) if attrs.has(type(v)) else v}")
    return f"{type(value).__name__}({', '.join(fields)})"


def _events(events) -> str:
    return "[" + ", ".join(_short(e) for e in events) + "]"


def _meta(metadata: ControllerMetadata, request) -> str:
    name = getattr(request, "broker_name", None)
    found = metadata.get(name) if name is not None else None
    return _short(found.sync_state) if found is not None and found.sync_state is not None else repr(found)


class ControllerStackSteps:
    """The controller scenario's nodes: controllers judged by ``ControllerSteps``, brokers by
    ``spec.steps.broker.BrokerSteps``."""

    def __init__(self, controllers, profile: str, config: ControllerConfig, brokers: dict[str, BrokerNodeConfig]):
        self.controllers = frozenset(controllers)
        self.controller = ControllerSteps(profile, config)
        self.broker = BrokerSteps(brokers)

    def check(self, event: StepEvent) -> list[StepViolation]:
        return (self.controller if event.node in self.controllers else self.broker).check(event)

    @property
    def judged(self) -> Counter:
        return self.controller.judged + self.broker.judged

