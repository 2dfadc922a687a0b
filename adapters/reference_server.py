"""rmqha's reference implementation behind the adapter protocol.

``ReferenceServer.handle(request) -> response`` answers every operation of the
protocol with the spec (handler level) and the reference nodes of every node kind
(``dledger``, ``raft``, ``replica``, ``broker``, ``controller``; node level), optionally
with a mutant (then only the node kinds of the mutant's family: DLedger mutants run
``dledger`` and ``raft`` nodes, controller mutants ``broker`` and ``controller`` nodes,
truncation variants ``replica`` nodes). It serves three purposes: the in-process ``reference`` and
``mutant:NAME`` adapters, ``rmqha serve-stdio`` (the reference as a subprocess, to test
the stdio transport end to end), and a worked example of a server for other teams.
"""
from __future__ import annotations

import random
import sys
from typing import Any

import attrs

from adapters import codec
from adapters.operations import OPERATIONS, PROCEDURE_CALLS
from adapters.protocol import BAD_REQUEST, INTERNAL, ONCE_FIELDS, PROTOCOL, UNSUPPORTED, error, ok
from reference import node_kinds
from reference.broker_replica import ReplicaDurable
from reference.classic_broker import ClassicDurable
from reference.controller_broker import BrokerDurable
from reference.dledger_node import DLedgerDurable, DLedgerNode
from reference.mutants import MUTANTS
from reference.node_api import Message
from reference.procedures import REFERENCE_PROCEDURES
from spec.classic.profiles import DEFAULT_PROFILE as CLASSIC_DEFAULT_PROFILE
from spec.dledger.profiles import PROFILES
from spec.dledger.records import ClientAppend, DLedgerView
from spec.invariants.dledger import liveness_bound_ms
from spec.raft.records import ClientCommand, RaftEntry, RaftView, raft_view

from spec.broker.messages import BrokerNodeConfig
from spec.classic.wire import ClassicNodeConfig
from spec.controller.messages import ControllerNodeConfig

for _cls in (DLedgerDurable, ReplicaDurable, BrokerDurable, ClassicDurable):
    attrs.resolve_types(_cls, globalns=vars(sys.modules[_cls.__module__]))

# node kind -> (its creation config record or None, its durable state record)
NODE_RECORDS = {
    "replica": (None, ReplicaDurable),
    "broker": (BrokerNodeConfig, BrokerDurable),
    "controller": (ControllerNodeConfig, DLedgerDurable),
    "classic": (ClassicNodeConfig, ClassicDurable),
}

