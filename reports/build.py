"""Collate a campaign directory into report data, with Spark.

Only the results schema is imported from the rest of rmqha (``conformance.results``):
a report can be built on any machine that has the results, without the
implementations that produced them. Everything heavy runs in Spark (``local[*]`` by
default, a cluster with ``--master``): the implementation x property matrix and the
per-scenario tables come from one scan of the ``runs`` table (failed properties are
denormalised there); distributions aggregate ``metrics`` (count, mean, min and max
exact; percentiles — ``percentile_approx`` — and histogram bins over a uniform sample
of at most two million values, whose sampling error is far below the bins' width);
coverage sums ``coverage``; the driver only collects small results.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.results.io import validated_parts
from reports.stats import wilson_upper

HISTOGRAM_BINS = 40
PERCENTILE_SAMPLE = 2_000_000  # values used for percentiles and histograms
MAX_COUNTEREXAMPLES = 24
DISTRIBUTIONS = (
    ("time_to_first_leader_ms", "time to first leader", "ms"),
    ("failover_ms", "failover time", "ms"),
    ("terms_per_election", "terms per election", "terms"),
    ("messages_per_election", "messages per election", "messages"),
)


def collate(results_dir: str | Path, spark) -> dict[str, Any]:
    """Validate the campaign directory and aggregate it into a plain dict."""
    from pyspark.sql import functions as F

    manifest, parts = validated_parts(Path(results_dir))
    runs = spark.read.parquet(*parts["runs"])
    metrics = spark.read.parquet(*parts["metrics"])
    coverage = spark.read.parquet(*parts["coverage"])
    cx = spark.read.parquet(*parts["counterexamples"])

    # ---- runs per (adapter, scenario, profile, fault mix, size); failed and not applicable
    # properties are lists in runs, almost always empty: exploding them is one cheap scan
    groups = [
        r.asDict()
        for r in runs.groupBy("adapter", "scenario", "profile", "fault_mix", "group_size")
        .agg(
            F.count("*").alias("runs"),
            F.sum(F.when(F.col("verdict") == "pass", 1).otherwise(0)).alias("pass"),
            F.sum(F.when(F.col("verdict") == "fail", 1).otherwise(0)).alias("fail"),
            F.sum(F.when(F.col("verdict") == "error", 1).otherwise(0)).alias("error"),
            F.avg("steps").alias("mean_steps"),
            F.avg(F.col("simulated_ms") / 1000.0).alias("mean_simulated_s"),
            F.avg("elections").alias("mean_elections"),
            F.avg("leader_changes").alias("mean_leader_changes"),
            F.max("max_term").alias("max_term"),
            F.avg("wall_ms").alias("mean_wall_ms"),
        )
        .collect()
    ]
    listed = (
        runs.select("adapter", F.explode("failed_properties").alias("property"), F.lit("fail").alias("kind"))
        .unionByName(runs.select("adapter", F.explode("not_applicable_properties").alias("property"),
                                 F.lit("na").alias("kind")))
        .groupBy("adapter", "property", "kind").agg(F.count("*").alias("n"))
        .collect()
    )
    groups.sort(key=lambda g: (g["adapter"], g["scenario"], g["fault_mix"], g["group_size"]))
    per_adapter: dict[str, dict] = {}
    failed = {(r["adapter"], r["property"]): r["n"] for r in listed if r["kind"] == "fail"}
    not_applicable = {(r["adapter"], r["property"]): r["n"] for r in listed if r["kind"] == "na"}
    for g in groups:
        declared = manifest["adapters"].get(g["adapter"]) or {}  # validated against the runs
        a = per_adapter.setdefault(g["adapter"], {
            "adapter": g["adapter"], "runs": 0, "pass": 0, "fail": 0, "error": 0,
            "implementation": declared.get("implementation"), "implementation_version": declared.get("version"),
            "profile": g["profile"], "scenario": g["scenario"]})
        for k in ("runs", "pass", "fail", "error"):
            a[k] += g[k]
    scenario_rows = groups

    # ---- implementation x property matrix
    matrix = []
    for adapter, a in sorted(per_adapter.items()):
        for prop in manifest["properties"].get(a["scenario"], []):
            na = not_applicable.get((adapter, prop), 0)
            judged = a["runs"] - a["error"] - na
            fails = failed.get((adapter, prop), 0)
            if na == a["runs"]:
                cell = "not_applicable"
            elif fails:
                cell = "fail"
            elif judged <= 0:
                cell = "error"
            else:
                cell = "pass"
            known = prop in manifest.get("known_profile_differences", {}).get(a["profile"], [])
            matrix.append({
                "adapter": adapter, "implementation": a["implementation"], "property": prop, "cell": cell,
                "runs": max(judged, 0), "violations": fails, "errors": a["error"], "not_applicable": na,
                "rate": fails / judged if judged > 0 else None,
                "upper95": wilson_upper(fails, judged) if judged > 0 else None,
                "known_profile_difference": known,
            })

    # ---- distributions: exact count, mean, min and max over every value; percentiles and
    # histogram bins over a uniform sample of at most PERCENTILE_SAMPLE values
    wanted = [m for m, _, _ in DISTRIBUTIONS]
    m = metrics.where(F.col("metric").isin(wanted))
    stats = {
        (r["adapter"], r["metric"]): r.asDict()
        for r in m.groupBy("adapter", "metric")
        .agg(F.count("*").alias("n"), F.avg("value").alias("mean"), F.min("value").alias("min"),
             F.max("value").alias("max"))
        .collect()
    }
    bounds: dict[str, tuple[float, float]] = {}
    for (adapter, metric), st in stats.items():
        lo, hi = bounds.get(metric, (st["min"], st["max"]))
        bounds[metric] = (min(lo, st["min"]), max(hi, st["max"]))
    total = sum(st["n"] for st in stats.values())
    sample = m if total <= PERCENTILE_SAMPLE else m.sample(fraction=PERCENTILE_SAMPLE / total, seed=0)
    sample = sample.select("adapter", "metric", "value").cache()  # read once, used twice
    histograms: dict[str, dict[str, tuple[list[float], list[int]]]] = {}
    percentiles: dict[tuple[str, str], list] = {}
    if bounds:
        lo_hi = spark.createDataFrame([(k, float(v[0]), float(v[1])) for k, v in bounds.items()],
                                      "metric string, lo double, hi double")
        width = F.greatest((F.col("hi") - F.col("lo")) / HISTOGRAM_BINS, F.lit(1e-9))
        binned = (
            sample.join(F.broadcast(lo_hi), "metric")
            .withColumn("bin", F.least(F.floor((F.col("value") - F.col("lo")) / width), F.lit(HISTOGRAM_BINS - 1)))
            .groupBy("metric", "adapter", "bin").agg(F.count("*").alias("n"))
            .collect()
        )
        scale = 1 if total <= PERCENTILE_SAMPLE else total / PERCENTILE_SAMPLE
        for r in binned:
            lo, hi = bounds[r["metric"]]
            w = max((hi - lo) / HISTOGRAM_BINS, 1e-9)
            edges, counts = histograms.setdefault(r["metric"], {}).setdefault(
                r["adapter"], ([lo + i * w for i in range(HISTOGRAM_BINS)], [0] * HISTOGRAM_BINS))
            counts[int(r["bin"])] += round(r["n"] * scale)
        percentiles = {
            (r["adapter"], r["metric"]): r["p"]
            for r in sample.groupBy("adapter", "metric")
            .agg(F.percentile_approx("value", [0.5, 0.9, 0.99], 1000).alias("p")).collect()
        }
    sample.unpersist()
    distributions = []
    for metric, title, unit in DISTRIBUTIONS:
        rows = []
        for (adapter, name), st in sorted(stats.items()):
            if name == metric:
                p = percentiles.get((adapter, name)) or [None, None, None]
                rows.append({"adapter": adapter, "n": st["n"], "mean": st["mean"], "min": st["min"],
                             "p50": p[0], "p90": p[1], "p99": p[2], "max": st["max"]})
        distributions.append({"metric": metric, "title": title, "unit": unit, "rows": rows,
                              "histogram": histograms.get(metric, {})})

    # ---- spec coverage against every outcome the spec can produce
    hit = {
        (r["adapter"], r["procedure"], r["outcome"]): r["n"]
        for r in coverage.groupBy("adapter", "procedure", "outcome").agg(F.sum("count").alias("n")).collect()
    }
    coverage_rows = []
    for adapter, a in sorted(per_adapter.items()):
        universe = manifest.get("outcomes", {}).get(a["scenario"], {})
        observed = {(p, o) for (ad, p, o) in hit if ad == adapter}
        exposes = bool(observed)
        for procedure, outcomes in universe.items():
            for outcome in outcomes:
                coverage_rows.append({"adapter": adapter, "procedure": procedure, "outcome": outcome,
                                      "count": hit.get((adapter, procedure, outcome), 0) if exposes else None})

    # ---- mutants: killed when any run failed
    mutants = []
    for adapter, a in sorted(per_adapter.items()):
        if adapter.startswith("mutant:"):
            killers = sorted({p for (ad, p), n in failed.items() if ad == adapter and n})
            mutants.append({"mutant": adapter.split(":", 1)[1], "runs": a["runs"], "failed_runs": a["fail"],
                            "killed": a["fail"] > 0, "by": killers})

    # ---- counterexamples: the shortest per (adapter, property)
    from pyspark.sql.window import Window

    w = Window.partitionBy("adapter", "property").orderBy("shrunk_steps", "seed")
    examples = [
        r.asDict()
        for r in cx.withColumn("rank", F.row_number().over(w)).where(F.col("rank") == 1)
        .orderBy("adapter", "property").limit(MAX_COUNTEREXAMPLES).collect()
    ]
    return {
        "manifest": manifest,
        "adapters": per_adapter,
        "matrix": matrix,
        "scenarios": scenario_rows,
        "distributions": distributions,
        "coverage": coverage_rows,
        "mutants": mutants,
        "counterexamples": examples,
        "totals": {
            "runs": sum(a["runs"] for a in per_adapter.values()),
            "fail": sum(a["fail"] for a in per_adapter.values()),
            "error": sum(a["error"] for a in per_adapter.values()),
        },
        "completeness": completeness(manifest, len(parts["runs"]), str(results_dir)),
    }


def completeness(manifest: dict, committed_chunks: int, results_dir: str) -> dict[str, Any]:
    """How much of the planned campaign the report covers (a report of a killed campaign says so)."""
    spec = manifest.get("spec", {})
    planned_runs = spec.get("runs", 0) * len(spec.get("adapters", ()))
    planned = len(manifest["chunks"])
    return {
        "complete": committed_chunks >= planned,
        "committed_chunks": committed_chunks,
        "planned_chunks": planned,
        "planned_runs": planned_runs,
        "resume": f"rmqha run --resume --out {results_dir}",
    }
