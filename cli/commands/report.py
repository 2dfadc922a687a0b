"""``rmqha report DIR --out REPORTDIR``: build the conformance report of a campaign, with Spark."""
from __future__ import annotations

import time

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
    p.add_argument("--out", default="rmqha-report", help="report directory (default: %(default)s)")
    p.add_argument("--master", default=DEFAULT_MASTER, help="Spark master (default: %(default)s)")
    p.set_defaults(func=run)


def build(results: str, out: str, master: str) -> dict:
    from results.io import validated_chunks
    from results.spark import spark_session
    from reports.build import collate
    from reports.render import check_out_dir, render

    # bad input fails in one line before Spark starts
    check_out_dir(out)
    validated = validated_chunks(results)
    spark = spark_session(master, app="rmqha report")
    data = collate(results, spark, validated)
    render(data, out)
    return data


def run(args) -> int:
    started = time.perf_counter()
    data = build(args.results, args.out, args.master)
    t = data["totals"]
    print(f"report of {t['runs']:,} runs ({t['fail']:,} failed, {t['error']:,} errors) written to "
          f"{args.out}/report.md, report.html, summary.json in {time.perf_counter() - started:.1f} s")
    return 0
