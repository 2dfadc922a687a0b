"""The results datasets: versioned Parquet tables written by campaigns, read by reports.

A campaign directory holds one ``manifest.json`` and five tables, each a folder of
Parquet part files (one part per committed chunk of runs):

| table | one row per | key |
|---|---|---|
| ``runs`` | run | (adapter, seed) |
| ``properties`` | run x property | (adapter, seed, property) |
| ``metrics`` | measurement (a run may report a metric several times) | (adapter, seed, metric) |
| ``coverage`` | chunk x spec outcome exercised (summed over the chunk's runs) | (adapter, first_seed, procedure, outcome) |
| ``counterexamples`` | violated property of a failing run (its script; shrunk or not) | (adapter, seed, property, shrunk) |

``docs/results-schema.md`` documents every column. Bump ``SCHEMA_VERSION`` on any
incompatible change; readers refuse other versions rather than mixing them.
"""
from __future__ import annotations

from typing import Iterable

import pyarrow as pa

from results.runresult import RunResult

# the coverage procedure under which campaigns record the abstract protocol states their
# runs reached (conformance/search.py); reports read them from the coverage table
ABSTRACT_STATE = "abstract_state"


def abstract_node_part(state: str) -> str:
    """An abstract state's node part (the node's own state, before its first ``|``; the
    rest is its step's context: what it handled, the leaders or masters, the network)."""
    return state.split("|", 1)[0]

SCHEMA_VERSION = 4  # 2: counterexamples per violated property with a shrunk flag; runs.origin; 3: runs.origin_group_size;
# 4: counterexamples.preceded_by, preceded_by_ms
TABLES = ("runs", "properties", "metrics", "coverage", "counterexamples")

_KEY = [
    ("campaign", pa.string()),
    ("adapter", pa.string()),
    ("seed", pa.int64()),
]

RUNS = pa.schema(
    _KEY
    + [
        ("implementation", pa.string()),
        ("implementation_version", pa.string()),
        ("profile", pa.string()),
        ("scenario", pa.string()),
        ("group_size", pa.int32()),
        ("fault_mix", pa.string()),
        ("duration_ms", pa.int64()),
        ("origin", pa.string()),  # the search's lineage ("17>23"), null for a sampled run
        ("origin_group_size", pa.int32()),  # the group size of the lineage's first script, null for a sampled run
        ("steps", pa.int64()),
        ("simulated_ms", pa.int64()),
        ("wall_ms", pa.float64()),
        ("elections", pa.int32()),
        ("leader_changes", pa.int32()),
        ("max_term", pa.int64()),
        ("verdict", pa.string()),
        ("first_violation", pa.string()),
        ("first_violation_step", pa.int32()),
        ("error", pa.string()),
        # denormalised from ``properties`` so that reports over millions of runs scan one table
        ("failed_properties", pa.list_(pa.string())),
        ("not_applicable_properties", pa.list_(pa.string())),
        ("time_to_first_leader_ms", pa.float64()),
    ],
    metadata={"rmqha.table": "runs", "rmqha.schema_version": str(SCHEMA_VERSION)},
)

PROPERTIES = pa.schema(
    _KEY
    + [
        ("scenario", pa.string()),
        ("property", pa.string()),
        ("verdict", pa.string()),  # pass, fail, error, not_applicable
        ("violations", pa.int32()),
        ("first_step", pa.int32()),
    ],
    metadata={"rmqha.table": "properties", "rmqha.schema_version": str(SCHEMA_VERSION)},
)

METRICS = pa.schema(
    _KEY + [("scenario", pa.string()), ("metric", pa.string()), ("value", pa.float64())],
    metadata={"rmqha.table": "metrics", "rmqha.schema_version": str(SCHEMA_VERSION)},
)

# Coverage is summed per chunk: per run it would be ~40 rows a run, 400M rows for 10M runs.
COVERAGE = pa.schema(
    [("campaign", pa.string()), ("adapter", pa.string()), ("first_seed", pa.int64()), ("last_seed", pa.int64()),
     ("scenario", pa.string()), ("procedure", pa.string()), ("outcome", pa.string()), ("count", pa.int64()),
     ("runs", pa.int64())],
    metadata={"rmqha.table": "coverage", "rmqha.schema_version": str(SCHEMA_VERSION)},
)

COUNTEREXAMPLES = pa.schema(
    _KEY
    + [
        ("scenario", pa.string()),
        ("profile", pa.string()),
        ("property", pa.string()),
        ("message", pa.string()),
        ("script", pa.string()),
        ("trace_jsonl", pa.string()),
        ("original_steps", pa.int32()),
        ("shrunk_steps", pa.int32()),
        ("shrunk", pa.bool_()),
        ("preceded_by", pa.string()),  # a property the script violated earlier (the first), or null
        ("preceded_by_ms", pa.int64()),  # how many simulated ms earlier
    ],
    metadata={"rmqha.table": "counterexamples", "rmqha.schema_version": str(SCHEMA_VERSION)},
)

SCHEMAS: dict[str, pa.Schema] = {
    "runs": RUNS,
    "properties": PROPERTIES,
    "metrics": METRICS,
    "coverage": COVERAGE,
    "counterexamples": COUNTEREXAMPLES,
}


COUNTEREXAMPLE_KEY = ("campaign", "adapter", "seed", "scenario", "profile")


def counterexample_rows(config, counterexamples) -> list[dict]:
    """Rows of ``counterexamples`` found by the run of ``config``."""
    return keyed_counterexample_rows({k: getattr(config, k) for k in COUNTEREXAMPLE_KEY}, counterexamples)


def keyed_counterexample_rows(key: dict, counterexamples) -> list[dict]:
    """Rows of ``counterexamples`` under ``key`` (``COUNTEREXAMPLE_KEY``'s values)."""
    return [
        {**key, "property": x.property, "message": x.message, "script": x.script, "trace_jsonl": x.trace_jsonl,
         "original_steps": x.original_steps, "shrunk_steps": x.shrunk_steps, "shrunk": x.shrunk,
         "preceded_by": x.preceded_by, "preceded_by_ms": x.preceded_by_ms}
        for x in counterexamples
    ]


def flatten(results: Iterable[RunResult]) -> dict[str, pa.Table]:
    """Turn run results into one Arrow table per dataset."""
    rows: dict[str, list[dict]] = {t: [] for t in TABLES}
    coverage: dict[tuple, list] = {}  # (campaign, adapter, scenario, procedure, outcome) -> [count, runs, seeds]
    for r in results:
        c = r.config
        key = {"campaign": c.campaign, "adapter": c.adapter, "seed": c.seed}
        rows["runs"].append(
            {
                **key,
                "implementation": r.implementation,
                "implementation_version": r.implementation_version,
                "profile": c.profile,
                "scenario": c.scenario,
                "group_size": c.group_size,
                "fault_mix": c.fault_mix,
                "duration_ms": c.duration_ms,
                "origin": ">".join(map(str, c.origin)) or None,
                "origin_group_size": c.root_group_size if c.origin else None,
                "steps": r.steps,
                "simulated_ms": r.simulated_ms,
                "wall_ms": r.wall_ms,
                "elections": r.elections,
                "leader_changes": r.leader_changes,
                "max_term": r.max_term,
                "verdict": r.verdict,
                "first_violation": r.first_violation,
                "first_violation_step": r.first_violation_step,
                "error": r.error,
                "failed_properties": [p.name for p in r.properties if p.verdict == "fail"],
                "not_applicable_properties": [p.name for p in r.properties if p.verdict == "not_applicable"],
                "time_to_first_leader_ms": next(
                    (m.value for m in r.metrics if m.name == "time_to_first_leader_ms"), None
                ),
            }
        )
        for p in r.properties:
            rows["properties"].append(
                {**key, "scenario": c.scenario, "property": p.name, "verdict": p.verdict,
                 "violations": p.violations, "first_step": p.first_step}
            )
        for m in r.metrics:
            rows["metrics"].append({**key, "scenario": c.scenario, "metric": m.name, "value": m.value})
        for cv in r.coverage:
            acc = coverage.setdefault((c.campaign, c.adapter, c.scenario, cv.procedure, cv.outcome), [0, 0, []])
            acc[0] += cv.count
            acc[1] += 1
            acc[2].append(c.seed)
        rows["counterexamples"].extend(counterexample_rows(c, r.counterexamples))
    for (campaign, adapter, scenario, procedure, outcome), (count, runs, seeds) in sorted(coverage.items()):
        rows["coverage"].append(
            {"campaign": campaign, "adapter": adapter, "first_seed": min(seeds), "last_seed": max(seeds),
             "scenario": scenario, "procedure": procedure, "outcome": outcome, "count": count, "runs": runs}
        )
    return {t: pa.Table.from_pylist(rows[t], schema=SCHEMAS[t]) for t in TABLES}
