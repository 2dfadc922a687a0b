"""Collate a campaign directory into report data, with Spark or, for small campaigns
and ``--no-spark``, with Arrow in this process.

Only the results schema is imported from the rest of rmqha (``results``):
a report can be built on any machine that has the results, without the
implementations that produced them. The collation is written once (``collate``); what
scans Parquet goes through an engine: ``SparkEngine`` (``local[*]`` by default, a
cluster with ``--master``) or ``ArrowEngine`` (one process, exact percentiles; it sums
the same chunk rollups, computing a chunk's rollup from its tables with the function
that writes them when an older chunk has none). With Spark: the implementation x property matrix and the
per-scenario tables come from one scan of the ``runs`` table (failed properties are
denormalised there); distributions aggregate ``metrics`` (count, mean, min and max
exact; percentiles — ``percentile_approx`` — and histogram bins over a uniform sample
of at most two million values, whose sampling error is far below the bins' width);
coverage sums ``coverage``; the driver only collects small results.
"""
from __future__ import annotations

import hashlib
import shlex
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from results.io import CommittedChunk, read_table, validated_chunks
from results.rollup import combine, rollup
from results.schema import ABSTRACT_STATE, SCHEMAS, TABLES, abstract_node_part
from reports.stats import wilson_upper

FINDING_PREFIX = "finding_"
# Documented limits a scenario records as ``finding_NAME`` metrics (value: occurrences in
# the run). ``guarded_by``: the property that holds once the limit's remedy is configured.
FINDINGS: dict[str, dict[str, str]] = {
    "acknowledged_lost_default_acks": {
        "issue": "#7017",
        "summary": "With the default acknowledgement settings (allAckInSyncStateSet off, inSyncReplicas 1) a "
                   "master acknowledges a write it alone holds; isolate it, elect another member of the "
                   "SyncStateSet, and the write is truncated. With allAckInSyncStateSet on, no acknowledged "
                   "write was lost (property no_acknowledged_message_lost).",
        "guarded_by": "no_acknowledged_message_lost",
        "replay": "rmqha replay tests/scenarios/controller/isolation-7017-default-acks.rmqha",
    },
    "committed_lost_to_truncate": {
        "issue": "DLedger EntryHandler.handleDoTruncate",
        "summary": "A DLedger follower acts on every TRUNCATE of its leader's term, also one duplicated or "
                   "delayed past the appends that followed it, and then drops entries its leader holds and it "
                   "had acknowledged, committed ones included. Under long delays and duplication fewer than a "
                   "quorum can be left holding a committed entry, a node without it is elected, and the entry "
                   "is lost: the protocol as upstream wrote it does this. A committed entry lost that no "
                   "follower dropped so is a violation instead (property leader-completeness).",
        "guarded_by": "leader-completeness",
        "replay": "rmqha replay tests/scenarios/dledger/late-truncate-loses-committed-entries.rmqha",
    },
    "clean_restarts_broker_set": {
        "issue": "RocketMQ ReplicasInfoManager.handleCleanBrokerDataEvent",
        "summary": "An admin cleanBrokerMetadata that empties the SyncStateSet (it lists every id in it: a dead "
                   "master's set of one) makes the controller drop the set's SyncStateInfo; the next broker to "
                   "register starts a new set and is elected master with its own log, and the others truncate "
                   "to it: what was acknowledged and consumed before the clean can be lost, even with "
                   "allAckInSyncStateSet. A message lost with no such clean before it is a violation instead "
                   "(property consumed_message_never_truncated).",
        "guarded_by": "consumed_message_never_truncated",
        "replay": "rmqha replay tests/scenarios/controller/clean-restarts-set-loses-acknowledged.rmqha",
    },
    "no_consistent_point": {
        "issue": "the truncation note",
        "summary": "After a failover to a replica that holds none of a slave's epochs (an unclean choice: "
                   "the truncation scenario's controller may pick any replica), the slave's handshake finds "
                   "no consistent point and it cannot go on until an operator wipes it. The note asks the "
                   "suite to report this; a handshake that fails although the slave's log is a prefix of "
                   "the master's is a violation instead (property handshake-progress).",
        "guarded_by": "handshake-progress",
        "replay": "rmqha replay tests/scenarios/truncation/no-consistent-point-unclean-failover.rmqha",
    },
    "failover_loses_acknowledged": {
        "issue": "classic HA, like #7017",
        "summary": "An operator's failover promotes a slave that lacks messages the master acknowledged: "
                   "an ASYNC_MASTER acknowledges what it alone holds, a SYNC_MASTER with two slaves after one "
                   "slave's ack. Only a failover to a slave that acknowledged keeps them; a SYNC_MASTER's "
                   "PUT_OK always had a slave holding the message (property put-ok-held-by-slave).",
        "guarded_by": "put-ok-held-by-slave",
        "replay": "rmqha replay tests/scenarios/classic/failover-async-master-loses-acknowledged.rmqha",
    },
    "divergent_slave": {
        "issue": "classic HA has no truncation",
        "summary": "Bytes a master loses (its unflushed tail in a power loss, since it streams before it "
                   "flushes, or all its successor lacked after a failover) stay on the slaves that had them; the "
                   "master writes other messages at those offsets and the slave's commitlog diverges until an "
                   "operator wipes it. Bytes no master wrote at an offset are a violation instead "
                   "(property slave-prefix).",
        "guarded_by": "slave-prefix",
        "replay": "rmqha replay tests/scenarios/classic/master-power-loss-slave-diverges.rmqha",
    },
}

