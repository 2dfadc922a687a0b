"""End to end on Spark local[2]: a campaign as a Spark job, then the report."""
import json

import pytest

from conformance.cli import main
from conformance.results import io
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
