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
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from tabulate import tabulate

from reports import plots
from reports.build import PROCESS_ADAPTERS
from reports.errors import ReportError


def _states(states: list, limit: int = 80) -> str:
    """Node states as code, the first ``limit`` of them and how many more."""
    shown = ", ".join(f"`{n}`" for n in states[:limit])
    return (shown + (f" and {len(states) - limit} more" if len(states) > limit else "")) or "none"


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

    def table(self, rows: list[list[Any]], headers: list[str], classes: list[list[str]] | None = None) -> None:
        """``classes``: a CSS class per cell (HTML only), e.g. ``fail`` to make a cell stand out."""
        if not rows:
            self.para("(none)")
            return
        self.md.append(tabulate(rows, headers=headers, tablefmt="github") + "\n")
        if classes is None:
            self.html.append(tabulate(rows, headers=headers, tablefmt="html"))
            return
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
        body = "".join(
            "<tr>" + "".join(f'<td class="{c}">{html.escape(str(v))}</td>' if c else f"<td>{html.escape(str(v))}</td>"
                             for v, c in zip(row, cls)) + "</tr>"
            for row, cls in zip(rows, classes))
        self.html.append(f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody>\n</table>")

    def verdict(self, kind: str, text: str) -> None:
        """The report's answer, first thing on the page."""
        self.md.append(f"> **Verdict: {kind.upper()}**. {text}\n")
        self.html.append(f'<div class="verdict {_slug(kind)}"><b>Verdict: {html.escape(kind.upper())}</b>. '
                         f"{_inline_html(text)}</div>")

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
        return f"ERROR: all {entry['errors']:,} runs errored"
    text = f"{entry['violations']:,}/{entry['runs']:,} ≤{_pct(entry['upper95'])}"
    if kind == "fail":
        text = "FAIL " + text + (" (profile)" if entry["known_profile_difference"] else "")
    else:
        text = "pass " + text
    if entry["errors"]:  # runs that could not be judged are not in the fraction: say so
        text += f", {entry['errors']:,} errored"
    return text


def _cell_class(entry: dict | None) -> str:
    if entry is None:
        return ""
    if entry["cell"] == "fail":
        return "profile" if entry["known_profile_difference"] else "fail"
    if entry["cell"] == "error" or entry["errors"]:
        return "error"
    return "na" if entry["cell"] == "not_applicable" else "pass"


# adapters whose spec names files or commands, resolved against the campaign's directory
_PATH_ADAPTERS = PROCESS_ADAPTERS


def halted_runs_note(manifest: dict[str, Any]) -> str:
    """What a failing run judged: campaigns stop a run soon after its first violation."""
    ms = manifest.get("halt_after_violation_ms")
    if ms is None:
        return ""
    return (f" A run stops {ms / 1000:g} simulated seconds after its first violation: in a failing run, a "
            f"property counted as holding held up to there.")


def replay_command(script: Path, adapter: str, manifest: dict[str, Any]) -> str:
    """The command that replays a stored counterexample, from any directory.

    ``--adapter`` is always explicit: ``rmqha replay`` starts no process a script names
    unless told to. An adapter that may name relative paths (``stdio:java -cp build
    Shim``) runs from the directory the campaign was started in."""
    return _in_campaign_directory(f"rmqha replay {shlex.quote(str(script))} --adapter {shlex.quote(adapter)}",
                                  adapter, manifest)


# campaign settings (the manifest's spec) as the flags of ``rmqha run`` that produce them
_FLAGS = {"scenario": "--scenario", "adapters": "--adapter", "runs": "--runs", "first_seed": "--seed",
          "profile": "--profile", "group_sizes": "--group-size", "fault_mixes": "--fault-mix",
          "duration_ms": "--duration", "chunk_size": "--chunk-size"}


def _flags(spec: dict[str, Any], **override: Any) -> list[str]:
    """``--flag value`` pairs of a campaign's settings (``override`` replaces some; None drops one).
    Settings this version does not know are shown as ``--name value`` in the same style."""
    words = []
    spec = {**spec, **override}
    replays, seconds = spec.pop("shrink_replays", None), spec.pop("shrink_seconds", None)
    search = spec.pop("search", None)
    for key, value in spec.items():
        if key == "campaign" or value is None or value is False or value == "":
            continue
        flag = _FLAGS.get(key, "--" + key.replace("_", "-"))
        if value is True:
            words.append(flag)
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            words.append(f"{flag} {shlex.quote(str(v))}")
    if replays is not None and seconds is not None:  # the budget is one flag, off is another
        words.append("--no-shrink" if not (replays > 0 and seconds > 0) else f"--shrink-budget {replays}/{seconds:g}")
    if search is False:
        words.append("--no-search")
    return words


def settings_command(spec: dict[str, Any], width: int = 88) -> str:
    """The settings of a campaign as the command a user writes to run it again, wrapped
    with backslashes (still one shell command) so that it fits a page."""
    lines, line = [], "rmqha run"
    for word in _flags(spec):
        if len(line) + 1 + len(word) > width:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line += " " + word
    return "\n".join(lines + [line])


def rerun_command(spec: dict[str, Any], adapter: str, seed: int, manifest: dict[str, Any]) -> str:
    """The one run of a campaign for ``adapter`` and ``seed`` (group size and fault mix follow
    from the seed, as in the campaign), into a results directory of its own."""
    command = " ".join(["rmqha run", *_flags(spec, adapters=[adapter], first_seed=seed, runs=1, chunk_size=None),
                        "--no-spark"])
    return _in_campaign_directory(command, adapter, manifest)


# a role of a mixed adapter (``broker=stdio:./b + controller=reference``, the one-line form of
# conformance.targets.join_roles): its spec follows ``ROLE=`` at the start or after `` + ``
_ROLE_SPEC = re.compile(r"(?:^|\s\+\s)(?:[a-z]+=)?(\S)")


def _names_paths(adapter: str) -> bool:
    """Whether ``adapter``, or any role of a mixed one, may name relative paths."""
    return any(adapter.startswith(_PATH_ADAPTERS, m.start(1)) for m in _ROLE_SPEC.finditer(adapter))


def _in_campaign_directory(command: str, adapter: str, manifest: dict[str, Any]) -> str:
    cwd = manifest.get("working_directory")
    if cwd and _names_paths(adapter):
        return f"cd {shlex.quote(cwd)} && {command}"
    return command


# an adapter whose nodes mostly answer without a deadline is ticked every 10 ms
TICKED_EVERY_10_MS_PERCENT = 50.0


def ticked_every_10_ms(data: dict[str, Any]) -> list[tuple[str, float]]:
    """(adapter, mean share of its nodes' answers without a ``next_deadline``) for each
    adapter whose nodes mostly give none, so the simulator ticks them every 10 ms."""
    rows = next((d["rows"] for d in data.get("distributions", ())
                 if d["metric"] == "answers_without_deadline_percent"), [])
    return [(r["adapter"], r["mean"]) for r in rows
            if r["mean"] is not None and r["mean"] > TICKED_EVERY_10_MS_PERCENT]


def render(data: dict[str, Any], out_dir: str | Path, stage: Callable[[str], None] = lambda what: None) -> Path:
    """Write the report; ``stage(what)`` is called as each slow part starts (plots)."""
    out_dir = Path(out_dir)
    doc = _Doc()
    manifest = data["manifest"]
    totals = data["totals"]
    doc.heading(1, f"rmqha conformance report: campaign {manifest['campaign']}")
    verdict = data.get("verdict")
    if verdict is not None:
        each = "; ".join(f"`{a}`: {v['verdict']} ({v['why']})" for a, v in verdict["adapters"].items())
        partial = "" if verdict["complete"] else " The campaign is incomplete: this judges only the runs so far."
        doc.verdict(verdict["verdict"], each + "." + partial)
    doc.para(
        f"{totals['runs']:,} runs; {totals['fail']:,} failed, {totals['error']:,} errored. "
        f"rmqha {manifest.get('rmqha_version')}, results schema {manifest.get('schema_version')}, "
        f"campaign created {manifest.get('created')}."
    )
    if manifest.get("spec"):
        doc.para("Settings:")
        doc.code(settings_command(manifest["spec"]), "sh")
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
    adapters = sorted(data["adapters"])
    doc.para("A row per property, a column per implementation. Each cell: violations/runs and the 95% "
             "upper confidence bound of the violation rate (Wilson score); runs that errored cannot be "
             "judged and are counted apart. `(profile)` marks a violation the profile is known not to "
             "guarantee." + halted_runs_note(manifest))
    doc.table([[p] + [_cell(by_cell[(a, p)]) if (a, p) in by_cell else "–" for a in adapters] for p in props],
              ["property"] + adapters,
              classes=[["prop"] + [_cell_class(by_cell.get((a, p))) for a in adapters] for p in props])
    if data.get("errors"):
        doc.heading(3, "Errored runs")
        doc.para("Runs in which the implementation crashed, hung or answered garbage: no property was "
                 "judged in them. The most frequent messages, with the first seed that shows each:")
        doc.table([[e["adapter"], e["runs"], e["first_seed"], e["message"]] for e in data["errors"]],
                  ["adapter", "runs", "first seed", "message"])
        spec = manifest.get("spec") or {}
        if spec:
            doc.para("To run one of them again (into a new results directory):")
            doc.code("\n".join(dict.fromkeys(rerun_command(spec, e["adapter"], e["first_seed"], manifest)
                                             for e in data["errors"])), "sh")
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
    for adapter, share in ticked_every_10_ms(data):
        doc.para(f"`{adapter}`: {share:.0f}% of its nodes' answers give no `next_deadline`, so the simulator "
                 "ticks every node every 10 simulated ms, nearly always for nothing. Answering it (the earliest "
                 "time a tick can do anything, docs/adapter-protocol.md) skips the idle ticks, makes runs and "
                 "shrinking several times cheaper, and changes nothing else.")

    stage("plots and the report files")
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

    if data.get("abstract"):
        doc.heading(2, "Abstract protocol states")
        doc.para("Each step that changed a node reaches an abstract state (docs/scenarios.md, \"Search\"): in a "
                 "DLedger or Raft group the node's role, term, vote, log and commit relative to its group, the "
                 "live leaders; in the controller stack a broker's role, fencing, SyncStateSet membership, epoch "
                 "and log relative to the recorded master, the set's shape; in a classic master/slave group a "
                 "broker's role, flush, link (connections, acks, reports) and log relative to the configured "
                 "master, the live masters; in a group of broker replicas a replica's role, flush, link, epoch, "
                 "and epoch file and log relative to the current master's, the live masters; with what it "
                 "handled and the network. "
                 "The campaign steers towards new ones; how many it reached, how that grew over the runs, and "
                 "which node states no run reached:")
        for a in data["abstract"]:
            doc.heading(3, a["adapter"])
            doc.para(f"{a['states']:,} distinct abstract states; {a['node_states']} of the {a['universe']} node "
                     f"states.")
            if "reference_states" in a:
                doc.para(f"{a['reference_states_reached']} of the {a['reference_states']} node states rmqha's "
                         f"reference reaches in long campaigns (conformance/scenarios/reference_reached.json).")
            doc.table([[g["up_to_seed"], g["states"]] for g in a["growth"]], ["runs up to seed", "states reached"])
            if "reference_states" in a:
                doc.para("Node states the reference reaches that no run here reached (where the campaign did not "
                         "steer, or where the implementation does not go): " + _states(a["reference_never_reached"])
                         + ".")
                doc.para("Node states reached here that no campaign of the reference has reached (the "
                         "implementation's own ways, or a corner no sweep has found yet): "
                         + _states(a["beyond_reference"]) + ".")
                rest = sorted(set(a["never_reached"]) - set(a["reference_never_reached"]))
                doc.para("Other node states never reached, by no campaign of the reference either (most of these "
                         "combinations cannot happen): " + _states(rest) + ".")
            else:
                doc.para("Node states never reached (many combinations cannot happen): " + _states(a["never_reached"])
                         + ".")

    if data["mutants"]:
        doc.heading(2, "Mutants")
        doc.table([[m["mutant"], m["runs"], m["failed_runs"], "killed" if m["killed"] else "SURVIVED",
                    ", ".join(m["by"]) or "–"] for m in data["mutants"]],
                  ["mutant", "runs", "failed runs", "verdict", "killed by"])

    if data.get("findings"):
        doc.heading(2, "Findings")
        doc.para("Documented limits of the protocol or its configuration, looked for in every run: not "
                 "violations. Each names the property that still judges the cases the limit does not cover, "
                 "and how many runs violated it.")
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
    else:
        doc.para("One per implementation and violated property, the shortest found. Those whose script violates "
                 "nothing before them come first: a violation that follows another in its script may be a "
                 "consequence of it (a step checker goes on from the spec's reading after a wrong step).")
    files = {}
    replays = {}
    where = check_out_dir(out_dir)  # where the report will be: replay commands work from any directory
    for x in data["counterexamples"]:
        name = _slug(f"{x['adapter']}-{x['property']}-seed{x['seed']}") + ".rmqha"
        files[name] = x["script"]
        doc.heading(3, f"{x['property']}: {x['adapter']} (seed {x['seed']})")
        replays[name] = replay_command(where / "counterexamples" / name, x["adapter"], manifest)
        how = (f"shrunk from {x['original_steps']} to {x['shrunk_steps']} steps" if x.get("shrunk", True)
               else f"not shrunk (cut after the violating step: {x['shrunk_steps']} of {x['original_steps']} steps)")
        doc.para(f"{x['message']} — {how}. Replay: `{replays[name]}`")
        if x.get("preceded_by"):
            doc.para(f"This script violates {x['preceded_by']} first, {x['preceded_by_ms']:,} simulated ms "
                     f"earlier: this violation may be a consequence of that one. Start with that one.")
        doc.code(x["script"])
        if x["trace_jsonl"]:
            doc.image(_slug(name) + ".png",
                      plots.space_time_diagram(x["trace_jsonl"], f"{x['property']} ({x['adapter']}, seed {x['seed']})"),
                      f"space-time diagram of {name}")

    summary = {
        "campaign": manifest["campaign"],
        "rmqha_version": manifest.get("rmqha_version"),
        "schema_version": manifest.get("schema_version"),
        "verdict": data.get("verdict"),
        "totals": totals,
        "errors": data.get("errors", []),
        "completeness": data["completeness"],
        "adapters": {a: {k: x[k] for k in ("implementation", "implementation_version", "profile", "runs", "pass",
                                           "fail", "error")} | {"fingerprint": (manifest["adapters"].get(a) or {})
                                                                .get("fingerprint")}
                     for a, x in data["adapters"].items()},
        "matrix": data["matrix"],
        "distributions": [{k: d[k] for k in ("metric", "unit", "rows")} for d in data["distributions"]],
        "never_hit": [f"{c['adapter']} {c['procedure']}:{c['outcome']}" for c in data["coverage"] if c["count"] == 0],
        "abstract_states": data.get("abstract", []),
        "mutants": data["mutants"],
        "findings": data.get("findings", []),
        "counterexamples": [{k: x.get(k) for k in ("adapter", "seed", "property", "message", "shrunk_steps", "shrunk",
                                                   "preceded_by", "preceded_by_ms")}
                            | {"replay": command} for x, command in zip(data["counterexamples"], replays.values())],
    }
    return _write_atomically(out_dir, doc, files, summary, manifest["campaign"])


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; display: block; max-width: 100%;
        overflow-x: auto; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }}
