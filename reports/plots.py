"""Figures for reports: histograms and space-time diagrams, as PNG bytes (Agg backend)."""
from __future__ import annotations

import io
import json
from typing import Sequence

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


def space_time_diagram(trace_jsonl: str, title: str, max_messages: int = 120) -> bytes:
    """Lamport-style diagram: one vertical lane per node, time downwards, an arrow per
    delivered message (send → delivery), crosses for lost ones, markers for crashes."""
    events = [json.loads(line) for line in trace_jsonl.splitlines() if line.strip()]
    nodes = sorted({e[k] for e in events for k in ("node", "src", "dst") if k in e and e[k] != "client"})
    lane = {n: i for i, n in enumerate(nodes)}
    sends: dict[tuple, list] = {}
    arrows, losses, marks = [], [], []
    for e in events:
        kind = e["kind"]
        if kind == "send":
            sends.setdefault((e["src"], e["dst"], json.dumps(e.get("body"), sort_keys=True), e["msg"]), []).append(e["time"])
        elif kind in ("deliver", "drop") and "src" in e:
            key = (e["src"], e["dst"], json.dumps(e.get("body"), sort_keys=True), e["msg"])
            sent = sends.get(key, [e["time"]])
            t0 = sent[0] if sent else e["time"]
            (arrows if kind == "deliver" else losses).append((e["src"], e["dst"], t0, e["time"], e["msg"]))
        elif kind in ("crash", "restart") and e.get("node") in lane:
            marks.append((e["node"], e["time"], kind))
    shown = arrows[-max_messages:]
    fig, ax = plt.subplots(figsize=(7, max(3.0, min(12.0, 0.08 * len(shown) + 3))))
    t_min = min([a[2] for a in shown] + [m[1] for m in marks] + [0])
    t_max = max([a[3] for a in shown] + [m[1] for m in marks] + [t_min + 1])
    for n, i in lane.items():
        ax.plot([i, i], [t_min, t_max], color="#999999", lw=0.8)
        ax.text(i, t_min, n, ha="center", va="bottom", fontsize=8)
    colours = {}
    for src, dst, t0, t1, msg in shown:
        colour = colours.setdefault(msg, f"C{len(colours) % 10}")
        ax.annotate("", xy=(lane[dst], t1), xytext=(lane[src], t0),
                    arrowprops=dict(arrowstyle="->", color=colour, lw=0.7))
    for src, dst, t0, t1, msg in losses[-max_messages:]:
        if t0 >= t_min:
            ax.plot([lane[src]], [t0], marker="x", color="red", ms=4)
    for n, t, kind in marks:
        ax.plot([lane[n]], [t], marker="s" if kind == "crash" else "^",
                color="black" if kind == "crash" else "green", ms=6)
    for msg, colour in colours.items():
        ax.plot([], [], color=colour, label=msg)
    ax.invert_yaxis()
    ax.set_xticks([])
    ax.set_ylabel("simulated time (ms)")
    ax.set_title(title, fontsize=9)
    if colours:
        ax.legend(fontsize=6, loc="lower right")
    return _png(fig)
