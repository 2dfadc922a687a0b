"""Render collated report data as report.md, a self-contained report.html and summary.json.

The report directory is written in a temporary sibling and moved into place in one
rename at the end, so a failed or interrupted build never leaves half a report.
"""
from __future__ import annotations

import base64
import html
import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tabulate import tabulate

from reports import plots
from reports.errors import ReportError


def _pct(x: float | None) -> str:
    """A percentage with two decimals, or two significant digits below 0.1% (bounds over
    millions of runs are thousandths of a percent, which two decimals would show as 0)."""
    if x is None:
        return "–"
    percent = 100 * x
    if 0 < percent < 0.1:
        return f"{percent:.{1 - math.floor(math.log10(percent))}f}%"
    return f"{percent:.2f}%"


def _num(x: Any, digits: int = 1) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return f"{x:,}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


class _Doc:
    """Builds the Markdown and HTML bodies side by side from the same tables."""

    def __init__(self) -> None:
        self.md: list[str] = []
        self.html: list[str] = []
        self.images: dict[str, bytes] = {}

    def heading(self, level: int, text: str) -> None:
        self.md.append(f"{'#' * level} {text}\n")
        self.html.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def para(self, text: str) -> None:
        self.md.append(text + "\n")
        self.html.append(f"<p>{_inline_html(text)}</p>")

    def table(self, rows: list[list[Any]], headers: list[str]) -> None:
        if not rows:
            self.para("(none)")
            return
        self.md.append(tabulate(rows, headers=headers, tablefmt="github") + "\n")
        self.html.append(tabulate(rows, headers=headers, tablefmt="html"))

    def code(self, text: str, lang: str = "") -> None:
        self.md.append(f"```{lang}\n{text.rstrip()}\n```\n")
        self.html.append(f"<pre><code>{html.escape(text)}</code></pre>")

    def image(self, name: str, png: bytes, alt: str) -> None:
        self.images[name] = png
        self.md.append(f"![{alt}](img/{name})\n")
        data = base64.b64encode(png).decode()
        self.html.append(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"/>')


def _inline_html(text: str) -> str:
    escaped = html.escape(text)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", escaped)


def _cell(entry: dict) -> str:
    kind = entry["cell"]
    if kind == "not_applicable":
        return "n/a"
    if kind == "error":
        return f"error ({entry['errors']})"
    text = f"{entry['violations']:,}/{entry['runs']:,} ≤{_pct(entry['upper95'])}"
    if kind == "fail":
        text = "FAIL " + text + (" (profile)" if entry["known_profile_difference"] else "")
    else:
        text = "pass " + text
    return text


def render(data: dict[str, Any], out_dir: str | Path) -> Path:
    out_dir = Path(out_dir)
    doc = _Doc()
    manifest = data["manifest"]
    totals = data["totals"]
    doc.heading(1, f"rmqha conformance report: campaign {manifest['campaign']}")
    doc.para(
        f"{totals['runs']:,} runs; {totals['fail']:,} failed, {totals['error']:,} errors. "
        f"rmqha {manifest.get('rmqha_version')}, results schema {manifest.get('schema_version')}, "
        f"campaign created {manifest.get('created')}. Settings: "
        + ", ".join(f"{k}={v}" for k, v in sorted(manifest.get("spec", {}).items()) if k != "adapters")
        + "."
    )
    progress = data["completeness"]
    if not progress["complete"]:
        doc.para(f"**Incomplete campaign**: {progress['committed_chunks']:,} of {progress['planned_chunks']:,} "
                 f"planned chunks committed ({totals['runs']:,} of {progress['planned_runs']:,} runs); "
                 f"finish it with `{progress['resume']}` and build the report again.")

    doc.heading(2, "Implementations")
    doc.table(
        [[a, x["implementation"], x["implementation_version"], x["profile"],
          (manifest["adapters"].get(a) or {}).get("fingerprint_text") or "–", x["runs"], x["pass"], x["fail"],
          x["error"]] for a, x in sorted(data["adapters"].items())],
        ["adapter", "implementation", "version", "profile", "fingerprint (profile each procedure matches)",
         "runs", "pass", "fail", "error"],
    )

    doc.heading(2, "Implementation x property")
    props = list(dict.fromkeys(m["property"] for m in data["matrix"]))
    by_cell = {(m["adapter"], m["property"]): m for m in data["matrix"]}
    doc.para("Each cell: violations/runs and the 95% upper confidence bound of the violation rate "
             "(Wilson score). `(profile)` marks a violation the profile is known not to guarantee.")
    doc.table([[a] + [_cell(by_cell[(a, p)]) if (a, p) in by_cell else "–" for p in props]
               for a in sorted(data["adapters"])], ["adapter"] + props)
    known = [m for m in data["matrix"] if m["cell"] == "fail" and m["known_profile_difference"]]
    if known:
        doc.heading(3, "Findings: profile differences")
        for m in known:
            doc.para(f"**{m['property']}** fails for `{m['adapter']}` under its profile in "
                     f"{m['violations']} of {m['runs']} runs: a documented difference of that profile, "
                     f"shown here rather than hidden (see the counterexample below).")

    doc.heading(2, "Scenarios")
    doc.table(
        [[r["adapter"], r["scenario"], r["profile"], r["fault_mix"], r["group_size"], r["runs"], r["fail"],
          r["error"], _num(r["mean_steps"], 0), _num(r["mean_simulated_s"]), _num(r["mean_elections"]),
          _num(r["mean_leader_changes"]), r["max_term"], _num(r["mean_wall_ms"])] for r in data["scenarios"]],
        ["adapter", "scenario", "profile", "fault mix", "nodes", "runs", "fail", "error", "steps", "sim s",
         "elections", "leader changes", "max term", "wall ms"],
    )

    doc.heading(2, "Distributions")
    for d in data["distributions"]:
        doc.heading(3, f"{d['title']} ({d['unit']})")
        doc.table([[r["adapter"], r["n"], _num(r["mean"]), _num(r["min"]), _num(r["p50"]), _num(r["p90"]),
                    _num(r["p99"]), _num(r["max"])] for r in d["rows"]],
                  ["adapter", "n", "mean", "min", "p50", "p90", "p99", "max"])
        if d["histogram"]:
            doc.image(f"{d['metric']}.png", plots.histogram(d["title"], d["unit"], d["histogram"]), d["title"])

    doc.heading(2, "Spec coverage")
    doc.para("How often each outcome of each decision procedure was exercised, summed over all runs "
             "(outcomes the spec can produce that no run reached are listed as never hit).")
    for adapter in sorted(data["adapters"]):
        rows = [c for c in data["coverage"] if c["adapter"] == adapter]
        if not rows:
            continue
        doc.heading(3, adapter)
        if all(c["count"] is None for c in rows):
            doc.para("This implementation does not report which spec outcomes it exercised.")
            continue
        doc.table([[c["procedure"], c["outcome"], c["count"]] for c in rows], ["procedure", "outcome", "count"])
        never = [f"{c['procedure']}:{c['outcome']}" for c in rows if c["count"] == 0]
        doc.para("Never hit: " + (", ".join(f"`{n}`" for n in never) if never else "none") + ".")

    if data["mutants"]:
        doc.heading(2, "Mutants")
        doc.table([[m["mutant"], m["runs"], m["failed_runs"], "killed" if m["killed"] else "SURVIVED",
                    ", ".join(m["by"]) or "–"] for m in data["mutants"]],
                  ["mutant", "runs", "failed runs", "verdict", "killed by"])

    if data.get("findings"):
        doc.heading(2, "Findings")
        doc.para("Documented limits shown by the runs: not violations. Each names the property that "
                 "judges the cases the limit does not cover (with #7017's remedy, allAckInSyncStateSet, "
                 "no acknowledged write may be lost; a slave whose log is a prefix of its master's must "
                 "find a consistent point).")
        for f in data["findings"]:
            doc.heading(3, f"{f['finding']} ({f['issue'] or 'no upstream issue'}): {f['adapter']}")
            doc.para(f["summary"])
            doc.table([[f["runs"], f["runs_with"], f["occurrences"], f["first_seed"] if f["first_seed"] is not None else "–",
                        f"{f['guarded_violations']} of {f['guarded_runs']}" if f["guarded_by"] else "–"]],
                      ["runs", "runs showing it", "occurrences", "first seed",
                       f"runs violating {f['guarded_by']}" if f["guarded_by"] else "guarded by"])
            if f.get("replay"):
                doc.para(f"Replay a minimal case: `{f['replay']}`")

    doc.heading(2, "Counterexamples")
    if not data["counterexamples"]:
        doc.para("No run violated a property.")
    files = {}
    for x in data["counterexamples"]:
        name = _slug(f"{x['adapter']}-{x['property']}-seed{x['seed']}") + ".rmqha"
        files[name] = x["script"]
        doc.heading(3, f"{x['property']}: {x['adapter']} (seed {x['seed']})")
        doc.para(f"{x['message']} — shrunk from {x['original_steps']} to {x['shrunk_steps']} steps. "
                 f"Replay: `rmqha replay counterexamples/{name}`")
        doc.code(x["script"])
        doc.image(_slug(name) + ".png",
                  plots.space_time_diagram(x["trace_jsonl"], f"{x['property']} ({x['adapter']}, seed {x['seed']})"),
                  f"space-time diagram of {name}")

    summary = {
        "campaign": manifest["campaign"],
        "rmqha_version": manifest.get("rmqha_version"),
        "schema_version": manifest.get("schema_version"),
        "totals": totals,
        "completeness": data["completeness"],
        "adapters": {a: {k: x[k] for k in ("implementation", "implementation_version", "profile", "runs", "pass",
                                           "fail", "error")} | {"fingerprint": (manifest["adapters"].get(a) or {})
                                                                .get("fingerprint")}
                     for a, x in data["adapters"].items()},
        "matrix": data["matrix"],
        "distributions": [{k: d[k] for k in ("metric", "unit", "rows")} for d in data["distributions"]],
        "never_hit": [f"{c['adapter']} {c['procedure']}:{c['outcome']}" for c in data["coverage"] if c["count"] == 0],
        "mutants": data["mutants"],
        "findings": data.get("findings", []),
        "counterexamples": [{k: x[k] for k in ("adapter", "seed", "property", "message", "shrunk_steps")}
                            for x in data["counterexamples"]],
    }
    return _write_atomically(out_dir, doc, files, summary, manifest["campaign"])


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }}
th {{ background: #f3f3f3; }} pre {{ background: #f7f7f7; padding: 0.6em; overflow-x: auto; }}
img {{ max-width: 100%; }}
</style></head><body>
{body}
</body></html>
"""


# What a report directory holds; an existing --out is replaced only if it holds nothing else.
REPORT_ENTRIES = frozenset({"report.md", "report.html", "summary.json", "img", "counterexamples"})
_REPORT_MARKERS = ("report.md", "summary.json")


def check_out_dir(out_dir: str | Path) -> Path:
    """Refuse an ``--out`` that is not new, empty, or an earlier rmqha report.

    The report replaces its directory wholesale, so ``--out .`` or ``--out ~/src``
    would otherwise move a user's files away; checked before any Spark work.
    """
    out_dir = Path(out_dir).resolve()
    if not out_dir.exists():
        return out_dir
    if not out_dir.is_dir():
        raise ReportError(f"{out_dir}: exists and is not a directory; choose another report directory")
    entries = {p.name for p in out_dir.iterdir()}
    if entries and not (set(_REPORT_MARKERS) <= entries and entries <= REPORT_ENTRIES):
        foreign = sorted(entries - REPORT_ENTRIES) or sorted(entries)
        raise ReportError(f"{out_dir}: exists and is not an rmqha report (it holds {', '.join(foreign[:3])}); "
                        f"choose a new or empty report directory")
    return out_dir


def _write_atomically(out_dir: Path, doc: _Doc, scripts: dict[str, str], summary: dict, campaign: str) -> Path:
    out_dir = check_out_dir(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        (tmp / "img").mkdir()
        for name, png in doc.images.items():
            (tmp / "img" / name).write_bytes(png)
        (tmp / "counterexamples").mkdir()
        for name, script in scripts.items():
            (tmp / "counterexamples" / name).write_text(script, encoding="utf-8")
        (tmp / "report.md").write_text("\n".join(doc.md), encoding="utf-8")
        (tmp / "report.html").write_text(
            _HTML.format(title=html.escape(f"rmqha report {campaign}"), body="\n".join(doc.html)), encoding="utf-8")
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, default=str), encoding="utf-8")
        if out_dir.exists():
            old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir
