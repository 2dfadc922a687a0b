"""``--no-spark`` means no Spark: the campaign and its report in one process, no JVM."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.scenarios.reached import reference_reached
from conformance.scenarios.registry import SCENARIOS, get_scenario

ROOT = Path(__file__).resolve().parents[2]

# pyspark made unimportable: any attempt to start Spark fails the command
NO_PYSPARK = "import sys; sys.modules['pyspark'] = None; from cli.main import main; sys.exit(main(sys.argv[1:]))"


def test_check_no_spark_builds_the_report_without_spark(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", NO_PYSPARK, "check", "--no-spark", "--quiet", "--runs", "3",
         "--adapter", "mutant:double-vote", "--fault-mix", "none", "--duration", "2000",
         "--out", str(tmp_path / "results"), "--report", str(tmp_path / "report")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr  # the mutant is not conformant
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["counterexamples"] and all(x["shrunk"] for x in summary["counterexamples"])
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_report_shows_abstract_states_their_growth_and_what_was_never_reached(tmp_path, scenario):
    """Every scenario searches: a check's report gives the abstract states its runs reached,
    how that grew over the runs, and the node states of the scenario's universe no run
    reached (issue 21), in summary.json and in report.md."""
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "check", "--no-spark", "--quiet", "--runs", "12", "--scenario", scenario,
         "--adapter", "reference", "--out", str(tmp_path / "results"), "--report", str(tmp_path / "report")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [coverage] = json.loads((tmp_path / "report" / "summary.json").read_text())["abstract_states"]
    universe = get_scenario(scenario).abstract_universe
    assert coverage["adapter"] == "reference" and coverage["universe"] == len(universe)
    assert 0 < coverage["node_states"] <= coverage["states"]
    assert set(coverage["never_reached"]) < set(universe)
    assert coverage["node_states"] + len(coverage["never_reached"]) == len(universe)
    growth = [g["states"] for g in coverage["growth"]]
    assert growth == sorted(growth) and growth[-1] == coverage["states"], growth
    # set against the node states the reference reaches in long campaigns (reference_reached.json)
    known = set(reference_reached(scenario))
    assert coverage["reference_states"] == len(known) > 0
    assert set(coverage["reference_never_reached"]) <= known
    assert coverage["reference_states_reached"] + len(coverage["reference_never_reached"]) == len(known)
    assert not set(coverage["beyond_reference"]) & known
    assert set(coverage["beyond_reference"]) <= set(universe) - set(coverage["never_reached"])
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Abstract protocol states" in report
    assert f"of the {len(known)} node states rmqha's reference reaches in long campaigns" in report
    for group in ("Node states the reference reaches that no run here reached",
                  "Node states reached here that no campaign of the reference has reached",
                  "Other node states never reached, by no campaign of the reference either"):
        assert group in report