class ReferenceServer:
    def __init__(self, mutant: str | None = None, dledger_profile: str = "dledger-0.4",
                 controller_profile: str = "rocketmq-5.1"):
        self.kinds_offered = mutant_kinds(mutant)
        self.mutant = mutant
        self.base_profile = PROFILES[dledger_profile]
        if mutant is None or mutant not in MUTANTS:
            self.profile, self.procedures = self.base_profile, REFERENCE_PROCEDURES
        else:
            self.profile, self.procedures = MUTANTS[mutant].apply(self.base_profile)
        # raft: its raft nodes are its DLedger nodes seen as Raft nodes (docs/adapter-protocol.md)
        self.profiles = {"dledger": dledger_profile, "controller": controller_profile,
                         "classic": CLASSIC_DEFAULT_PROFILE.name, "raft": dledger_profile}
        self.nodes: dict[str, Any] = {}
        self.kinds: dict[str, str] = {}  # handle -> node kind it was created as
        self.seen: dict[str, object] = {}  # handle -> what an unversioned node's last activation left observable
        # handles created with observe_in_ready (changed answers carry the observation) -> the
        # view they last sent (by an answer or node.observe), which an answer then need not repeat
        self.offering: dict[str, object] = {}

    # ------------------------------------------------------------------ protocol

    def handle(self, req: dict) -> dict:
        rid = req.get("id") if isinstance(req, dict) else None
        try:
            op = req["op"]
            args = req.get("args") or {}
            handler = getattr(self, "_op_" + op.replace(".", "_"), None)
            if handler is None:
                return error(rid, UNSUPPORTED, f"operation {op!r} is not supported")
            return ok(rid, handler(args))
        except codec.CodecError as exc:
            return error(rid, BAD_REQUEST, str(exc))
        except (KeyError, TypeError) as exc:
            return error(rid, BAD_REQUEST, f"malformed request: {exc!r}")
        except _Unsupported as exc:
            return error(rid, UNSUPPORTED, str(exc))
        except Exception as exc:  # noqa: BLE001 - reported to the driver, which decides
            return error(rid, INTERNAL, f"{type(exc).__name__}: {exc}")

    def _op_hello(self, args: dict) -> dict:
        implementation = "rmqha-reference" + (f"+{self.mutant}" if self.mutant else "")
        if self.mutant is None:
            operations = sorted(OPERATIONS)
        else:  # a mutant answers only the procedures it may change (a DLedger one's)
            operations = sorted(PROCEDURE_CALLS) if self.mutant in MUTANTS else []
        return {"protocol": PROTOCOL, "implementation": implementation, "version": _version(),
                "profiles": self.profiles, "operations": operations, "nodes": list(self.kinds_offered),
                "liveness_bound_ms": {kind: liveness_bound_ms(self.profile.timing) for kind in self.kinds_offered
                                      if kind in DLEDGER_KINDS}}

    def _op_bye(self, args: dict) -> dict:
        return {}

    def _op_call(self, args: dict) -> Any:
        name = args["operation"]
        op = OPERATIONS.get(name)
        if op is None or (self.mutant is not None and (self.mutant not in MUTANTS or name not in PROCEDURE_CALLS)):
            raise _Unsupported(f"operation {name!r} is not supported")
        reg = codec.registry(op.namespace)
        raw = args.get("args") or {}
        decoded = {}
        for pname, ptype in op.params:
            if pname not in raw:
                raise codec.CodecError(pname, "missing argument")
            decoded[pname] = codec.decode(raw[pname], ptype, reg, pname)
        if name in PROCEDURE_CALLS:
            result = PROCEDURE_CALLS[name](self.procedures, self.profile, decoded)
        else:
            result = op.spec(self.profiles.get(op.namespace), **decoded)
        return codec.encode(result)

    # ------------------------------------------------------------------ nodes

    def _op_node_create(self, args: dict) -> dict:
        kind = args["kind"]
        if kind not in self.kinds_offered:
            raise _Unsupported(f"node kind {kind!r} is not supported")
        self.kinds[args["handle"]] = kind
        if args.get("observe_in_ready") is True:
            self.offering[args["handle"]] = _NEVER
        else:
            self.offering.pop(args["handle"], None)
        rng = random.Random(args["seed"])
        draw = lambda bound: rng.randrange(bound) if bound > 0 else 0  # noqa: E731
        if kind in DLEDGER_KINDS:
            durable = None
            if args.get("durable") is not None:
                durable = codec.decode(args["durable"], DLedgerDurable, codec.registry("dledger"), "durable")
            self.nodes[args["handle"]] = DLedgerNode(
                args["node_id"], tuple(args["peers"]), draw, durable, args["now"], self.profile, None,
                self.procedures)
            return {}
        config_type, durable_type = NODE_RECORDS[kind]
        reg = codec.registry(codec.NODE_NAMESPACES[kind])
        config = codec.decode(args["config"], config_type, reg, "config") if config_type is not None else None
        durable = args.get("durable")
        if durable is not None:
            durable = codec.decode(durable, durable_type, reg, "durable")
        mutant = self.mutant if self.mutant in node_kinds.MUTANTS_OF_KIND[kind] else None
        self.nodes[args["handle"]] = node_kinds.FACTORIES[kind](
            args["node_id"], tuple(args["peers"]), draw, durable, args["now"], config, mutant)
        return {}

    def _activate(self, handle: str, act) -> dict:
        node = self.nodes[handle]
        versioned = hasattr(node, "version")
        before = node.version if versioned else self.seen.get(handle, _NEVER)
        ready = act(node)
        if versioned:
            changed = node.version != before
        else:  # (a classic broker keeps no version: compare what observe would answer)
            self.seen[handle] = (node.observe(), node.summary())
            changed = self.seen[handle] != before
        answer = {
            "messages": _wire_messages(ready.messages) if ready.messages else [],
            "persist": codec.encode(ready.persist) if ready.persist is not None else None,
            "changed": changed,
            "next_deadline": node.next_deadline(),
        }
        if changed and handle in self.offering:  # what node.observe would answer now
            answer.update(self._observation(handle, node, in_answer=True))
        return answer

    def _op_node_tick(self, args: dict) -> dict:
        return self._activate(args["handle"], lambda node: node.tick(args["now"]))

    def _op_node_step(self, args: dict) -> dict:
        m = args["message"]
        raw = m["payload"]
        kind = self.kinds.get(args["handle"], "dledger")
        if isinstance(raw, dict) and raw.get("@type") == "ClientCommand":  # a generic Raft client request
            payload = ClientAppend(codec.decode(raw, ClientCommand, codec.registry("raft"), "message.payload").body)
        else:
            namespace = "dledger" if kind in DLEDGER_KINDS else codec.NODE_NAMESPACES[kind]
            payload = codec.decode(raw, Any, codec.registry(namespace), "message.payload")
        message = Message(m["src"], m["dst"], payload)
        return self._activate(args["handle"], lambda node: node.step(message, args["now"]))

    def _op_node_crash(self, args: dict) -> dict:
        node = self.nodes.pop(args["handle"])
        self.kinds.pop(args["handle"], None)
        self.seen.pop(args["handle"], None)
        self.offering.pop(args["handle"], None)
        crash = getattr(node, "crash", None)  # (a node that says what survives; else its durable state)
        return {"durable": codec.encode(crash() if callable(crash) else node.durable())}

    def _op_node_observe(self, args: dict) -> dict:
        return self._observation(args["handle"], self.nodes[args["handle"]])

    def _observation(self, handle: str, node: Any, in_answer: bool = False) -> dict:
        view = node.observe()
        if handle in self.offering:
            last, once = self.offering[handle], ONCE_FIELDS.get(self.kinds[handle])
            if in_answer and (last is view or last == view) and not (once and getattr(view, once)):
                return {"summary": node.summary()}  # the view it sent last, unchanged
            self.offering[handle] = view
        if self.kinds.get(handle) == "raft":
            view = _raft_wire_view(view)
        return {"view": codec.encode(view), "summary": node.summary()}


