"""Figures: pairing messages for space-time diagrams, and that figures render as PNG."""
import json
from pathlib import Path

import pytest

from reports.plots import Arrow, histogram, message_arrows, space_time_diagram

ROOT = Path(__file__).resolve().parents[2]


def ev(kind, time, src=None, dst=None, msg="VoteRequest", body=None, node=None):
    e = {"kind": kind, "time": time}
    if src is not None:
        e.update(src=src, dst=dst, msg=msg)
        if body is not None:
            e["body"] = body
    if node is not None:
        e["node"] = node
    return e


# Each case: trace events -> the arrows drawn (src, dst, sent, ended, lost).
CASES = {
    "delivered": (
        [ev("send", 10, "n1", "n2"), ev("deliver", 13, "n1", "n2")],
        [("n1", "n2", 10, 13, False)],
    ),
    # identical heartbeats: each delivery starts at its own send, never at the first one
    "repeated-identical-messages": (
        [ev("send", 0, "n1", "n2", body={"term": 1}), ev("deliver", 2, "n1", "n2", body={"term": 1}),
         ev("send", 100, "n1", "n2", body={"term": 1}), ev("deliver", 104, "n1", "n2", body={"term": 1})],
        [("n1", "n2", 0, 2, False), ("n1", "n2", 100, 104, False)],
    ),
    "bodies-tell-messages-apart": (
        [ev("send", 0, "n1", "n2", body={"term": 1}), ev("send", 5, "n1", "n2", body={"term": 2}),
         ev("deliver", 6, "n1", "n2", body={"term": 2}), ev("deliver", 9, "n1", "n2", body={"term": 1})],
        [("n1", "n2", 5, 6, False), ("n1", "n2", 0, 9, False)],
    ),
    "duplicated": (
        [ev("send", 0, "n1", "n3"), ev("duplicate", 0, "n1", "n3"), ev("deliver", 3, "n1", "n3"),
         ev("deliver", 8, "n1", "n3")],
        [("n1", "n3", 0, 3, False), ("n1", "n3", 0, 8, False)],
    ),
    "lost-when-sent": (
        [ev("send", 7, "n2", "n1"), ev("drop", 7, "n2", "n1")],
        [("n2", "n1", 7, 7, True)],
    ),
    "lost-on-arrival": (
        [ev("send", 7, "n2", "n1"), ev("drop", 12, "n2", "n1")],
        [("n2", "n1", 7, 12, True)],
    ),
    "sent-before-the-trace-starts": (
        [ev("deliver", 50, "n1", "n2")],
        [("n1", "n2", 50, 50, False)],
    ),
    "still-in-flight-at-the-end": (
        [ev("send", 50, "n1", "n2")],
        [],
    ),
    "types-tell-messages-apart": (
        [ev("send", 0, "n1", "n2", msg="A"), ev("send", 1, "n1", "n2", msg="B"), ev("deliver", 2, "n1", "n2", msg="B")],
        [("n1", "n2", 1, 2, False)],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_message_arrows(name):
    events, expected = CASES[name]
    arrows, _ = message_arrows(events)
    assert [(a.src, a.dst, a.sent, a.ended, a.lost) for a in arrows] == expected


def test_crashes_restarts_and_client_requests_are_marked():
    events = [ev("boot", 0, node="n1"), ev("crash", 5, node="n1"), ev("restart", 9, node="n1"),
              ev("client", 11, node="n2"), ev("state", 12, node="n2"), ev("note", 13)]
    assert message_arrows(events)[1] == [("n1", 5, "crash"), ("n1", 9, "restart"), ("n2", 11, "client")]


def test_arrow_is_a_plain_record():
    assert Arrow("n1", "n2", 1, 2, "X", False)._asdict()["msg"] == "X"


def test_diagram_of_a_real_counterexample_is_a_png():
    from conformance.campaign import execute
    from conformance.script import read_script

    script = read_script(str(ROOT / "tests/scenarios/dledger/mutant-vote-not-durable.rmqha"))
    trace = execute(script, record_trace=True).cluster.trace_jsonl()
    assert any(json.loads(line)["kind"] == "deliver" for line in trace.splitlines())
    png = space_time_diagram(trace, "vote not durable")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000


def test_diagram_of_a_trace_without_messages_still_renders():
    assert space_time_diagram('{"kind":"note","time":0,"seq":1,"data":"x"}\n', "empty").startswith(b"\x89PNG")


def test_histogram_is_a_png():
    png = histogram("failover", "ms", {"reference": ([0.0, 10.0, 20.0], [3, 5, 1]), "other": ([0.0], [4])})
    assert png.startswith(b"\x89PNG")


def test_the_legend_of_a_space_time_diagram_covers_no_message():
    import matplotlib.pyplot as plt

    from reports.plots import space_time_figure

    events = []
    for t in range(0, 400, 10):  # messages right up to the end, into every corner
        events += [{"kind": "send", "time": t, "src": "n1", "dst": "n3", "msg": f"Kind{t % 50}"},
                   {"kind": "deliver", "time": t + 9, "src": "n1", "dst": "n3", "msg": f"Kind{t % 50}"}]
    fig = space_time_figure("".join(json.dumps(e) + "\n" for e in events), "legend")
    fig.canvas.draw()
    (ax,) = fig.axes
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1  # beside the lanes, not over them
    plt.close(fig)
