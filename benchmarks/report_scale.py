"""Report build time over 1M and 10M run rows, on Spark local[2], beside DuckDB.

Generates a synthetic campaign directory with realistic distributions (three
adapters, a 0.2% failure rate, two to three metrics per run, per-chunk coverage,
nine property verdicts per run), then times ``rmqha report`` end to end in a fresh
process (Spark start-up included) and, as the single-machine reference point, the
same core aggregation (verdicts and metric percentiles per adapter) with DuckDB.

    python benchmarks/report_scale.py [--rows 1000000 10000000] [--keep DIR]

Target: 10M run rows in under 30 s end to end on 2 cores.
"""
from __future__ import annotations

import argparse
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

from conformance.results import io  # noqa: E402
from conformance.results.schema import SCHEMAS  # noqa: E402
from conformance.spark_campaign import CampaignSpec, new_manifest, plan_chunks  # noqa: E402

ADAPTERS = ("reference", "mutant:vote-not-durable", "mutant:g1-commit-rule")
PROPERTIES = ("election-safety", "term-monotonic", "one-vote-per-term", "vote-log-up-to-date", "ledger-end-term",
              "committed-prefix", "leader-completeness", "applied-committed-end", "liveness")
CHUNK = 500_000


def _dict(values, n, rng=None, p=None):
    values = list(values)
    idx = np.zeros(n, dtype=np.int32) if rng is None else rng.choice(len(values), size=n, p=p).astype(np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(values)).cast(pa.string())


def synthesize(out: Path, rows: int) -> None:
    per_adapter = rows // len(ADAPTERS)
    spec = CampaignSpec("bench", "dledger", ADAPTERS, per_adapter, chunk_size=CHUNK, group_sizes=(3, 5))
    chunks = plan_chunks(spec)
    out.mkdir(parents=True)
    manifest = new_manifest(spec, chunks)
    io.write_manifest(out, manifest)
    rng = np.random.default_rng(7)
    for chunk in chunks:
        n = chunk.runs
        seeds = np.arange(chunk.first_seed, chunk.last_seed, dtype=np.int64)
        fail = rng.random(n) < 0.002
        first_leader = rng.gamma(4.0, 450.0, n)
        failed_props = pa.array([["one-vote-per-term"] if f else [] for f in fail], type=pa.list_(pa.string()))
        key = {"campaign": _dict(["bench"], n), "adapter": _dict([chunk.adapter], n), "seed": pa.array(seeds)}
        runs = pa.table({
            **key,
            "implementation": _dict([manifest["adapters"][chunk.adapter]["implementation"]], n),
            "implementation_version": _dict([manifest["adapters"][chunk.adapter]["version"]], n),
            "profile": _dict(["dledger-0.4"], n), "scenario": _dict(["dledger"], n),
            "group_size": pa.array(np.where(seeds % 2 == 0, 3, 5).astype(np.int32)),
            "fault_mix": _dict(["mixed", "crash", "partition", "lossy", "none"], n, rng),
            "duration_ms": pa.array(np.full(n, 30_000, dtype=np.int64)),
            "steps": pa.array(rng.integers(9_000, 25_000, n)), "simulated_ms": pa.array(rng.integers(38_000, 80_000, n)),
            "wall_ms": pa.array(rng.gamma(6.0, 6.0, n)),
            "elections": pa.array(rng.integers(1, 5, n).astype(np.int32)),
            "leader_changes": pa.array(rng.integers(0, 4, n).astype(np.int32)),
            "max_term": pa.array(rng.integers(1, 9, n)),
            "verdict": pa.array(np.where(fail, "fail", "pass")),
            "first_violation": pa.array(np.where(fail, "one-vote-per-term", None)),
            "first_violation_step": pa.array(np.where(fail, 3, None), type=pa.int32()),
            "error": pa.nulls(n, pa.string()),
            "failed_properties": failed_props,
            "not_applicable_properties": pa.array([[]] * n, type=pa.list_(pa.string())),
            "time_to_first_leader_ms": pa.array(first_leader),
        }).cast(SCHEMAS["runs"])
        m_runs = np.repeat(np.arange(n), 3)[: int(n * 2.5)]
        metrics = pa.table({
            "campaign": _dict(["bench"], len(m_runs)), "adapter": _dict([chunk.adapter], len(m_runs)),
            "seed": pa.array(seeds[m_runs]), "scenario": _dict(["dledger"], len(m_runs)),
            "metric": _dict(["time_to_first_leader_ms", "failover_ms", "messages_per_election", "terms_per_election"],
                            len(m_runs), rng, [0.4, 0.2, 0.2, 0.2]),
            "value": pa.array(rng.gamma(3.0, 900.0, len(m_runs))),
        }).cast(SCHEMAS["metrics"])
        props = pa.table({
            "campaign": _dict(["bench"], n * 9), "adapter": _dict([chunk.adapter], n * 9),
            "seed": pa.array(np.repeat(seeds, 9)), "scenario": _dict(["dledger"], n * 9),
            "property": pa.DictionaryArray.from_arrays(pa.array(np.tile(np.arange(9, dtype=np.int32), n)),
                                                       pa.array(PROPERTIES)).cast(pa.string()),
            "verdict": _dict(["pass"], n * 9), "violations": pa.array(np.zeros(n * 9, dtype=np.int32)),
            "first_step": pa.nulls(n * 9, pa.int32()),
        }).cast(SCHEMAS["properties"])
        outcomes = [(p, o) for p, os in manifest["outcomes"]["dledger"].items() for o in os]
        coverage = pa.Table.from_pylist([
            {"campaign": "bench", "adapter": chunk.adapter, "first_seed": chunk.first_seed,
             "last_seed": chunk.last_seed - 1, "scenario": "dledger", "procedure": p, "outcome": o,
             "count": int(rng.integers(0, 10 * n)), "runs": n} for p, o in outcomes], schema=SCHEMAS["coverage"])
        io.commit_chunk(out, chunk.id, {"runs": runs, "metrics": metrics, "properties": props, "coverage": coverage,
                                        "counterexamples": SCHEMAS["counterexamples"].empty_table()})


def duckdb_aggregation(out: Path) -> float:
    import duckdb

    start = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"""
        SELECT adapter, count(*), sum(CASE WHEN verdict = 'fail' THEN 1 ELSE 0 END)
        FROM read_parquet('{out}/runs/*.parquet') GROUP BY adapter""").fetchall()
    con.execute(f"""
        SELECT adapter, metric, count(*), avg(value), quantile_cont(value, [0.5, 0.9, 0.99])
        FROM read_parquet('{out}/metrics/*.parquet') GROUP BY adapter, metric""").fetchall()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--keep", default=None, help="keep the synthetic campaigns under this directory")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rmqha-bench-"))
    print(f"{'run rows':>10s} {'synthesize s':>12s} {'report s (local[2])':>20s} {'duckdb s':>9s} {'target':>8s}")
    for rows in args.rows:
        out = base / f"campaign-{rows}"
        if not out.exists():
            t = time.perf_counter()
            synthesize(out, rows)
            made = time.perf_counter() - t
        else:
            made = 0.0
        report = base / f"report-{rows}"
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "conformance", "report", str(out), "--out", str(report),
                        "--master", "local[2]"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        spark_s = time.perf_counter() - t
        duck_s = duckdb_aggregation(out)
        verdict = "ok" if rows < 10_000_000 or spark_s < 30 else "MISSED"
        print(f"{rows:>10,} {made:>12.1f} {spark_s:>20.1f} {duck_s:>9.2f} {verdict:>8s}", flush=True)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