GROWTH_POINTS = 10  # points of the abstract-state growth curve
HISTOGRAM_BINS = 40
PERCENTILE_SAMPLE = 2_000_000  # values used for percentiles and histograms
MAX_COUNTEREXAMPLES = 24
DISTRIBUTIONS = (
    ("time_to_first_leader_ms", "time to first leader", "ms"),
    ("failover_ms", "failover time", "ms"),
    ("terms_per_election", "terms per election", "terms"),
    ("messages_per_election", "messages per election", "messages"),
    ("answers_without_deadline_percent", "node answers without a next_deadline", "% of a run's answers"),
)


def _bin_width(lo: float, hi: float) -> float:
    return max((hi - lo) / HISTOGRAM_BINS, 1e-9)


def _by_metric(values: dict[str, float]):
    """A column expression worth ``values[metric]`` on each row (a handful of metrics)."""
    from pyspark.sql import functions as F

    expr = None
    for metric, value in sorted(values.items()):
        test = F.col("metric") == metric
        expr = F.when(test, F.lit(float(value))) if expr is None else expr.when(test, F.lit(float(value)))
    return expr


def sample_parts(chunks: Sequence[CommittedChunk], table: str, budget: int) -> list[str]:
    """Part files of whole chunks, about ``budget`` rows in all, an equal share per adapter.

    A chunk is a contiguous seed range and group sizes and fault mixes rotate with the
    seed, so whole chunks are as good a sample as single rows, and reading only them
    costs the sample's size instead of a scan of the whole table. Chunks are taken in
    a fixed pseudo-random order (a hash of their id): the same report every time.
    """
    by_adapter: dict[str, list[CommittedChunk]] = {}
    for c in chunks:
        by_adapter.setdefault(c.adapter or "", []).append(c)
    share = budget // max(1, len(by_adapter))
    chosen = []
    for adapter in sorted(by_adapter):
        rows = 0
        for c in sorted(by_adapter[adapter], key=lambda c: hashlib.sha256(c.id.encode()).hexdigest()):
            if rows >= share:
                break
            chosen.append(c.files[table])
            rows += c.rows[table]
    return chosen


def _read(spark, files: Sequence[str], table: str):
    from pyspark.sql.pandas.types import from_arrow_schema

    # the schema is known and validated: no inference pass over the footers
    return spark.read.schema(from_arrow_schema(SCHEMAS[table])).parquet(*files)


def _scan_runs(runs):
    """Run groups and the failed / not applicable counts by scanning every run row."""
    from pyspark.sql import functions as F

    # failed and not applicable properties are lists in runs, almost always empty:
    # exploding them is one cheap scan
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
    failed = {(r["adapter"], r["property"]): r["n"] for r in listed if r["kind"] == "fail"}
    not_applicable = {(r["adapter"], r["property"]): r["n"] for r in listed if r["kind"] == "na"}
    return groups, failed, not_applicable


def _scan_metric_stats(metrics, names):
    """Exact statistics per (adapter, metric) of ``metrics`` (a distribution or a finding) by scanning."""
    from pyspark.sql import functions as F

    return {
        (r["adapter"], r["metric"]): r.asDict()
        for r in metrics.where(F.col("metric").isin(names) | F.col("metric").startswith(FINDING_PREFIX))
        .groupBy("adapter", "metric")
        .agg(F.count("*").alias("n"), F.avg("value").alias("mean"), F.min("value").alias("min"),
             F.max("value").alias("max"), F.sum("value").alias("occurrences"),
             F.sum(F.when(F.col("value") > 0, 1).otherwise(0)).alias("runs_with"),
             F.min(F.when(F.col("value") > 0, F.col("seed"))).alias("first_seed"))
        .collect()
    }


class SparkEngine:
    """The scans a report needs, as Spark jobs."""

    def __init__(self, spark):
        self.spark = spark

    def runs_and_stats(self, chunks: Sequence[CommittedChunk], wanted: Sequence[str]):
        """(groups, failed, not_applicable, metric stats) by scanning every run and metric row."""
        runs = _read(self.spark, [c.files["runs"] for c in chunks], "runs")
        metrics = _read(self.spark, [c.files["metrics"] for c in chunks], "metrics")
        groups, failed, not_applicable = _scan_runs(runs)
        return groups, failed, not_applicable, _scan_metric_stats(metrics, wanted)

    def percentiles_and_bins(self, files: Sequence[str], bounds: dict[str, tuple[float, float]]) -> dict:
        """(adapter, metric) -> ([p50, p90, p99], [count per histogram bin]) over ``files``."""
        from pyspark.sql import functions as F

        sample = _read(self.spark, files, "metrics").where(F.col("metric").isin(sorted(bounds)))
        # percentiles and every histogram bin in one pass over the sample: the bins'
        # edges (from the exact minimum and maximum) are constants in the expression,
        # so there is no join and nothing to cache
        lo = _by_metric({k: v[0] for k, v in bounds.items()})
        width = _by_metric({k: _bin_width(*v) for k, v in bounds.items()})
        bin_ = F.least(F.floor((F.col("value") - lo) / width), F.lit(HISTOGRAM_BINS - 1))
        return {
            (r["adapter"], r["metric"]): (r["p"], [r[f"b{i}"] for i in range(HISTOGRAM_BINS)])
            for r in sample.select("adapter", "metric", "value", bin_.alias("bin"))
            .groupBy("adapter", "metric")
            .agg(F.percentile_approx("value", [0.5, 0.9, 0.99], 1000).alias("p"),
                 *[F.count(F.when(F.col("bin") == i, 1)).alias(f"b{i}") for i in range(HISTOGRAM_BINS)])
            .collect()
        }

    def coverage_hits(self, files: Sequence[str]) -> dict:
        from pyspark.sql import functions as F

        coverage = _read(self.spark, files, "coverage")
        return {
            (r["adapter"], r["procedure"], r["outcome"]): r["n"]
            for r in coverage.groupBy("adapter", "procedure", "outcome").agg(F.sum("count").alias("n")).collect()
        }

    def abstract_states(self, files: Sequence[str]) -> list[tuple[str, int, int, str]]:
        """(adapter, first seed, last seed, state) of each chunk's abstract states."""
        from pyspark.sql import functions as F

        coverage = _read(self.spark, files, "coverage")
        return [(r["adapter"], r["first_seed"], r["last_seed"], r["outcome"])
                for r in coverage.where(F.col("procedure") == ABSTRACT_STATE)
                .select("adapter", "first_seed", "last_seed", "outcome").collect()]

    def errored_runs(self, files: Sequence[str]) -> list[dict]:
        """(adapter, error) -> runs and first seed, over the errored runs."""
        from pyspark.sql import functions as F

        runs = _read(self.spark, files, "runs")
        return [r.asDict() for r in runs.where(F.col("verdict") == "error").groupBy("adapter", "error")
                .agg(F.count("*").alias("runs"), F.min("seed").alias("first_seed")).collect()]

    def counterexamples(self, files: Sequence[str]) -> list[dict]:
        """Per (adapter, property): a shrunk one before any unshrunk, then the shortest."""
        from pyspark.sql import functions as F
        from pyspark.sql.window import Window

        cx = _read(self.spark, files, "counterexamples")
        w = Window.partitionBy("adapter", "property").orderBy(F.col("shrunk").desc(), "shrunk_steps", "seed")
        return [
            r.asDict()
            for r in cx.withColumn("rank", F.row_number().over(w)).where(F.col("rank") == 1).drop("rank")
            .orderBy("adapter", "property").limit(MAX_COUNTEREXAMPLES).collect()
        ]


class ArrowEngine:
    """The same scans with Arrow in this process: no JVM, for campaigns one machine holds."""

    def runs_and_stats(self, chunks: Sequence[CommittedChunk], wanted: Sequence[str]):
        # a chunk written before rollups: its rollup from its own tables, by the writer's function
        summed = combine([rollup({t: read_table(Path(c.files[t]).parents[1], t, [c.files[t]]) for t in TABLES})
                          for c in chunks])
        return summed["groups"], summed["failed"], summed["not_applicable"], summed["metrics"]

    def percentiles_and_bins(self, files: Sequence[str], bounds: dict[str, tuple[float, float]]) -> dict:
        table = _read_arrow(files, "metrics", ["adapter", "metric", "value"])
        table = table.filter(pc.is_in(table["metric"], value_set=pa.array(sorted(bounds))))
        out = {}
        adapters = table["adapter"].to_numpy(zero_copy_only=False)
        metrics = table["metric"].to_numpy(zero_copy_only=False)
        values = table["value"].to_numpy(zero_copy_only=False)
        for adapter, metric in sorted(set(zip(adapters, metrics))):
            v = values[(adapters == adapter) & (metrics == metric)]
            lo, hi = bounds[metric]
            bins = np.minimum(np.floor((v - lo) / _bin_width(lo, hi)), HISTOGRAM_BINS - 1).astype(int)
            out[(adapter, metric)] = (
                [float(x) for x in np.quantile(v, [0.5, 0.9, 0.99], method="lower")],
                np.bincount(bins, minlength=HISTOGRAM_BINS).tolist(),
            )
        return out

    def coverage_hits(self, files: Sequence[str]) -> dict:
        table = _read_arrow(files, "coverage", ["adapter", "procedure", "outcome", "count"])
        return {
            (r["adapter"], r["procedure"], r["outcome"]): r["count_sum"]
            for r in table.group_by(["adapter", "procedure", "outcome"]).aggregate([("count", "sum")]).to_pylist()
        }

    def abstract_states(self, files: Sequence[str]) -> list[tuple[str, int, int, str]]:
        t = _read_arrow(files, "coverage", ["adapter", "first_seed", "last_seed", "procedure", "outcome"])
        t = t.filter(pc.equal(t["procedure"], ABSTRACT_STATE))
        return list(zip(*(t[c].to_pylist() for c in ("adapter", "first_seed", "last_seed", "outcome"))))

    def errored_runs(self, files: Sequence[str]) -> list[dict]:
        runs = _read_arrow(files, "runs", ["adapter", "seed", "verdict", "error"])
        runs = runs.filter(pc.equal(runs["verdict"], "error"))
        return [{"adapter": r["adapter"], "error": r["error"], "runs": r["seed_count"], "first_seed": r["seed_min"]}
                for r in runs.group_by(["adapter", "error"]).aggregate([("seed", "count"), ("seed", "min")])
                .to_pylist()]

    def counterexamples(self, files: Sequence[str]) -> list[dict]:
        best: dict[tuple, dict] = {}
        for r in _read_arrow(files, "counterexamples").to_pylist():
            key = (r["adapter"], r["property"])
            rank = (not r["shrunk"], r["shrunk_steps"], r["seed"])
            if key not in best or rank < (not best[key]["shrunk"], best[key]["shrunk_steps"], best[key]["seed"]):
                best[key] = r
        return [best[k] for k in sorted(best)][:MAX_COUNTEREXAMPLES]


