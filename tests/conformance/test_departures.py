"""Departures are data: an answer that reproduces upstream's known behaviour is named.

An implementation that behaves like a released RocketMQ where the spec deliberately
differs (docs/controller.md, docs/truncation.md) must be reported by the departure's name
and upstream issue, not as a generic disagreement, and must not fail the differential; one
that differs in any other way is still a disagreement. Here in-process servers answer as
upstream would (each departure's own answer), as a synthetic mutant would, or throw, and
``compare`` is checked to tell them apart. The real classes show the same departures
(tests/adapters/test_jvm_real_rocketmq.py, and the recorded transcripts).
"""
import pytest
from hypothesis import given

from adapters import codec
from adapters.errors import ImplementationFailed
from adapters.operations import OPERATIONS
from adapters.protocol import INTERNAL, PROTOCOL, error, ok
from adapters.transports import InProcessAdapter
from conformance.departures import DEPARTURES
from conformance.differential import compare
from conformance.strategies import ARGUMENTS, policy_election_args
from spec.controller.events import UpdateBrokerAddressEvent
from spec.controller.records import (
    EMPTY_METADATA,
    BrokerRegistration,
    BrokerReplicaInfo,
    BrokerSetMetadata,
    ControllerMetadata,
    SyncStateInfo,
)
from spec.truncation import epoch_file as ef
from spec.truncation.variants import VARIANTS


class _Server:
    """Answers every call with ``answer(operation, args)`` (a spec answer, or raising: an internal error)."""

    def __init__(self, answer):
        self.answer = answer

    def handle(self, req):
        if req["op"] == "hello":
            return ok(req["id"], {"protocol": PROTOCOL, "implementation": "upstream-like", "version": "1",
                                  "profiles": {"controller": "rocketmq-5.1"}, "operations": sorted(OPERATIONS),
                                  "nodes": []})
        name = req["args"]["operation"]
        op = OPERATIONS[name]
        reg = codec.registry(op.namespace)
        args = {p: codec.decode(req["args"]["args"][p], t, reg, p) for p, t in op.params}
        try:
            return ok(req["id"], codec.encode(self.answer(name, args)))
        except RuntimeError as exc:
            return error(req["id"], INTERNAL, str(exc))


def _adapter(answer) -> InProcessAdapter:
    adapter = InProcessAdapter("upstream-like", _Server(answer))
    adapter.hello()
    return adapter


def _first(departures, operation):
    return next(d for d in DEPARTURES[operation] if d.name == departures)


def test_the_10578_comparator_is_named_as_the_upstream_issue():
    departure = _first("elect-offset-comparator-overflow", "controller.handle")
    adapter = _adapter(lambda name, args: departure.answer("rocketmq-5.1", args))
    seen = []

    @given(policy_election_args("offsets_far_apart"))
    def judged(args):
        found = compare(adapter, "controller.handle", args)
        if found is not None:
            assert found.departure is departure and found.explained, found.render()
            seen.append(found)

    judged()
    assert seen, "no input where the narrowed comparator elects another master"
    assert "apache/rocketmq#10578" in seen[0].render() and "known departure" in seen[0].render()


@pytest.mark.parametrize("operation,variant", [
    ("truncation.find_consistent_point", "upstream-empty-epoch"),
    ("truncation.truncate_suffix_by_offset", "finite-end-after-suffix-truncation"),
    ("truncation.truncate_suffix_by_epoch", "finite-end-after-suffix-truncation"),
    ("truncation.truncate_prefix_by_offset", "finite-end-after-suffix-truncation"),
])
def test_upstreams_epoch_file_is_named_by_its_variant(operation, variant):
    departure = _first(variant, operation)
    adapter = _adapter(lambda name, args: departure.answer(None, args))
    named = []

    @given(ARGUMENTS[operation])
    def judged(args):
        found = compare(adapter, operation, args)
        if found is not None:
            assert found.explained and found.departure.name == variant, found.render()
            named.append(found)

    judged()
    assert named, f"no input where {variant} departs"


def test_a_throw_where_upstream_throws_is_named_and_any_other_throw_is_an_error():
    def answer(name, args):
        if isinstance(args["event"], UpdateBrokerAddressEvent):
            raise RuntimeError("java.lang.NullPointerException")
        return OPERATIONS[name].spec(None, **args)

    adapter = _adapter(answer)
    unknown_set = {"metadata": EMPTY_METADATA, "event": UpdateBrokerAddressEvent("c1", "broker-a", "10.0.0.9:1", 1)}
    found = compare(adapter, "controller.apply_event", unknown_set)
    assert found.explained and found.departure.name == "update-address-of-unknown-set-throws"
    assert found.got.startswith("threw:")
    registered = ControllerMetadata({"broker-a": BrokerSetMetadata("c1", BrokerReplicaInfo(2, {1: BrokerRegistration(
        "10.0.0.1:1", "10.0.0.1:1;1")}), SyncStateInfo())})
    with pytest.raises(ImplementationFailed):  # upstream applies this one: a throw is the implementation's failure
        compare(adapter, "controller.apply_event", {**unknown_set, "metadata": registered})


def test_a_synthetic_mutant_is_still_a_plain_disagreement():
    """Only upstream's own behaviour is a departure: an implementation that scans epochs upwards
    (the ``ascending-scan`` variant, no upstream release) fails."""
    ascending = VARIANTS["ascending-scan"]
    adapter = _adapter(lambda name, a: ef.find_consistent_point(a["local"], a["local_max"], a["master"],
                                                                 a["master_max"], ascending))
    local = master = ef.of((1, 0), (2, 100))
    found = compare(adapter, "truncation.find_consistent_point",
                    {"local": local, "local_max": 150, "master": master, "master_max": 200})
    assert found is not None and not found.explained and "known departure" not in found.render()
