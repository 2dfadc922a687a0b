"""Per-chunk rollups: the sums a report needs, computed once when a chunk is committed.

A report over 10M runs spends most of its time scanning every run row and every metric
row for a few dozen group totals (docs/reports.md, "Measured"). Those totals are sums,
so ``commit_chunk`` computes them from the chunk's own tables (with pyarrow, while they
are in memory) and stores them in the chunk's commit marker; ``reports.build.collate``
adds the rollups of all chunks instead of scanning, and scans only when a chunk has none
(results written before rollups existed). Percentiles, histograms, coverage and
counterexamples are still read from the Parquet parts by Spark.

A rollup holds:

* ``groups``: per (adapter, scenario, profile, fault_mix, group_size): the run count,
  the pass/fail/error counts, and for each averaged column its sum and non-null count;
  the largest max_term;
* ``failed`` / ``not_applicable``: [adapter, property, runs] from the runs' lists;
* ``metrics``: per (adapter, metric): [adapter, metric, n, sum, min, max, runs with a
  positive value, the smallest seed with one] (the last two serve findings).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

GROUP_KEYS = ("adapter", "scenario", "profile", "fault_mix", "group_size")
AVERAGED = ("steps", "simulated_ms", "elections", "leader_changes", "wall_ms")
VERDICTS = ("pass", "fail", "error")


def rollup(tables: dict[str, pa.Table]) -> dict[str, Any]:
    runs, metrics = tables["runs"], tables["metrics"]
    groups = []
    if runs.num_rows:
        t = runs.select([*GROUP_KEYS, "verdict", "max_term", *AVERAGED])
        for v in VERDICTS:
            t = t.append_column(f"is_{v}", pc.cast(pc.equal(t["verdict"], v), pa.int64()))
        aggs = [("verdict", "count", pc.CountOptions(mode="all")), *[(f"is_{v}", "sum") for v in VERDICTS],
                ("max_term", "max"), *[(c, "sum") for c in AVERAGED], *[(c, "count") for c in AVERAGED]]
        for row in t.group_by(list(GROUP_KEYS)).aggregate(aggs).to_pylist():
            groups.append({
                **{k: row[k] for k in GROUP_KEYS},
                "runs": row["verdict_count"], **{v: row[f"is_{v}_sum"] or 0 for v in VERDICTS},
                "max_term": row["max_term_max"],
                "sums": {c: row[f"{c}_sum"] for c in AVERAGED}, "counts": {c: row[f"{c}_count"] for c in AVERAGED},
            })
    listed = {}
    for column in ("failed_properties", "not_applicable_properties"):
        lists = runs[column].combine_chunks()
        flat = pa.table({"adapter": pc.take(runs["adapter"], pc.list_parent_indices(lists)),
                         "property": pc.list_flatten(lists)})
        counted = flat.group_by(["adapter", "property"]).aggregate([("property", "count")]).to_pylist() \
            if flat.num_rows else []
        listed[column] = sorted([r["adapter"], r["property"], r["property_count"]] for r in counted)
    stats = []
    if metrics.num_rows:
        positive = pc.greater(metrics["value"], 0)
        m = metrics.select(["adapter", "metric", "value"]).append_column(
            "positive", pc.cast(positive, pa.int64())).append_column(
            "positive_seed", pc.if_else(positive, metrics["seed"], pa.scalar(None, pa.int64())))
        for row in m.group_by(["adapter", "metric"]).aggregate(
                [("value", "count"), ("value", "sum"), ("value", "min"), ("value", "max"),
                 ("positive", "sum"), ("positive_seed", "min")]).to_pylist():
            stats.append([row["adapter"], row["metric"], row["value_count"], row["value_sum"], row["value_min"],
                          row["value_max"], row["positive_sum"] or 0, row["positive_seed_min"]])
    return {"groups": groups, "failed": listed["failed_properties"],
            "not_applicable": listed["not_applicable_properties"], "metrics": stats}


def well_formed(r: Any) -> bool:
    """The shape ``combine`` relies on (a marker's rollup is read back from JSON)."""
    try:
        for g in r["groups"]:
            if not all(isinstance(g[k], int) for k in ("runs", *VERDICTS)) or not all(k in g for k in GROUP_KEYS):
                return False
            if set(g["sums"]) != set(AVERAGED) or set(g["counts"]) != set(AVERAGED):
                return False
        for rows in (r["failed"], r["not_applicable"]):
            if not all(len(x) == 3 and isinstance(x[2], int) for x in rows):
                return False
        return all(len(x) == 8 and isinstance(x[2], int) for x in r["metrics"])
    except (KeyError, TypeError):
        return False


def combine(rollups: Iterable[dict]) -> dict[str, Any]:
    """Sum chunk rollups into what ``collate`` reads: the run groups (with means), the
    failed and not-applicable counts, and per (adapter, metric) n/mean/min/max with the
    findings' counts."""
    groups: dict[tuple, dict] = {}
    failed: Counter = Counter()
    not_applicable: Counter = Counter()
    metrics: dict[tuple, dict] = {}
    for r in rollups:
        for g in r["groups"]:
            key = tuple(g[k] for k in GROUP_KEYS)
            acc = groups.setdefault(key, {"runs": 0, **{v: 0 for v in VERDICTS}, "max_term": None,
                                          "sums": Counter(), "counts": Counter()})
            for k in ("runs", *VERDICTS):
                acc[k] += g[k]
            if g["max_term"] is not None:
                acc["max_term"] = g["max_term"] if acc["max_term"] is None else max(acc["max_term"], g["max_term"])
            acc["sums"].update({c: v or 0 for c, v in g["sums"].items()})
            acc["counts"].update(g["counts"])
        failed.update({(a, p): n for a, p, n in r["failed"]})
        not_applicable.update({(a, p): n for a, p, n in r["not_applicable"]})
        for adapter, metric, n, total, lo, hi, positive, first in r["metrics"]:
            acc = metrics.setdefault((adapter, metric), {"n": 0, "sum": 0.0, "min": lo, "max": hi, "runs_with": 0,
                                                         "first_seed": None})
            acc["n"] += n
            acc["sum"] += total or 0.0
            acc["min"], acc["max"] = min(acc["min"], lo), max(acc["max"], hi)
            acc["runs_with"] += positive
            if first is not None:
                acc["first_seed"] = first if acc["first_seed"] is None else min(acc["first_seed"], first)

    def mean(acc, column, scale=1.0):
        return acc["sums"][column] / scale / acc["counts"][column] if acc["counts"][column] else None

    rows = []
    for key, acc in groups.items():
        rows.append({**dict(zip(GROUP_KEYS, key)), "runs": acc["runs"], **{v: acc[v] for v in VERDICTS},
                     "mean_steps": mean(acc, "steps"), "mean_simulated_s": mean(acc, "simulated_ms", 1000.0),
                     "mean_elections": mean(acc, "elections"), "mean_leader_changes": mean(acc, "leader_changes"),
                     "max_term": acc["max_term"], "mean_wall_ms": mean(acc, "wall_ms")})
    stats = {key: {"adapter": key[0], "metric": key[1], "n": acc["n"], "mean": acc["sum"] / acc["n"] if acc["n"] else None,
                   "min": acc["min"], "max": acc["max"], "occurrences": acc["sum"], "runs_with": acc["runs_with"],
                   "first_seed": acc["first_seed"]}
             for key, acc in metrics.items()}
    return {"groups": rows, "failed": dict(failed), "not_applicable": dict(not_applicable), "metrics": stats}