def _read_arrow(files: Sequence[str], table: str, columns: list[str] | None = None) -> pa.Table:
    parts = [pq.read_table(f, columns=columns) for f in files]
    if not parts:
        schema = SCHEMAS[table]
        return (schema if columns is None else pa.schema([schema.field(c) for c in columns])).empty_table()
    return pa.concat_tables(parts)


def collate(results_dir: str | Path, engine, validated: tuple[dict, list[CommittedChunk]] | None = None,
            stage: Callable[[str], None] = lambda what: None) -> dict[str, Any]:
    """Aggregate a campaign directory (validated here unless ``validated`` is given) into a
    plain dict. ``engine``: ``SparkEngine(spark)``, ``ArrowEngine()``, or a SparkSession.

    ``stage(what)`` is called as each part of the work starts (the CLI shows it: on a
    large campaign each Spark job takes a while)."""
    if not isinstance(engine, (SparkEngine, ArrowEngine)):
        engine = SparkEngine(engine)
    manifest, chunks = validated or validated_chunks(Path(results_dir))
    parts = {t: [c.files[t] for c in chunks] for t in TABLES}
    wanted = [m for m, _, _ in DISTRIBUTIONS]

    stage(f"runs and the implementation x property matrix ({len(chunks):,} chunk{'' if len(chunks) == 1 else 's'})")
    # ---- runs per (adapter, scenario, profile, fault mix, size); failed and not applicable
    # properties; exact metric statistics (and findings): summed from the chunks' rollups
    # (results/rollup.py), scanned only for chunks written without one
    if all(c.rollup is not None for c in chunks):
        summed = combine([c.rollup for c in chunks])
        groups, failed, not_applicable, every = (summed["groups"], summed["failed"], summed["not_applicable"],
                                                 summed["metrics"])
    else:
        groups, failed, not_applicable, every = engine.runs_and_stats(chunks, wanted)
    groups.sort(key=lambda g: (g["adapter"], g["scenario"], g["fault_mix"], g["group_size"]))
    per_adapter: dict[str, dict] = {}
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
            known = known_difference(manifest, adapter, a["profile"], prop)
            matrix.append({
                "adapter": adapter, "implementation": a["implementation"], "property": prop, "cell": cell,
                "runs": max(judged, 0), "violations": fails, "errors": a["error"], "not_applicable": na,
                "rate": fails / judged if judged > 0 else None,
                "upper95": wilson_upper(fails, judged) if judged > 0 else None,
                "known_profile_difference": known,
            })

    stage("distributions (percentiles and histograms)")
    # ---- distributions: exact count, mean, min and max over every value; percentiles and
    # histogram bins over a uniform sample of at most PERCENTILE_SAMPLE values
    stats = {k: v for k, v in every.items() if k[1] in wanted}
    found = {k: v for k, v in every.items() if k[1].startswith(FINDING_PREFIX)}
    bounds: dict[str, tuple[float, float]] = {}
    for (adapter, metric), st in stats.items():
        lo, hi = bounds.get(metric, (st["min"], st["max"]))
        bounds[metric] = (min(lo, st["min"]), max(hi, st["max"]))
    total = sum(st["n"] for st in stats.values())
    sampled = sample_parts(chunks, "metrics", PERCENTILE_SAMPLE) if total > PERCENTILE_SAMPLE else parts["metrics"]
    histograms: dict[str, dict[str, tuple[list[float], list[int]]]] = {}
    percentiles: dict[tuple[str, str], list] = {}
    if bounds:
        for (adapter, metric), (p, counts) in engine.percentiles_and_bins(sampled, bounds).items():
            metric_lo, w = bounds[metric][0], _bin_width(*bounds[metric])
            percentiles[(adapter, metric)] = p
            scale = stats[(adapter, metric)]["n"] / max(1, sum(counts))  # sample -> all values
            histograms.setdefault(metric, {})[adapter] = (
                [metric_lo + i * w for i in range(HISTOGRAM_BINS)],
                [round(c * scale) for c in counts],
            )
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

    stage("spec coverage")
    # ---- spec coverage against every outcome the spec can produce
    hit = engine.coverage_hits(parts["coverage"])
    coverage_rows = []
    for adapter, a in sorted(per_adapter.items()):
        universe = manifest.get("outcomes", {}).get(a["scenario"], {})
        # (the spec's procedures only: every campaign records the abstract states it reached
        # under ABSTRACT_STATE, which says nothing of whether the implementation reports outcomes)
        exposes = any(ad == adapter and p in universe for (ad, p, _) in hit)
        for procedure, outcomes in universe.items():
            for outcome in outcomes:
                coverage_rows.append({"adapter": adapter, "procedure": procedure, "outcome": outcome,
                                      "count": hit.get((adapter, procedure, outcome), 0) if exposes else None})

    # ---- abstract protocol states the campaign reached (the search's coverage), their
    # growth over the runs, and the node states never reached (docs/scenarios.md, "Search")
    abstract = abstract_coverage(engine.abstract_states(parts["coverage"]), per_adapter,
                                 manifest.get("abstract_states", {}), manifest.get("reference_reached"))

    # ---- mutants: killed when any run failed
    mutants = []
    for adapter, a in sorted(per_adapter.items()):
        if adapter.startswith("mutant:"):
            killers = sorted({p for (ad, p), n in failed.items() if ad == adapter and n})
            mutants.append({"mutant": adapter.split(":", 1)[1], "runs": a["runs"], "failed_runs": a["fail"],
                            "killed": a["fail"] > 0, "by": killers})

    # ---- documented findings: limits of a configuration the runs demonstrate (e.g. #7017)
    findings = []
    for (adapter, metric), r in sorted(found.items()):
        name = metric[len(FINDING_PREFIX):]
        about = FINDINGS.get(name, {})
        guarded = about.get("guarded_by")
        judged = per_adapter.get(adapter, {}).get("runs", 0) - not_applicable.get((adapter, guarded), 0)
        findings.append({
            "adapter": adapter, "finding": name, "issue": about.get("issue"), "summary": about.get("summary", ""),
            "runs": r["n"], "runs_with": r["runs_with"], "occurrences": int(r["occurrences"] or 0),
            "first_seed": r["first_seed"], "guarded_by": guarded, "guarded_runs": judged,
            "guarded_violations": failed.get((adapter, guarded), 0), "replay": about.get("replay"),
        })

    # ---- errored runs: how many, and what the implementation did (the most common messages)
    errors = []
    if any(a["error"] for a in per_adapter.values()):
        stage("messages of errored runs")
        errors = _error_messages(engine.errored_runs(parts["runs"]), per_adapter)

    stage("counterexamples")
    # ---- counterexamples: per (adapter, property), a shrunk one before any unshrunk, then the shortest
    examples = engine.counterexamples(parts["counterexamples"])
    # per adapter, the violations nothing came before first: where a reader starts
    examples.sort(key=lambda x: (x["adapter"], x.get("preceded_by") is not None, x["property"]))
    # (a chunk's shrunk counterexamples are committed as <chunk>.shrunk: not a planned chunk)
    complete = completeness(manifest, sum(1 for c in chunks if c.id in set(manifest["chunks"])), str(results_dir))
    return {
        "manifest": manifest,
        "verdict": verdict(per_adapter, matrix, complete, examples),
        "adapters": per_adapter,
        "matrix": matrix,
        "errors": errors,
        "scenarios": scenario_rows,
        "distributions": distributions,
        "coverage": coverage_rows,
        "abstract": abstract,
        "mutants": mutants,
        "findings": findings,
        "counterexamples": examples,
        "totals": {
            "runs": sum(a["runs"] for a in per_adapter.values()),
            "fail": sum(a["fail"] for a in per_adapter.values()),
            "error": sum(a["error"] for a in per_adapter.values()),
        },
        "completeness": complete,
    }


