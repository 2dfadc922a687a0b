"""Report build time over 1M and 10M run rows, on Spark local[2], beside DuckDB.

Generates a synthetic campaign directory (pyarrow, committed chunk by chunk exactly as
``rmqha run`` commits them, in chunks of the size it would choose), then measures, for each size:

* ``rmqha report`` end to end in a fresh process on ``local[2]``: interpreter and
  Spark start-up, validation, aggregation, plots, writing the report. This is the
  figure the target applies to;
* the aggregation alone (``reports.build.collate``) in a warm local[2] session: it sums
  the chunks' rollups (conformance/results/rollup.py, written when each chunk is
  committed) and reads only the metric sample, coverage and counterexamples;
* the same aggregation written in DuckDB SQL as a full scan (the same groupings, exact statistics,
  percentiles, histograms, coverage sums and shortest counterexamples), as the
  single-machine reference point; and the ratios between them.

The synthetic distributions are calibrated on real ``rmqha run`` output (reference
and mutant adapters, dledger, all fault mixes): about 4.4 metric rows per run (one
time to first leader around 2.7 s, one messages/terms pair per election, 1.5
elections a run, a failover for each leader change, around 12 s), nine property
verdicts per run, per-chunk coverage of every spec outcome, failure rates of 0% for
the reference and 2% and 0.5% for two mutants, and one counterexample per failing
run (a 270-byte script; its trace is cut to about 2 KB to keep the data set on one
disk: real minimal traces are 60-270 KB).

    python benchmarks/report_scale.py [--rows 1000000 10000000] [--keep DIR]

Target: 10M run rows in under 30 s end to end on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cli.commands.run import default_chunk_size  # noqa: E402
from results import io  # noqa: E402
from results.schema import SCHEMAS  # noqa: E402
from conformance.spark_campaign import CampaignSpec, new_manifest, plan_chunks  # noqa: E402

# adapter -> failure rate (the property a mutant violates is what it is known for)
ADAPTERS = {"reference": (0.0, None), "mutant:vote-not-durable": (0.02, "one-vote-per-term"),
            "mutant:g1-commit-rule": (0.005, "committed-prefix")}
FAULT_MIXES = ("mixed", "crash", "partition", "lossy", "none")
SCRIPT = "scenario dledger\nnodes n1 n2 n3\nseed {seed}\n" + "run 500\ncrash-leader\nrun 1200\nrestart-all\n" * 8
TRACE_LINE = {"kind": "deliver", "time": 0, "src": "n1", "dst": "n2", "msg": "VoteRequest", "seq": 0,
              "body": {"term": 2, "leaderId": "n1", "ledgerEndIndex": 3}}
TRACE = "".join(json.dumps({**TRACE_LINE, "time": 10 * i, "seq": i}) + "\n" for i in range(16))


def _strings(values, n, rng=None, p=None):
    """A string column drawn from ``values`` (dictionary-built: fast, plain string type)."""
    values = list(values)
    idx = np.zeros(n, dtype=np.int32) if rng is None else rng.choice(len(values), size=n, p=p).astype(np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(values)).cast(pa.string())


def _chunk_tables(chunk, manifest, rng, properties, outcomes) -> dict[str, pa.Table]:
    n = chunk.runs
    rate, violated = ADAPTERS[chunk.adapter]
    info = manifest["adapters"][chunk.adapter]
    seeds = np.arange(chunk.first_seed, chunk.last_seed, dtype=np.int64)
    size = np.where(seeds % 2 == 0, 3, 5).astype(np.int32)
    fail = rng.random(n) < rate
    elections = (1 + rng.poisson(0.5, n)).astype(np.int32)
    first_leader = 2000.0 + rng.gamma(2.0, 375.0, n)
    key = lambda m, index: {"campaign": _strings(["bench"], m), "adapter": _strings([chunk.adapter], m),  # noqa: E731
                            "seed": pa.array(seeds[index])}
    everyone = np.arange(n)
    runs = pa.table({
        **key(n, everyone),
        "implementation": _strings([info["implementation"]], n),
        "implementation_version": _strings([info["version"]], n),
        "profile": _strings([info["profile"]], n), "scenario": _strings(["dledger"], n),
        "group_size": pa.array(size), "fault_mix": _strings(FAULT_MIXES, n, rng),
        "duration_ms": pa.array(np.full(n, 30_000, dtype=np.int64)),
        "steps": pa.array((size * 4_000 + rng.integers(-800, 800, n)).astype(np.int64)),
        "simulated_ms": pa.array(rng.normal(40_700, 3_000, n).astype(np.int64)),
        "wall_ms": pa.array(rng.gamma(2.0, 60.0, n)),
        "elections": pa.array(elections), "leader_changes": pa.array(elections - 1),
        "max_term": pa.array((elections + rng.poisson(0.3, n)).astype(np.int64)),
        "verdict": pa.array(np.where(fail, "fail", "pass")),
        "first_violation": pa.array(np.where(fail, violated, None)),
        "first_violation_step": pa.array(np.where(fail, rng.integers(3, 60, n), None), type=pa.int32()),
        "error": pa.nulls(n, pa.string()),
        "failed_properties": pa.array([[violated] if f else [] for f in fail], type=pa.list_(pa.string())),
        "not_applicable_properties": pa.array([[]] * n, type=pa.list_(pa.string())),
        "time_to_first_leader_ms": pa.array(first_leader),
    }).cast(SCHEMAS["runs"])
    # metrics, long format: one time to first leader, a messages/terms pair per election,
    # a failover per leader change
    per_election = np.repeat(everyone, elections)
    per_change = np.repeat(everyone, elections - 1)
    order = np.concatenate([everyone, per_election, per_election, per_change])
    names = np.concatenate([np.zeros(n, np.int32), np.ones(len(per_election), np.int32),
                            np.full(len(per_election), 2, np.int32), np.full(len(per_change), 3, np.int32)])
    values = np.concatenate([first_leader, rng.gamma(2.0, 150.0, len(per_election)),
                             1.0 + (rng.random(len(per_election)) < 0.03), rng.gamma(2.0, 6_000.0, len(per_change))])
    m = len(order)
    metrics = pa.table({
        **key(m, order), "scenario": _strings(["dledger"], m),
        "metric": pa.DictionaryArray.from_arrays(pa.array(names), pa.array(
            ["time_to_first_leader_ms", "messages_per_election", "terms_per_election", "failover_ms"])
        ).cast(pa.string()),
        "value": pa.array(values),
    }).cast(SCHEMAS["metrics"])
    k = len(properties)
    pv = np.where(np.repeat(fail, k) & (np.tile(np.array(properties), n) == violated), "fail", "pass")
    props = pa.table({
        **key(n * k, np.repeat(everyone, k)), "scenario": _strings(["dledger"], n * k),
        "property": pa.DictionaryArray.from_arrays(pa.array(np.tile(np.arange(k, dtype=np.int32), n)),
                                                   pa.array(properties)).cast(pa.string()),
        "verdict": pa.array(pv), "violations": pa.array((pv == "fail").astype(np.int32)),
        "first_step": pa.nulls(n * k, pa.int32()),
    }).cast(SCHEMAS["properties"])
    coverage = pa.Table.from_pylist([
        {"campaign": "bench", "adapter": chunk.adapter, "first_seed": chunk.first_seed,
         "last_seed": chunk.last_seed - 1, "scenario": "dledger", "procedure": p, "outcome": o,
         "count": int(rng.integers(0, 10 * n)) if rng.random() < 0.85 else 0, "runs": n} for p, o in outcomes],
        schema=SCHEMAS["coverage"])
    failing = np.flatnonzero(fail)
    f = len(failing)
    counterexamples = pa.table({
        **key(f, failing), "scenario": _strings(["dledger"], f), "profile": _strings([info["profile"]], f),
        "property": _strings([violated or ""], f), "message": _strings([f"{violated} violated"], f),
        "script": pa.array([SCRIPT.format(seed=s) for s in seeds[failing]]), "trace_jsonl": _strings([TRACE], f),
        "original_steps": pa.array(rng.integers(20, 80, f).astype(np.int32)),
        "shrunk_steps": pa.array(rng.integers(3, 12, f).astype(np.int32)),
    }).cast(SCHEMAS["counterexamples"])
    return {"runs": runs, "metrics": metrics, "properties": props, "coverage": coverage,
            "counterexamples": counterexamples}


def synthesize(out: Path, rows: int, chunk_size: int | None = None) -> None:
    per_adapter = rows // len(ADAPTERS)
    spec = CampaignSpec("bench", "dledger", tuple(ADAPTERS), per_adapter,
                        chunk_size=chunk_size or default_chunk_size(per_adapter))
    chunks = plan_chunks(spec)
    out.mkdir(parents=True)
    manifest = new_manifest(spec, chunks)
    io.write_manifest(out, manifest)
    properties = manifest["properties"]["dledger"]
    outcomes = [(p, o) for p, os in manifest["outcomes"]["dledger"].items() for o in os]
    rng = np.random.default_rng(7)
    for chunk in chunks:
        io.commit_chunk(out, chunk.id, _chunk_tables(chunk, manifest, rng, properties, outcomes))


def duckdb_aggregation(out: Path) -> float:
    """What ``reports.build.collate`` computes, in DuckDB SQL, over the same files."""
    import duckdb

    t = {name: f"read_parquet('{out}/{name}/*.parquet')" for name in ("runs", "metrics", "coverage", "counterexamples")}
    wanted = "('time_to_first_leader_ms', 'failover_ms', 'terms_per_election', 'messages_per_election')"
    start = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"""
        SELECT adapter, scenario, profile, fault_mix, group_size, count(*),
               sum((verdict = 'pass')::INT), sum((verdict = 'fail')::INT), sum((verdict = 'error')::INT),
               avg(steps), avg(simulated_ms / 1000.0), avg(elections), avg(leader_changes), max(max_term),
               avg(wall_ms)
        FROM {t['runs']} GROUP BY ALL""").fetchall()
    con.execute(f"""
        SELECT adapter, property, kind, count(*) FROM (
            SELECT adapter, unnest(failed_properties) AS property, 'fail' AS kind FROM {t['runs']}
            UNION ALL
            SELECT adapter, unnest(not_applicable_properties), 'na' FROM {t['runs']})
        GROUP BY ALL""").fetchall()
    con.execute(f"""
        CREATE TEMP TABLE m AS SELECT adapter, metric, value FROM {t['metrics']} WHERE metric IN {wanted}""")
    con.execute("""
        SELECT adapter, metric, count(*), avg(value), min(value), max(value),
               quantile_cont(value, [0.5, 0.9, 0.99]) FROM m GROUP BY ALL""").fetchall()
    con.execute("""
        WITH b AS (SELECT metric, min(value) AS lo, greatest((max(value) - min(value)) / 40, 1e-9) AS w
                   FROM m GROUP BY metric)
        SELECT m.metric, adapter, least(floor((value - lo) / w), 39) AS bin, count(*)
        FROM m JOIN b USING (metric) GROUP BY ALL""").fetchall()
    con.execute(f"SELECT adapter, procedure, outcome, sum(count) FROM {t['coverage']} GROUP BY ALL").fetchall()
    con.execute(f"""
        SELECT * FROM {t['counterexamples']}
        QUALIFY row_number() OVER (PARTITION BY adapter, property ORDER BY shrunk_steps, seed) = 1
        ORDER BY adapter, property LIMIT 24""").fetchall()
    return time.perf_counter() - start


def spark_aggregation(out: Path) -> float:
    """``collate`` alone in a warm local[2] session (started, and one job run, beforehand)."""
    from results.spark import spark_session
    from reports.build import collate

    spark = spark_session("local[2]", app="rmqha report benchmark")
    spark.range(1).count()
    start = time.perf_counter()
    collate(out, spark)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--keep", default=None, help="keep the synthetic campaigns under this directory")
    ap.add_argument("--chunk-size", type=int, default=None,
                    help="runs per chunk (default: what 'rmqha run' would choose, 10,000 at 10M runs)")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rmqha-bench-"))
    print(f"{'run rows':>10s} {'metric rows':>11s} {'synth s':>7s} {'report s':>8s} {'spark agg s':>11s} "
          f"{'duckdb s':>8s} {'spark/duckdb':>12s} {'target':>7s}")
    try:
        for rows in args.rows:
            out = base / f"campaign-{rows}"
            made = 0.0
            if not out.exists():
                t = time.perf_counter()
                synthesize(out, rows, args.chunk_size)
                made = time.perf_counter() - t
            metric_rows = sum(m["tables"]["metrics"]["rows"] for m in io.committed_chunks(out).values())
            report = base / f"report-{rows}"
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "cli", "report", str(out), "--out", str(report),
                            "--master", "local[2]"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
            report_s = time.perf_counter() - t
            spark_s = spark_aggregation(out)
            duck_s = duckdb_aggregation(out)
            verdict = "-" if rows < 10_000_000 else ("ok" if report_s < 30 else "MISSED")
            print(f"{rows:>10,} {metric_rows:>11,} {made:>7.1f} {report_s:>8.1f} {spark_s:>11.1f} {duck_s:>8.2f} "
                  f"{spark_s / duck_s:>11.1f}x {verdict:>7s}", flush=True)
        print("report s: `rmqha report` end to end in a fresh process (target: < 30 s at 10M run rows); "
              "spark agg s: collate alone in a warm session (chunk rollups + the metric sample); "
              "duckdb s: the same aggregation in DuckDB, scanning every row")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
