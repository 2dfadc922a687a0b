"""The campaign runner with injected run functions: error verdicts, flattening, commit,
resume, and how a dead Spark job is reported. No simulator, no Spark."""
from types import SimpleNamespace

import pytest

from conformance.scenarios.registry import get_scenario
from conformance.errors import UserError
from results import io
from results.schema import SCHEMAS, TABLES, flatten
from results.runresult import Counterexample, Coverage, Metric, PropertyVerdict, RunResult
from conformance.spark_campaign import (
    CampaignSpec,
    _job_failure,
    chunk_task,
    plan_chunks,
    run_campaign,
    run_chunk,
    to_shrink,
)
from conformance.targets import RMQHA_IMPLEMENTATION

SPEC = CampaignSpec("di", "dledger", ("reference",), runs=6, chunk_size=3, group_sizes=(3,),
                    fault_mixes=("none",), duration_ms=0)
PROPERTIES = get_scenario("dledger").properties


def synthetic_run(config) -> RunResult:
    """A stand-in for run_one: seed 4 violates a property, everything else passes."""
    failing = config.seed == 4
    return RunResult(
        config=config,
        implementation=RMQHA_IMPLEMENTATION,  # what the manifest declares for "reference"
        implementation_version="1.0",
        verdict="fail" if failing else "pass",
        steps=100 + config.seed,
        simulated_ms=1000 * config.seed,
        wall_ms=1.5,
        elections=2,
        leader_changes=1,
        max_term=3,
        first_violation="election-safety" if failing else None,
        first_violation_step=7 if failing else None,
        properties=tuple(
            PropertyVerdict(p, "fail" if failing and p == "election-safety" else
                            ("not_applicable" if p == "liveness" else "pass"),
                            1 if failing and p == "election-safety" else 0, 7 if failing and p == "election-safety"
                            else None)
            for p in PROPERTIES),
        metrics=(Metric("time_to_first_leader_ms", 250.0 + config.seed), Metric("failover_ms", 90.0),
                 Metric("failover_ms", 110.0)),
        coverage=(Coverage("handle_vote", "ACCEPT", 2), Coverage("handle_vote", "REJECT_ALREADY_VOTED", 1)),
        counterexamples=(Counterexample("election-safety", "two leaders in term 3", "scenario dledger\n",
                                        '{"kind":"note"}\n', 40, 5),) if failing else (),
    )


def flaky_run(config) -> RunResult:
    if config.seed == 1:
        raise RuntimeError("adapter said nonsense\nand a second line")
    return synthetic_run(config)


def test_a_run_that_raises_is_an_error_verdict_with_one_line():
    results = run_chunk(SPEC, plan_chunks(SPEC)[0], flaky_run)
    assert [r.verdict for r in results] == ["pass", "error", "pass"]
    broken = results[1]
    assert broken.error == "RuntimeError: adapter said nonsense"
    assert {p.verdict for p in broken.properties} == {"error"}
    assert [p.name for p in broken.properties] == list(PROPERTIES)


def test_bad_input_inside_a_run_is_not_an_error_verdict(tmp_path):
    def bad_input(config):
        raise UserError("group size must be between 1 and 9, not 12")

    with pytest.raises(UserError):
        run_chunk(SPEC, plan_chunks(SPEC)[0], bad_input)
    # inside an executor it travels back as data, and nothing is committed
    status = chunk_task(str(tmp_path), SPEC, plan_chunks(SPEC)[0], bad_input)
    assert status["user_error"] == "group size must be between 1 and 9, not 12"
    assert status["runs"] == 0 and not (tmp_path / io.CHUNKS).exists()