MAX_ERROR_MESSAGES = 10  # distinct messages shown per adapter


def _error_messages(rows: list[dict], per_adapter: dict) -> list[dict]:
    """The distinct error messages of errored runs per adapter, most frequent first
    (``rows``: adapter, error, runs, first_seed, from the engine's scan of the runs table,
    done only when some run errored)."""
    out = []
    for adapter in sorted(per_adapter):
        mine = sorted((r for r in rows if r["adapter"] == adapter), key=lambda r: (-r["runs"], r["first_seed"]))
        out += [{"adapter": adapter, "message": r["error"] or "(no message)", "runs": r["runs"],
                 "first_seed": r["first_seed"]} for r in mine[:MAX_ERROR_MESSAGES]]
    return out


VERDICTS = ("conformant", "not applicable", "errors", "not conformant")  # from best to worst


def verdict(per_adapter: dict, matrix: list[dict], complete: dict, examples: Sequence[dict] = ()) -> dict:
    """The report's answer, per adapter and overall (the worst of the adapters'):

    * ``not conformant``: a property was violated (one its profile is known not to
      guarantee does not count: it is a documented difference, shown as a finding).
      Properties whose counterexample (of ``examples``) violates another property
      earlier are named after the others, as possibly that one's consequences;
    * ``errors``: no violation, but some runs could not be judged (the implementation
      crashed, hung or answered garbage): conformance is not shown;
    * ``not applicable``: the implementation offers nothing the scenario judges;
    * ``conformant``: every run judged, no property violated (known differences named).
    """
    adapters = {}
    for name, a in sorted(per_adapter.items()):
        cells = [m for m in matrix if m["adapter"] == name]
        violated = sorted(m["property"] for m in cells if m["cell"] == "fail" and not m["known_profile_difference"])
        if violated:
            v, why = "not conformant", _violates(violated, {x["property"] for x in examples
                                                             if x["adapter"] == name and x.get("preceded_by")})
        elif a["error"]:
            v, why = "errors", f"{a['error']:,} of {a['runs']:,} runs errored (no violation in the rest)"
        elif not a["runs"] or all(m["cell"] == "not_applicable" for m in cells):
            v, why = "not applicable", "no property of the scenario applies to it"
        else:
            known = sorted(m["property"] for m in cells if m["cell"] == "fail")
            v, why = "conformant", (f"{a['runs']:,} runs, no property violated" if not known else
                                    f"{a['runs']:,} runs, no property violated but the known "
                                    f"difference{'s' if len(known) > 1 else ''} {', '.join(known)}")
        adapters[name] = {"verdict": v, "why": why}
    overall = max((x["verdict"] for x in adapters.values()), key=VERDICTS.index, default="not applicable")
    return {"verdict": overall, "complete": complete["complete"], "adapters": adapters}


