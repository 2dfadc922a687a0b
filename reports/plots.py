"""Figures for reports: histograms and space-time diagrams, as PNG bytes (Agg backend)."""
from __future__ import annotations

import io
import json
from collections import deque
from typing import Iterable, NamedTuple, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def histogram(title: str, unit: str, series: dict[str, tuple[Sequence[float], Sequence[int]]]) -> bytes:
    """``series``: label -> (bin left edges, counts) computed by the aggregation."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for label, (edges, counts) in sorted(series.items()):
        width = (edges[1] - edges[0]) if len(edges) > 1 else 1.0
        ax.step(list(edges) + [edges[-1] + width], list(counts) + [counts[-1]], where="post", label=label)
    ax.set_title(title)
    ax.set_xlabel(unit)
    ax.set_ylabel("count")
    if len(series) > 1:
        ax.legend(fontsize=7)
    return _png(fig)


class Arrow(NamedTuple):
    """One message copy: sent by ``src`` at ``sent``, delivered to or lost before ``dst`` at ``ended``."""

    src: str
    dst: str
    sent: float
    ended: float
    msg: str
    lost: bool


MARKED_EVENTS = ("crash", "restart", "client")


def message_arrows(events: Iterable[dict]) -> tuple[list[Arrow], list[tuple[str, float, str]]]:
    """Pair each delivery or loss with its send; collect crash, restart and client marks.

    Trace lines carry no message id, so a delivery is matched with the earliest
    unmatched send of an identical message (same ends, type and body): identical
    messages are indistinguishable, so any pairing draws the same picture, and this
    one never starts an arrow after its delivery. A ``duplicate`` event puts a second
    copy in flight. A delivery whose send lies before the trace starts is drawn from
    its delivery time.
    """
    in_flight: dict[tuple, deque] = {}
    arrows: list[Arrow] = []
    marks: list[tuple[str, float, str]] = []
    for e in events:
        kind = e.get("kind")
        if "src" in e and "dst" in e and kind in ("send", "duplicate", "deliver", "drop"):
            key = (e["src"], e["dst"], e.get("msg"), json.dumps(e.get("body"), sort_keys=True))
            if kind in ("send", "duplicate"):
                in_flight.setdefault(key, deque()).append(e["time"])
            else:
                queue = in_flight.get(key)
                sent = queue.popleft() if queue else e["time"]
                arrows.append(Arrow(e["src"], e["dst"], sent, e["time"], str(e.get("msg")), kind == "drop"))
        elif kind in MARKED_EVENTS and e.get("node") is not None:
            marks.append((e["node"], e["time"], kind))
    return arrows, marks


_MARK_STYLE = {"crash": ("s", "black"), "restart": ("^", "green"), "client": ("D", "#8844aa")}


def space_time_diagram(trace_jsonl: str, title: str, max_messages: int = 120) -> bytes:
    return _png(space_time_figure(trace_jsonl, title, max_messages))


def space_time_figure(trace_jsonl: str, title: str, max_messages: int = 120):
    """Lamport-style diagram: one vertical lane per node, time downwards, an arrow per
    delivered message (send to delivery), a dashed line ending in a cross per lost one,
    squares for crashes, triangles for restarts, diamonds for client requests.

    Only the last ``max_messages`` messages are drawn: a counterexample's violation is
    at its end, and hundreds of heartbeats before it would hide it.
    """
    events = [json.loads(line) for line in trace_jsonl.splitlines() if line.strip()]
    arrows, marks = message_arrows(events)
    shown = arrows[-max_messages:]
    t_min = min([a.sent for a in shown], default=0)
    marks = [m for m in marks if m[1] >= t_min]
    nodes = sorted({a.src for a in shown} | {a.dst for a in shown} | {m[0] for m in marks})
    lane = {n: i for i, n in enumerate(nodes)}
    t_max = max([a.ended for a in shown] + [m[1] for m in marks] + [t_min + 1])
    fig, ax = plt.subplots(figsize=(7, max(3.0, min(12.0, 0.08 * len(shown) + 3))))
    for n, i in lane.items():
        ax.plot([i, i], [t_min, t_max], color="#999999", lw=0.8)
        ax.text(i, t_min, n, ha="center", va="bottom", fontsize=8)
    colours: dict[str, str] = {}
    for a in shown:
        colour = colours.setdefault(a.msg, f"C{len(colours) % 10}")
        x0, x1 = lane[a.src], lane[a.dst]
        if a.lost:
            # lost on arrival (receiver down, link cut meanwhile): dashed up to the receiver;
            # lost when sent (cut link, lossy network): a dashed stub a quarter of the way
            if a.ended > a.sent:
                xe, te = x1, a.ended
            else:
                xe, te = x0 + (x1 - x0) * 0.25, a.sent + 0.01 * (t_max - t_min)
            ax.plot([x0, xe], [a.sent, te], color=colour, lw=0.7, ls="--")
            ax.plot([xe], [te], marker="x", color="red", ms=5)
        else:
            ax.annotate("", xy=(x1, a.ended), xytext=(x0, a.sent),
                        arrowprops=dict(arrowstyle="->", color=colour, lw=0.7))
    for node, t, kind in marks:
        marker, colour = _MARK_STYLE[kind]
        ax.plot([lane[node]], [t], marker=marker, color=colour, ms=6, ls="none")
    for msg, colour in colours.items():
        ax.plot([], [], color=colour, label=msg)
    ax.set_ylim(t_max + 0.02 * (t_max - t_min), t_min - 0.04 * (t_max - t_min))  # time runs downwards
    ax.set_xlim(-0.6, max(len(nodes) - 0.4, 0.6))
    ax.set_xticks([])
    ax.set_ylabel("simulated time (ms)")
    ax.set_title(title, fontsize=9)
    if colours:
        # beside the lanes, never over them: the last messages (where the violation is) stay visible
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    return fig