def test_flatten_one_row_per_run_property_and_measurement():
    chunk = plan_chunks(SPEC)[1]  # seeds 3, 4, 5; seed 4 fails
    tables = flatten(run_chunk(SPEC, chunk, synthetic_run))
    assert set(tables) == set(TABLES)
    for name, table in tables.items():
        assert table.schema.equals(SCHEMAS[name], check_metadata=True)
    runs = {r["seed"]: r for r in tables["runs"].to_pylist()}
    assert sorted(runs) == [3, 4, 5]
    assert runs[4]["verdict"] == "fail" and runs[4]["first_violation"] == "election-safety"
    assert runs[4]["failed_properties"] == ["election-safety"] and runs[3]["failed_properties"] == []
    assert runs[3]["not_applicable_properties"] == ["liveness"]
    assert runs[5]["time_to_first_leader_ms"] == 255.0
    assert tables["properties"].num_rows == 3 * len(PROPERTIES)
    assert tables["metrics"].num_rows == 3 * 3  # failover_ms twice per run: long format keeps both
    # coverage is summed over the chunk: one row per outcome
    coverage = {(r["procedure"], r["outcome"]): r for r in tables["coverage"].to_pylist()}
    assert coverage[("handle_vote", "ACCEPT")] == {
        "campaign": "di", "adapter": "reference", "first_seed": 3, "last_seed": 5, "scenario": "dledger",
        "procedure": "handle_vote", "outcome": "ACCEPT", "count": 6, "runs": 3}
    (cx,) = tables["counterexamples"].to_pylist()
    assert (cx["seed"], cx["property"], cx["original_steps"], cx["shrunk_steps"]) == (4, "election-safety", 40, 5)


def test_committed_chunks_read_back_as_written(tmp_path):
    out = tmp_path / "c"
    summary = run_campaign(out, SPEC, master=None, progress=False, run_fn=flaky_run)
    assert (summary["runs"], summary["fail"], summary["error"], summary["chunks"]) == (6, 1, 1, 2)
    runs = io.read_table(out, "runs").to_pylist()
    assert sorted(r["seed"] for r in runs) == list(range(6))
    assert [r["error"] for r in runs if r["verdict"] == "error"] == ["RuntimeError: adapter said nonsense"]
    assert io.read_table(out, "counterexamples").num_rows == 1


def test_resuming_a_finished_campaign_starts_no_spark_job(tmp_path, monkeypatch):
    out = tmp_path / "c"
    run_campaign(out, SPEC, master=None, progress=False, run_fn=synthetic_run)

    def no_spark(*args, **kwargs):
        raise AssertionError("nothing left to run, Spark must not start")

    monkeypatch.setattr("results.spark.spark_session", no_spark)
    monkeypatch.setattr("conformance.spark_campaign.spark_session", no_spark)
    summary = run_campaign(out, None, master="local[2]", resume=True, progress=False, run_fn=synthetic_run)
    assert summary["runs"] == 0 and summary["committed_runs"] == 6
    assert (summary["committed_fail"], summary["committed_error"]) == (1, 0)  # seed 4's, committed before


def test_shrinking_replays_no_adapter_the_manifest_does_not_name(tmp_path):
    """A counterexample row names its adapter, and shrinking replays it: a row of an
    adapter the campaign does not run is refused, not started (rmqha starts nothing a file names)."""
    import attrs

    from results.errors import ResultsError

    out = tmp_path / "c"
    run_campaign(out, attrs.evolve(SPEC, shrink_replays=0, shrink_seconds=0.0), master=None, progress=False,
                 run_fn=synthetic_run)
    to_shrink(out, SPEC)
    with pytest.raises(ResultsError, match="counterexample of adapter 'reference' that the manifest does not list"):
        to_shrink(out, attrs.evolve(SPEC, adapters=("stdio:elsewhere",)))


class _JavaException:
    def __init__(self, text):
        self.text = text

    def toString(self):  # noqa: N802 (py4j's name)
        return self.text


@pytest.mark.parametrize(
    "exc, line",
    [
        (SimpleNamespace(java_exception=_JavaException(
            "org.apache.spark.SparkException: Job aborted due to stage failure: Task 2 in stage 1.0 failed 1 times, "
            "most recent failure: Lost task 2.0 in stage 1.0 (TID 5) (localhost executor driver): "
            "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed). Consider setting "
            "'spark.python.worker.faulthandler.enabled'\n\tat org.apache.spark.api.python.X(PythonRunner.scala:1)")),
         "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)"),
        (SimpleNamespace(java_exception=_JavaException("java.lang.OutOfMemoryError: Java heap space\n\tat x.y(Z)")),
         "java.lang.OutOfMemoryError: Java heap space"),
        (RuntimeError("\n  Connection refused\nmore"), "Connection refused"),
    ],
    ids=["worker-crash", "driver-oom", "python"],
)
def test_a_dead_spark_job_is_summarised_in_one_line(exc, line):
    assert _job_failure(exc) == line