def _violates(violated: list[str], preceded: set[str]) -> str:
    """``violates A, B``; the properties of ``preceded`` (another came first in their
    counterexample) last, and said to be so, unless every one was."""
    first = [p for p in violated if p not in preceded]
    after = [p for p in violated if p in preceded]
    if not first or not after:
        return f"violates {', '.join(violated)}"
    return (f"violates {', '.join(first)}; and, each after another violation in its counterexample, "
            f"{', '.join(after)}")


def known_difference(manifest: dict, adapter: str, profile: str | None, prop: str) -> bool:
    """Whether ``prop`` is a difference the campaign knew of for ``adapter`` (its profile's,
    ``spec.invariants.*.known_profile_difference``, or its own: raft nodes that are DLedger
    nodes seen as Raft nodes): reported, never counted in the verdict."""
    return (prop in manifest.get("known_profile_differences", {}).get(profile, [])
            or prop in (manifest["adapters"].get(adapter) or {}).get("known_differences", []))


def abstract_coverage(rows: Sequence[tuple[str, int, int, str]], per_adapter: dict, universes: dict,
                      reference: dict | None = None) -> list[dict]:
    """Per adapter: the distinct abstract states reached, how many had been reached by
    the runs up to each of ``GROWTH_POINTS`` seeds (a state counts from the first seed
    that reached it), and the node states of the scenario's universe never reached
    (``abstract_node_part``). With ``reference`` (per scenario, the node states rmqha's
    reference reaches in long campaigns; None for a campaign written before they were
    recorded): those it never reached, and those it reached that the reference never has."""
    first_seen: dict[str, dict[str, int]] = {}
    last_seed: dict[str, int] = {}
    for adapter, first, last, state in rows:
        mine = first_seen.setdefault(adapter, {})
        mine[state] = min(first, mine.get(state, first))
        last_seed[adapter] = max(last, last_seed.get(adapter, last))
    out = []
    for adapter, seen in sorted(first_seen.items()):
        lo, hi = min(seen.values()), last_seed[adapter]
        marks = sorted({lo + (hi - lo) * k // GROWTH_POINTS for k in range(1, GROWTH_POINTS + 1)})
        growth = [{"up_to_seed": m, "states": sum(1 for s in seen.values() if s <= m)} for m in marks]
        scenario = per_adapter.get(adapter, {}).get("scenario")
        universe = set(universes.get(scenario, []))
        reached_nodes = {abstract_node_part(s) for s in seen}
        entry = {"adapter": adapter, "states": len(seen), "node_states": len(reached_nodes & universe),
                 "universe": len(universe), "growth": growth, "never_reached": sorted(universe - reached_nodes)}
        known = None if reference is None else reference.get(scenario)
        if known:  # (none recorded for the scenario: nothing to set against)
            known = set(known)
            entry |= {"reference_states": len(known), "reference_states_reached": len(known & reached_nodes),
                      "reference_never_reached": sorted(known - reached_nodes),
                      "beyond_reference": sorted((reached_nodes & universe) - known)}
        out.append(entry)
    return out


# adapter forms that start a process or load code (adapters.runs_in_process: not those):
# `rmqha run --resume` and `rmqha replay` run them only when the command line names them
PROCESS_ADAPTERS = ("stdio:", "python:", "jvm:")


def completeness(manifest: dict, committed_chunks: int, results_dir: str) -> dict[str, Any]:
    """How much of the planned campaign the report covers (a report of a killed campaign says so)."""
    spec = manifest.get("spec", {})
    named = [a for a in spec.get("adapters", ()) if isinstance(a, str) and any(f in a for f in PROCESS_ADAPTERS)]
    planned_runs = spec.get("runs", 0) * len(spec.get("adapters", ()))
    planned = len(manifest["chunks"])
    return {
        "complete": committed_chunks >= planned,
        "committed_chunks": committed_chunks,
        "planned_chunks": planned,
        "planned_runs": planned_runs,
        "resume": " ".join([f"rmqha run --resume --out {results_dir}",
                            *(f"--adapter {shlex.quote(a)}" for a in named)]),
    }