th {{ background: #f3f3f3; }} pre {{ background: #f7f7f7; padding: 0.6em; overflow-x: auto; }}
td {{ overflow-wrap: anywhere; }} td.prop {{ font-family: ui-monospace, monospace; white-space: nowrap; }}
td.fail {{ background: #f8d0d0; color: #800; font-weight: bold; }}
td.error {{ background: #fde8c0; color: #7a4a00; }} td.profile {{ background: #f2ecd0; }}
td.pass {{ color: #1c5e20; }} td.na {{ color: #888; }}
.verdict {{ font-size: 1.2em; padding: 0.6em 0.9em; border-radius: 4px; margin: 0.5em 0 1em; }}
.verdict.conformant {{ background: #d8f0d8; }} .verdict.not-conformant {{ background: #f8d0d0; }}
.verdict.errors {{ background: #fde8c0; }} .verdict.not-applicable {{ background: #eee; }}
img {{ max-width: 100%; }}
</style></head><body>
{body}
</body></html>
"""


# What a report directory holds; an existing --out is replaced only if it holds nothing else.
REPORT_ENTRIES = frozenset({"report.md", "report.html", "summary.json", "img", "counterexamples"})
_REPORT_MARKERS = ("report.md", "summary.json")
# A handler-level check's report (``rmqha check`` of an implementation that runs no nodes):
# at the top of a report directory, or a subdirectory per adapter when one check names several.
HANDLER_LEVEL_MD, HANDLER_LEVEL_JSON = "handler-level.md", "handler-level.json"
_HANDLER_LEVEL = frozenset({HANDLER_LEVEL_MD, HANDLER_LEVEL_JSON})


def _is_handler_level_subdir(path: Path) -> bool:
    names = {p.name for p in path.iterdir()} if path.is_dir() else set()
    return bool(names) and names <= _HANDLER_LEVEL


def check_out_dir(out_dir: str | Path) -> Path:
    """Refuse an ``--out`` that is not new, empty, or an earlier rmqha report (a campaign's,
    a handler-level check's, or both).

    The report replaces its directory wholesale, so ``--out .`` or ``--out ~/src``
    would otherwise move a user's files away; checked before any Spark work.
    """
    out_dir = Path(out_dir).resolve()
    if not out_dir.exists():
        return out_dir
    if not out_dir.is_dir():
        raise ReportError(f"{out_dir}: exists and is not a directory; choose another report directory")
    entries = {p.name for p in out_dir.iterdir()}
    subdirs = {e for e in entries - REPORT_ENTRIES - _HANDLER_LEVEL if _is_handler_level_subdir(out_dir / e)}
    ours = entries & (REPORT_ENTRIES | _HANDLER_LEVEL) | subdirs
    marked = set(_REPORT_MARKERS) <= entries or HANDLER_LEVEL_MD in entries or bool(subdirs)
    if entries and (entries - ours or not marked):
        foreign = sorted(entries - ours) or sorted(entries)
        raise ReportError(f"{out_dir}: exists and is not an rmqha report (it holds {', '.join(foreign[:3])}); "
                        f"choose a new or empty report directory")
    return out_dir


def replace_report_dir(out_dir: str | Path, fill: Callable[[Path], None]) -> Path:
    """Write a report directory whole: ``fill`` writes into a new directory beside it, which
    then takes its place, so a reader never sees half of a report or two reports mixed."""
    out_dir = check_out_dir(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        fill(tmp)
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


def write_handler_level(out_dir: str | Path, reports: dict[str, tuple[str, dict]], *,
                        beside_campaign: bool) -> list[Path]:
    """Handler-level reports, (markdown, JSON summary) by subdirectory ("" for the top). Beside
    a campaign's report just written they are added to it; alone they replace the directory,
    as a campaign's report does. The markdown files written, in order."""
    def fill(into: Path) -> None:
        for sub, (md, summary) in reports.items():
            target = into / sub if sub else into
            target.mkdir(exist_ok=True)
            (target / HANDLER_LEVEL_MD).write_text(md, encoding="utf-8")
            (target / HANDLER_LEVEL_JSON).write_text(json.dumps(summary, indent=2), encoding="utf-8")

    if beside_campaign:
        fill(Path(out_dir))
    else:
        replace_report_dir(out_dir, fill)
    return [Path(out_dir) / sub / HANDLER_LEVEL_MD if sub else Path(out_dir) / HANDLER_LEVEL_MD for sub in reports]


def _write_atomically(out_dir: Path, doc: _Doc, scripts: dict[str, str], summary: dict, campaign: str) -> Path:
    def fill(tmp: Path) -> None:
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

    return replace_report_dir(out_dir, fill)
