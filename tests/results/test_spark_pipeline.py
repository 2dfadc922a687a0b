"""End to end on Spark local[2]: a campaign as a Spark job, then the report."""
import json

import pytest

from cli.main import main
from results import io
from conformance.script import read_script
from conformance.campaign import execute

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("spark")
    results, out = base / "results", base / "report"
    code = main(["run", "--master", "local[2]", "--runs", "16", "--adapter", "reference",
                 "--adapter", "mutant:double-vote", "--group-size", "3", "--duration", "8000",
                 "--campaign", "spark-test", "--out", str(results), "--quiet"])
    assert code == 1  # the mutant failed
    assert main(["report", str(results), "--out", str(out), "--master", "local[2]"]) == 0
    return results, out


def test_spark_campaign_committed_everything(report):
    results, _ = report
    rows = io.read_table(results, "runs").to_pylist()
    assert sorted((r["adapter"], r["seed"]) for r in rows) == sorted(
        (a, s) for a in ("reference", "mutant:double-vote") for s in range(16))
    assert {r["verdict"] for r in rows if r["adapter"] == "reference"} == {"pass"}


def test_report_matrix_and_summary(report):
    _, out = report
    summary = json.loads((out / "summary.json").read_text())
    cells = {(m["adapter"], m["property"]): m for m in summary["matrix"]}
    assert cells[("reference", "election-safety")]["cell"] == "pass"
    assert cells[("reference", "election-safety")]["runs"] == 16
    assert cells[("mutant:double-vote", "election-safety")]["cell"] == "fail"
    assert 0 < cells[("mutant:double-vote", "election-safety")]["upper95"] <= 1
    assert summary["mutants"][0]["killed"] is True
    assert any("REJECT_TAKING_LEADERSHIP" in n for n in summary["never_hit"])
    md = (out / "report.md").read_text()
    for section in ("## Implementations", "## Implementation x property", "## Scenarios", "## Distributions",
                    "## Spec coverage", "## Mutants", "## Counterexamples"):
        assert section in md
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "<table>" in html and 'src="img/' not in html


def test_counterexample_in_report_replays(report):
    _, out = report
    files = sorted((out / "counterexamples").glob("*.rmqha"))
    assert files
    script = read_script(str(files[0]))
    ex = execute(script, record_trace=False)  # its own adapter line: the mutant; expectations hold
    assert ex.violations


def test_a_dead_spark_job_is_one_line_and_resume_finishes_exactly(spark, tmp_path, capsys):
    """A Python worker dies in the middle of the job: committed chunks survive, the user
    gets one line (exit 3), and --resume runs exactly the missing seeds."""
    import os

    from conformance.campaign import run_one
    from conformance.spark_campaign import CampaignJobFailed, CampaignSpec, run_campaign

    def dies_on_seed_5(config):  # a closure, so that Spark ships it by value
        if config.seed == 5:
            os._exit(7)
        return run_one(config)

    out = tmp_path / "results"
    spec = CampaignSpec("crash", "dledger", ("reference",), runs=8, chunk_size=2, group_sizes=(3,),
                        fault_mixes=("none",), duration_ms=0)
    with pytest.raises(CampaignJobFailed, match="Python worker exited unexpectedly.*--resume"):
        run_campaign(out, spec, master="local[2]", progress=False, run_fn=dies_on_seed_5)
    assert main(["run", "--resume", "--no-spark", "--quiet", "--out", str(out)]) == 0
    seeds = sorted(r["seed"] for r in io.read_table(out, "runs").to_pylist())
    assert seeds == list(range(8))


def _without_rollups(chunks):
    import attrs

    return [attrs.evolve(c, rollup=None) for c in chunks]


def _close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


def test_summing_the_chunk_rollups_gives_what_scanning_every_row_gives(report, spark):
    from reports.build import collate

    results, _ = report
    manifest, chunks = io.validated_chunks(results)
    assert all(c.rollup is not None for c in chunks)  # commit_chunk wrote one per chunk
    summed = collate(results, spark, (manifest, chunks))
    scanned = collate(results, spark, (manifest, _without_rollups(chunks)))
    for key in ("adapters", "matrix", "scenarios", "distributions", "mutants", "findings"):
        assert _close(summed[key], scanned[key]), key


def test_a_malformed_rollup_is_one_line(report, tmp_path, capsys):
    import shutil

    results, _ = report
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    marker = sorted((copy / "chunks").glob("*.json"))[0]
    data = json.loads(marker.read_text())
    data["rollup"]["groups"][0]["runs"] = "many"
    marker.write_text(json.dumps(data))
    assert main(["report", str(copy), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "malformed rollup" in err[0]


def test_rollups_carry_findings_exactly(spark, tmp_path):
    from reports.build import collate

    results = tmp_path / "truncation"
    # seeds 30 and 31 of the truncation scenario show the finding no_consistent_point
    assert main(["run", "--scenario", "truncation", "--seed", "28", "--runs", "5", "--no-spark", "--quiet",
                 "--out", str(results)]) == 0
    manifest, chunks = io.validated_chunks(results)
    summed = collate(results, spark, (manifest, chunks))
    scanned = collate(results, spark, (manifest, _without_rollups(chunks)))
    assert summed["findings"] and summed["findings"][0]["finding"] == "no_consistent_point"
    assert summed["findings"][0]["first_seed"] == 30
    for key in ("adapters", "matrix", "scenarios", "distributions", "findings"):
        assert _close(summed[key], scanned[key]), key


def _without_percentiles(distributions):
    return [{**d, "rows": [{k: v for k, v in r.items() if k not in ("p50", "p90", "p99")} for r in d["rows"]]}
            for d in distributions]


def test_the_arrow_engine_collates_what_spark_collates(report, spark):
    """--no-spark reports: the same collation through ArrowEngine (percentiles exact, not approximate)."""
    from reports.build import ArrowEngine, collate

    results, _ = report
    manifest, chunks = io.validated_chunks(results)
    with_spark = collate(results, spark, (manifest, chunks))
    for validated in ((manifest, chunks), (manifest, _without_rollups(chunks))):
        with_arrow = collate(results, ArrowEngine(), validated)
        for key in ("adapters", "matrix", "scenarios", "coverage", "mutants", "findings", "counterexamples", "totals"):
            assert _close(with_arrow[key], with_spark[key]), key
        assert _close(_without_percentiles(with_arrow["distributions"]),
                      _without_percentiles(with_spark["distributions"]))
        for d in with_arrow["distributions"]:
            for row in d["rows"]:
                assert row["min"] <= row["p50"] <= row["p90"] <= row["p99"] <= row["max"]
