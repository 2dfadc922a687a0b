"""A node's observation with its answers (docs/adapter-protocol.md, ``observe_in_ready``):
an answer to node.tick/node.step that changed a node may carry what node.observe would
answer next; rmqha then sends no node.observe and sees the same views. An implementation
that leaves it out is observed as before; a malformed one is a one-line error naming the
node; a controller's decisions are still reported once each."""
import copy
import json
from collections import Counter

import pytest

from adapters.errors import AdapterError
from adapters.remote_node import RemoteNode
from adapters.transports import ProtocolAdapter
from conformance.campaign import execute
from conformance.scenarios.registry import get_scenario
from results.runresult import RunConfig

WITH = "python:tests.fixtures.reference_without_views:reference"
WITHOUT = "python:tests.fixtures.reference_without_views:server"


def run(adapter: str, monkeypatch) -> tuple[str, Counter, list]:
    """The controller scenario (seed 3, 3 brokers) through ``adapter``: its trace, the
    requests sent, and every view the scenario read (node, version, view)."""
    ops, views = Counter(), []
    request, observe = ProtocolAdapter.request, RemoteNode.observe

    def counted(self, op, args):
        ops[op] += 1
        answer = request(self, op, args)
        if op in ("node.tick", "node.step") and "summary" in answer:
            ops["with a view" if "view" in answer else "with a summary alone"] += 1
        return answer

    def recorded(self):
        view = observe(self)
        views.append((self.node_id, self.version, view))
        return view

    monkeypatch.setattr(ProtocolAdapter, "request", counted)
    monkeypatch.setattr(RemoteNode, "observe", recorded)
    config = RunConfig("t", 3, "reference", "controller", "rocketmq-5.1", 3, "mixed", 8_000)
    ex = execute(get_scenario("controller").generate(config), adapter, record_trace=True)
    monkeypatch.undo()
    assert ex.error is None, ex.error
    return ex.cluster.trace_jsonl(), ops, views


def test_answers_carrying_the_view_save_the_observe_round_trips_and_show_the_same_views(monkeypatch):
    here = execute(get_scenario("controller").generate(
        RunConfig("t", 3, "reference", "controller", "rocketmq-5.1", 3, "mixed", 8_000)), "reference",
        record_trace=True).cluster.trace_jsonl()
    with_views = run(WITH, monkeypatch)
    without = run(WITHOUT, monkeypatch)
    assert with_views[0] == without[0] == here  # the same run, step for step
    assert with_views[2] == without[2] and any(getattr(v, "decisions", ()) for _, _, v in with_views[2])
    # without: one node.observe per change; with: only before a node's first change
    assert without[1]["node.observe"] > 300, without[1]
    assert with_views[1]["node.observe"] <= with_views[1]["node.create"], with_views[1]
    assert with_views[1]["with a view"] > 100 and with_views[1]["with a summary alone"] > 100, with_views[1]
    assert without[1]["with a view"] == without[1]["with a summary alone"] == 0
    assert all(with_views[1][op] == without[1][op] for op in ("node.create", "node.tick", "node.step", "node.crash"))


DECISION = {"@type": "ControllerDecision", "api": "get_next_broker_id", "trigger": "call",
            "request": {"@type": "GetNextBrokerIdRequest", "cluster_name": "cluster-a", "broker_name": "broker-a"},
            "response": {"@type": "GetNextBrokerIdResponse", "code": "CONTROLLER_NOT_LEADER",
                         "next_broker_id": None},
            "events": [], "before": {"@type": "ControllerMetadata", "sets": []},
            "after": {"@type": "ControllerMetadata", "sets": []}, "liveness": None}


def view(applied: int, *brokers: str) -> dict:
    """A controller's view whose decisions answer callers ``brokers``."""
    decisions = []
    for b in brokers:
        d = copy.deepcopy(DECISION)
        d["request"]["broker_name"] = b
        decisions.append(d)
    return {"@type": "ControllerNodeView", "node_id": "c1", "active": False, "term": 0, "applied": applied,
            "metadata": {"@type": "ControllerMetadata", "sets": []}, "decisions": decisions}


class Scripted:
    """An adapter whose answers are given by the test, one per request; it keeps the requests."""

    spec = "scripted"
    last_exchange = None

    def __init__(self):
        self.answers: list = []
        self.sent: list = []

    def request(self, op, args):
        self.sent.append((op, args))
        return {} if op == "node.create" else self.answers.pop(0)


