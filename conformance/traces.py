"""Step traces: one JSON line per step of a node, written by an implementation's logging
hook (or by rmqha's own runs) and judged offline by ``rmqha validate``.

The format (``rmqha-trace/1``, docs/traces.md): a header line, then one event per line

    {"trace": "rmqha-trace/1", "kind": "dledger", "nodes": ["n1", "n2", "n3"],
     "profile": "dledger-0.4", "implementation": "...", "persist": "each-step"}
    {"node": "n1", "time": 0, "input": "boot", "view": {...}}
    {"node": "n1", "time": 10, "input": "tick", "view": {...}, "outputs": [{"dst": "n2", "payload": {...}}],
     "persist": {...}}
    {"node": "n2", "time": 14, "input": "message", "src": "n1", "payload": {...}, "view": {...}, "outputs": [...]}
    {"node": "n1", "time": 900, "input": "crash"}

Records are the adapter protocol's JSON (``adapters/codec.py``). A view may give its
log as ``log_from`` and ``log_tail`` instead of ``log``: the entries from index
``log_from`` on, those below as in the same node's previous view, so a long run's
trace grows with what changes, not with the log. The reader streams: memory is the
checker's state (a view and a little hidden state per node), never the trace's length.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import IO, Any, Iterable, Iterator

import attrs

from adapters import codec
from conformance.errors import UserError, quoted
from spec.broker.messages import BrokerNodeConfig, BrokerNodeView
from spec.controller.messages import ControllerNodeView
from spec.controller.profiles import PROFILES as CONTROLLER_PROFILES
from spec.controller.records import DEFAULT_CONFIG as DEFAULT_CONTROLLER_CONFIG, ControllerConfig
from spec.dledger.profiles import DEFAULT_TIMING, PROFILES, Timing
from spec.dledger.records import DLedgerView, Entry
from spec.steps import INPUTS, MESSAGE, Sent, StepEvent, StepViolation
from spec.steps.controller import ControllerStackSteps
from spec.steps.dledger import DLedgerSteps
from spec.steps.replica import ReplicaSteps
from spec.truncation.messages import ReplicaView

TRACE_FORMAT = "rmqha-trace/1"
# node kinds whose steps a trace can be judged for: (view record, the type of its log's entries)
VIEWS = {"dledger": (DLedgerView, tuple[Entry, ...]), "replica": (ReplicaView, tuple[tuple[int, int, str], ...])}
# ("controller": a controller group and the brokers of one set, the controller scenario's
# nodes, each view whole: _StackDecoder)
KINDS = tuple(VIEWS) + ("controller",)
KIND_NAMES = {"dledger": "DLedger", "replica": "replica", "controller": "controller"}
# the profiles a replica trace may declare (the truncation scenario's spec has one)
REPLICA_PROFILES = ("rocketmq-5.1",)
# scenarios whose runs write step traces (rmqha replay --step-trace): (node kind, default profile)
SCENARIO_TRACES = {"dledger": ("dledger", "dledger-0.4"), "truncation": ("replica", REPLICA_PROFILES[0]),
                   "controller": ("controller", "rocketmq-5.1")}
_LOG_FIELDS = ("log_from", "log_tail")


class TraceError(UserError):
    """A trace that cannot be read (one line naming the file, line and field)."""


@attrs.frozen(slots=True)
class TraceHeader:
    kind: str
    nodes: tuple[str, ...]
    profile: str | None
    implementation: str = ""
    persist: str = "at-crash"  # "each-step": every step that changes term/vote/log persists
    timing: Timing = DEFAULT_TIMING
    # kind "controller": which nodes are controllers (the others are brokers), the
    # controllers' ControllerConfig and each broker's BrokerNodeConfig
    controllers: tuple[str, ...] = ()
    controller_config: ControllerConfig = DEFAULT_CONTROLLER_CONFIG
    brokers: tuple = ()  # ((node, BrokerNodeConfig), ...)


@attrs.frozen(slots=True)
class Finding:
    line: int
    event: StepEvent
    violation: StepViolation


@attrs.define(slots=True)
class Validation:
    """What ``validate`` saw: events judged, per procedure, and the violations found."""

    header: TraceHeader
    profile: str
    events: int = 0
    nodes: set = attrs.Factory(set)
    judged: Counter = attrs.Factory(Counter)
    findings: list = attrs.Factory(list)


# ------------------------------------------------------------------ reading


def _header(line: str, where: str) -> TraceHeader:
    try:
        raw = json.loads(line)
    except ValueError as exc:
        raise TraceError(f"{where}: not JSON ({exc})") from None
    if not isinstance(raw, dict) or raw.get("trace") != TRACE_FORMAT:
        raise TraceError(f"{where}: not an {TRACE_FORMAT} header (the first line must be "
                         f'{{"trace": "{TRACE_FORMAT}", "kind": ..., "nodes": [...], ...}})')
    kind = raw.get("kind")
    if kind not in KINDS:
        raise TraceError(f"{where}: kind {quoted(kind)} cannot be validated (known: {', '.join(KINDS)})")
    nodes = raw.get("nodes")
    if not (isinstance(nodes, list) and nodes and all(isinstance(n, str) for n in nodes)
            and len(set(nodes)) == len(nodes)):
        raise TraceError(f"{where}: nodes must be a non-empty list of distinct node ids")
    persist = raw.get("persist", "at-crash")
    if persist not in ("each-step", "at-crash"):
        raise TraceError(f"{where}: persist must be 'each-step' or 'at-crash', not {quoted(persist)}")
    timing = DEFAULT_TIMING
    if raw.get("timing") is not None:
        try:
            timing = Timing(**raw["timing"])
        except TypeError as exc:
            raise TraceError(f"{where}: timing: {exc}") from None
    profile = raw.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise TraceError(f"{where}: profile must be a string")
    header = TraceHeader(kind, tuple(nodes), profile, str(raw.get("implementation", "")), persist, timing)
    return _stack_header(header, raw, where) if kind == "controller" else header


def _stack_header(header: TraceHeader, raw: dict, where: str) -> TraceHeader:
    """A controller-kind header's ``controllers`` (required), ``controller_config`` and
    ``brokers`` (node -> BrokerNodeConfig; default: upstream's defaults)."""
    controllers = raw.get("controllers")
    if not (isinstance(controllers, list) and controllers and set(controllers) <= set(header.nodes)):
        raise TraceError(f"{where}: controllers must be a non-empty list of the header's nodes")
    try:
        config = codec.decode(raw.get("controller_config") or codec.encode(DEFAULT_CONTROLLER_CONFIG),
                              ControllerConfig, codec.registry("controller"), "controller_config")
        configured = raw.get("brokers") or {}
        if not isinstance(configured, dict):
            raise codec.CodecError("brokers", "expected {node: BrokerNodeConfig}")
        brokers = tuple(
            (n, codec.decode(configured[n], BrokerNodeConfig, codec.registry("broker"), f"brokers.{n}")
             if n in configured else BrokerNodeConfig("", "", tuple(controllers)))
            for n in header.nodes if n not in controllers)
    except codec.CodecError as exc:
        raise TraceError(f"{where}: {exc}") from None
    return attrs.evolve(header, controllers=tuple(controllers), controller_config=config, brokers=brokers)


class _Decoder:
    """Turns event lines into StepEvents, keeping each node's last log for ``log_tail``."""

    def __init__(self, header: TraceHeader):
        self.nodes = frozenset(header.nodes)
        self.reg = codec.registry(codec.NODE_NAMESPACES[header.kind])
        self.view_type, self.log_type = VIEWS[header.kind]
        self.logs: dict[str, tuple] = {}
        self.persisted: dict[str, tuple] = {}  # node -> the log of its last persist

    def event(self, raw: Any) -> StepEvent:
        if not isinstance(raw, dict):
            raise codec.CodecError("", "an event is a JSON object")
        node, time, kind = raw.get("node"), raw.get("time"), raw.get("input")
        if node not in self.nodes:
            raise codec.CodecError("node", f"{quoted(node)} is not one of the header's nodes")
        if isinstance(time, bool) or not isinstance(time, int):
            raise codec.CodecError("time", f"expected an integer (ms), got {quoted(time)}")
        if kind not in INPUTS:
            raise codec.CodecError("input", f"expected one of {', '.join(INPUTS)}, got {quoted(kind)}")
        unknown = set(raw) - {"node", "time", "input", "src", "payload", "view", "outputs", "persist"}
        if unknown:
            raise codec.CodecError("", f"unknown field(s) {', '.join(sorted(unknown))}")
        if kind == "crash":
            self.logs.pop(node, None)
            return StepEvent(node, time, kind)
        if kind == "boot":
            self.persisted.pop(node, None)
        src = payload = None
        if kind == MESSAGE:
            src = raw.get("src")
            if not isinstance(src, str):
                raise codec.CodecError("src", "a message event needs its sender")
            payload = codec.decode(raw.get("payload"), Any, self.registry(node), "payload")
        before = self.logs.get(node)
        view = self._view(node, raw.get("view"))
        outputs = []
        for i, o in enumerate(raw.get("outputs") or ()):
            if not isinstance(o, dict) or not isinstance(o.get("dst"), str):
                raise codec.CodecError(f"outputs[{i}]", "expected {\"dst\": ..., \"payload\": ...}")
            outputs.append(Sent(o["dst"], codec.decode(o.get("payload"), Any, self.registry(node),
                                                       f"outputs[{i}].payload")))
        persist = self._persist(node, raw.get("persist"), raw.get("view"), before, getattr(view, "log", ()))
        return StepEvent(node, time, kind, src, payload, view, tuple(outputs), persist)

    def registry(self, node: str) -> codec.Registry:
        return self.reg

    def _log(self, raw: dict, prev: tuple, where: str) -> tuple:
        """The log given as ``log_from`` and ``log_tail`` after ``prev``."""
        start = raw["log_from"]
        if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= len(prev):
            raise codec.CodecError(f"{where}.log_from", f"must be an index within the node's previous log "
                                                        f"(0..{len(prev)}), got {start!r}")
        tail = codec.decode(raw.get("log_tail", []), self.log_type, self.reg, f"{where}.log_tail")
        return prev if not tail and start == len(prev) else prev[:start] + tail

    def _persist(self, node: str, raw: Any, raw_view: dict, view_before: tuple | None, view_log: tuple) -> Any:
        """A persisted DLedger state as {curr_term, voted_for, log} (its log possibly as a tail)."""
        if not isinstance(raw, dict) or not ("log" in raw or "log_from" in raw):
            return raw  # not a DLedger state: judged only if it reads as one
        prev = self.persisted.get(node, ())
        if "log" in raw:
            log = codec.decode(raw["log"], tuple[Entry, ...], self.reg, "persist.log")
        elif prev is view_before and all(raw.get(k) == raw_view.get(k) for k in _LOG_FIELDS):
            log = view_log  # the same change to the same log: one tuple for both (compared by identity)
        else:
            log = self._log(raw, prev, "persist")
        if log is not view_log and log == view_log:
            log = view_log  # one tuple from now on: later steps share it by identity
        self.persisted[node] = log
        return {"curr_term": raw.get("curr_term"), "voted_for": raw.get("voted_for"), "log": log}

    def _view(self, node: str, raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise codec.CodecError("view", "expected the node's view after the step")
        if "log" not in raw and "log_from" in raw:
            log = self._log(raw, self.logs.get(node, ()), "view")
            raw = {k: v for k, v in raw.items() if k not in _LOG_FIELDS}
            view = codec.decode({**raw, "log": []}, self.view_type, self.reg, "view")
            view = attrs.evolve(view, log=log)
        else:
            view = codec.decode(raw, self.view_type, self.reg, "view")
            prev = self.logs.get(node)
            if prev is not None and view.log == prev:
                view = attrs.evolve(view, log=prev)  # keep one tuple while the log stays the same
        self.logs[node] = view.log
        return view


class _StackDecoder(_Decoder):
    """A controller-kind trace: controllers' and brokers' views, each whole (no log tails)."""

    def __init__(self, header: TraceHeader):
        self.nodes = frozenset(header.nodes)
        self.controllers = frozenset(header.controllers)
        self.regs = {"controller": codec.registry("controller"), "broker": codec.registry("broker")}
        self.logs: dict[str, tuple] = {}
        self.persisted: dict[str, tuple] = {}

    def registry(self, node: str) -> codec.Registry:
        return self.regs["controller" if node in self.controllers else "broker"]

    def _view(self, node: str, raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise codec.CodecError("view", "expected the node's view after the step")
        kind = ControllerNodeView if node in self.controllers else BrokerNodeView
        return codec.decode(raw, kind, self.registry(node), "view")

    def _persist(self, node: str, raw: Any, raw_view: dict, view_before, view_log: tuple) -> Any:
        return raw  # not judged for these kinds


def read_events(lines: Iterable[str], name: str = "trace") -> tuple[TraceHeader, Iterator[tuple[int, StepEvent]]]:
    """The header and a lazy stream of (line number, event); bad lines raise TraceError."""
    it = iter(lines)
    first = next(it, None)
    if first is None or not first.strip():
        raise TraceError(f"{name}: empty trace: nothing to validate")
    header = _header(first, f"{name}:1")
    decoder = _StackDecoder(header) if header.kind == "controller" else _Decoder(header)

    def events() -> Iterator[tuple[int, StepEvent]]:
        for number, line in enumerate(it, 2):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                yield number, decoder.event(raw)
            except (ValueError, RecursionError) as exc:
                if isinstance(exc, codec.CodecError):
                    raise TraceError(f"{name}:{number}: {exc}") from None
                raise TraceError(f"{name}:{number}: not JSON ({str(exc)[:80]})") from None

    return header, events()


def validate(lines: Iterable[str], name: str = "trace", profile: str | None = None,
             stop_at_first: bool = True) -> Validation:
    """Judge every step of a trace with the step checker of its node kind."""
    header, events = read_events(lines, name)
    known = {"dledger": PROFILES, "controller": CONTROLLER_PROFILES}.get(header.kind, REPLICA_PROFILES)
    chosen = profile or header.profile or (REPLICA_PROFILES[0] if header.kind == "replica" else None)
    if chosen is None:
        raise TraceError(f"{name}: the trace declares no profile: pass --profile (known: {', '.join(known)})")
    if chosen not in known:
        raise TraceError(f"{name}: unknown {KIND_NAMES[header.kind]} profile {quoted(chosen)} (known: {', '.join(known)})")
    if header.kind == "replica":
        checker: Any = ReplicaSteps(header.nodes)
    elif header.kind == "controller":
        checker = ControllerStackSteps(header.controllers, chosen, header.controller_config, dict(header.brokers))
    else:
        checker = DLedgerSteps(header.nodes, PROFILES[chosen], header.timing, header.persist == "each-step")
    result = Validation(header, chosen)
    for number, event in events:
        result.events += 1
        result.nodes.add(event.node)
        for v in checker.check(event):
            result.findings.append(Finding(number, event, v))
        if result.findings and stop_at_first:
            break
    result.judged = checker.judged
    return result


# ------------------------------------------------------------------ writing


class TraceWriter:
    """Writes a run's steps as an ``rmqha-trace/1`` trace (logs as tails after the first view)."""

    def __init__(self, out: IO[str], kind: str, nodes: Iterable[str], profile: str | None,
                 implementation: str = "", persist: str = "each-step", stack: tuple | None = None):
        """``stack`` (kind "controller"): (controllers, ControllerConfig, {broker: BrokerNodeConfig})."""
        self.out = out
        self.kind = kind
        self.logs: dict[str, tuple] = {}
        self.persisted: dict[str, tuple] = {}
        header = {"trace": TRACE_FORMAT, "kind": kind, "nodes": list(nodes), "profile": profile,
                  "implementation": implementation, "persist": persist}
        if stack is not None:
            controllers, config, brokers = stack
            header.update(controllers=list(controllers), controller_config=codec.encode(config),
                          brokers={n: codec.encode(c) for n, c in brokers.items()})
        out.write(_dumps(header))

    def write(self, e: StepEvent) -> None:
        line: dict[str, Any] = {"node": e.node, "time": e.time, "input": e.input}
        if e.input == MESSAGE:
            line["src"] = e.src
            line["payload"] = codec.encode(e.payload)
        if e.input == "boot":
            self.logs.pop(e.node, None)
            self.persisted.pop(e.node, None)
        if e.view is not None and self.kind == "controller":
            line["view"] = codec.encode(e.view)  # (views whole)
        elif e.view is not None:
            line["view"] = _with_log(codec.encode(attrs.evolve(e.view, log=())), self.logs, e.node, e.view.log)
        if e.outputs:
            line["outputs"] = [{"dst": o.dst, "payload": codec.encode(o.payload)} for o in e.outputs]
        if e.persist is not None and self.kind != "controller":  # (the controller kind's are not judged)
            log = getattr(e.persist, "log", None)
            if attrs.has(type(e.persist)) and log is not None:  # a DLedger state: its log as a tail
                line["persist"] = _with_log(codec.encode(attrs.evolve(e.persist, log=())), self.persisted, e.node,
                                            tuple(log))
            else:
                line["persist"] = codec.encode(e.persist)
        self.out.write(_dumps(line))


def _with_log(encoded: dict, last: dict, node: str, log: tuple) -> dict:
    """``encoded`` with ``log`` in full the first time, else as the tail after ``last[node]``."""
    prev = last.get(node)
    last[node] = log
    if prev is None:
        encoded["log"] = codec.encode(log)
        return encoded
    keep = min(len(prev), len(log))
    if log[:keep] != prev[:keep]:
        keep = next(i for i in range(keep) if log[i] != prev[i])
    del encoded["log"]
    encoded["log_from"] = keep
    encoded["log_tail"] = codec.encode(log[keep:])
    return encoded


def _dumps(x: Any) -> str:
    return json.dumps(x, separators=(",", ":")) + "\n"