class _Unsupported(Exception):
    pass


def _wire_messages(messages) -> list:
    """Messages as the protocol's ``{"src", "dst", "payload"}``; a payload sent to several
    nodes (a heartbeat, a vote request) is encoded once."""
    out, encoded = [], {}
    for m in messages:
        payload = encoded.get(id(m.payload))
        if payload is None:
            payload = encoded[id(m.payload)] = codec.encode(m.payload)
        out.append({"src": m.src, "dst": m.dst, "payload": payload})
    return out


# A reference DLedger node can also be run as a generic Raft node: its messages are
# then opaque to the driver and its observation is the generic Raft view, so the
# generic Raft invariants (spec/invariants/raft.py) judge rmqha's own reference and
# mutants exactly as they judge a third-party Raft.
DLEDGER_KINDS = ("dledger", "raft")
# (a kind of reference/node_kinds.py is served once its creation and durable records are known here)
NODE_KINDS = DLEDGER_KINDS + tuple(k for k in node_kinds.FACTORIES if k in NODE_RECORDS)


def mutant_kinds(mutant: str | None) -> tuple[str, ...]:
    """The node kinds a server of ``mutant`` runs (every kind for the reference)."""
    if mutant is None:
        return NODE_KINDS
    if mutant in MUTANTS:
        return DLEDGER_KINDS
    families = tuple(k for k, known in node_kinds.MUTANTS_OF_KIND.items() if mutant in known)
    if not families:
        raise KeyError(f"unknown mutant {mutant!r}")
    kinds = tuple(k for k in families if k in NODE_KINDS)
    if not kinds:
        raise KeyError(f"mutant {mutant!r} runs {', '.join(families)} nodes, which this server does not serve yet")
    return kinds


_NEVER = object()


def _raft_wire_view(v: DLedgerView) -> RaftView:
    """The spec's Raft view of a DLedger node, its entries as the protocol's ``RaftEntry``."""
    view = raft_view(v)
    return attrs.evolve(view, log=tuple(RaftEntry(e.index, e.term, e.body) for e in view.log))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("rmqha")
    except Exception:
        return "0+source"