def controller(adapter) -> RemoteNode:
    return RemoteNode(adapter, "controller", "c1", ("c1",), 7, None, 0, "c1#1")


def answer(v: dict | None, changed: bool = True, summary=None) -> dict:
    a = {"messages": [], "changed": changed}
    if v is not None:
        a["view"], a["summary"] = v, summary
    return a


def asked(adapter) -> list:
    return [op for op, _ in adapter.sent]


def test_the_driver_asks_for_the_view_and_takes_it_from_the_answer():
    adapter = Scripted()
    node = controller(adapter)
    assert adapter.sent[0][1]["observe_in_ready"] is True
    adapter.answers = [answer(view(1, "a"), summary={"s": 1})]
    node.tick(10)
    assert [d.request.broker_name for d in node.observe().decisions] == ["a"]
    assert node.summary() == {"s": 1} and node.observe().decisions == ()  # reported once
    assert asked(adapter) == ["node.create", "node.tick"]


def test_an_answer_without_the_view_is_observed_as_before():
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [answer(None), {"view": view(1, "a"), "summary": {"s": 2}}]
    node.tick(10)
    assert node.summary() == {"s": 2}
    assert [d.request.broker_name for d in node.observe().decisions] == ["a"]
    assert asked(adapter) == ["node.create", "node.tick", "node.observe"]


def test_decisions_of_views_nobody_read_are_reported_with_the_next_one():
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [answer(view(1, "a")), answer(view(2, "b")), answer(None, changed=False),
                       answer(view(3)), answer(None), {"view": view(4, "c"), "summary": None}]
    for now in (10, 20, 30, 40):  # four answers, none of their views read
        node.tick(now)
    assert [d.request.broker_name for d in node.observe().decisions] == ["a", "b"]
    assert node.observe().decisions == () and node.observe().applied == 3
    node.tick(50)  # changed, no view: the next node.observe answers the rest
    assert [d.request.broker_name for d in node.observe().decisions] == ["c"]
    assert node.observe().applied == 4


def test_a_view_read_once_is_not_reported_again_by_a_later_one():
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [answer(view(1, "a")), answer(view(2, "b"))]
    node.tick(10)
    node.summary()  # read (as the simulator reads summaries): its decisions are the observer's now
    node.tick(20)
    assert [d.request.broker_name for d in node.observe().decisions] == ["b"]


def test_an_answer_that_did_not_change_the_node_carries_no_view_rmqha_reads():
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [answer(view(1)), answer(view(9, "x"), changed=False)]
    node.tick(10)
    node.tick(20)
    assert node.observe().applied == 1 and node.observe().decisions == ()


def test_an_answer_with_a_summary_alone_keeps_the_last_view():
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [answer(view(1, "a"), summary={"s": 1}), {"messages": [], "summary": {"s": 2}},
                       {"messages": [], "summary": {"s": 3}}]
    node.tick(10)
    node.tick(20)  # nobody read the view: its decisions are still to be reported
    assert node.summary() == {"s": 2} and [d.request.broker_name for d in node.observe().decisions] == ["a"]
    node.tick(30)  # read: not again
    assert node.summary() == {"s": 3} and node.observe() == node.observe()
    assert node.observe().decisions == () and node.observe().applied == 1
    assert asked(adapter) == ["node.create", "node.tick", "node.tick", "node.tick"]


def test_a_summary_alone_before_any_view_is_observed_as_before():
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [{"messages": [], "summary": {"s": 1}}, {"view": view(5), "summary": {"s": 1}}]
    node.tick(10)
    assert node.observe().applied == 5
    assert asked(adapter) == ["node.create", "node.tick", "node.observe"]


@pytest.mark.parametrize("bad,why", [
    ({"@type": "ControllerNodeView", "node_id": "c1"}, "missing field"),
    ([1, 2], "expected a ControllerNodeView object"),
    (dict(view(1), applied="one"), "view.applied"),
])
def test_a_malformed_view_in_an_answer_is_one_line_naming_the_node(bad, why):
    adapter = Scripted()
    node = controller(adapter)
    adapter.answers = [answer(bad)]
    with pytest.raises(AdapterError) as caught:
        node.tick(10)
    message = str(caught.value)
    assert "node c1 answered a malformed view in its answer" in message and why in message
    assert "\n" not in message
