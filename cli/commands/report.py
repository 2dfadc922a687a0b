"""``rmqha report DIR --out REPORTDIR``: build the conformance report of a campaign, with
Spark (``--master``), or in this process with Arrow (``--no-spark``).

Exit status 0 when the report was written (its verdict is printed and is in
summary.json; ``rmqha check`` exits with it), 2 for a bad campaign directory or --out.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from cli.args import output_dir
from results.spark import DEFAULT_MASTER


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="collate a campaign's results into report.md, report.html and summary.json (Spark)",
        description="Build the conformance report of a campaign directory written by 'rmqha run': "
        "implementation x property matrix, per-scenario tables, distributions with plots, spec coverage, "
        "mutant kills, and each counterexample with its script, diagram and replay command.",
    )
    p.add_argument("results", metavar="DIR", help="campaign results directory")
    p.add_argument("--out", default="rmqha-report", type=output_dir, help="report directory (default: %(default)s)")
    p.add_argument("--master", default=DEFAULT_MASTER, help="Spark master (default: %(default)s)")
    p.add_argument("--no-spark", action="store_true",
                   help="collate in this process with Arrow instead of starting Spark (campaigns one machine holds)")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    p.set_defaults(func=run)


class Stages:
    """Progress of a report build on stderr: each stage as it starts, with the time so far
    (Spark's start and a large campaign's collation take a while: never silence)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.started = time.perf_counter()

    def __call__(self, what: str) -> None:
        if not self.quiet:
            print(f"report: {what} ({time.perf_counter() - self.started:.1f} s)", file=sys.stderr, flush=True)


def build(results: str, out: str, master: str | None, stage=None) -> dict:
    """Collate ``results`` into ``out``; ``master=None``: with Arrow, no Spark."""
    from results.io import validated_chunks
    from results.spark import spark_session
    from reports.build import ArrowEngine, SparkEngine, collate
    from reports.render import check_out_dir, render

    # bad input fails in one line before Spark starts
    stage = stage or Stages(quiet=True)
    results = str(Path(results).resolve())  # Spark's JVM may have started in another directory
    check_out_dir(out)
    validated = validated_chunks(results)
    if master is None:
        engine = ArrowEngine()
    else:
        stage(f"starting Spark ({master})")
        engine = SparkEngine(spark_session(master, app="rmqha report"))
    data = collate(results, engine, validated, stage=lambda what: stage(f"collating: {what}"))
    render(data, out, stage=stage)
    return data


def verdict_line(data: dict) -> str:
    v = data["verdict"]
    each = "; ".join(f"{a}: {x['verdict']} ({x['why']})" for a, x in v["adapters"].items())
    return f"verdict: {v['verdict'].upper()}" + (f" — {each}" if each else "") + \
        ("" if v["complete"] else " (incomplete campaign)")


def run(args) -> int:
    started = time.perf_counter()
    data = build(args.results, args.out, None if args.no_spark else args.master, Stages(args.quiet))
    t = data["totals"]
    print(f"report of {t['runs']:,} runs ({t['fail']:,} failed, {t['error']:,} errored) written to "
          f"{args.out}/report.md, report.html, summary.json in {time.perf_counter() - started:.1f} s")
    print(verdict_line(data))
    return 0
