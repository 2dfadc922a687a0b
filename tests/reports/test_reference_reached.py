"""The node states rmqha's reference reaches in long campaigns (conformance/scenarios/reached.py),
which reports set a campaign's coverage against."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.errors import UserError
from conformance.scenarios.reached import REACHED_FILE, add_reached, read_reached, reference_reached
from conformance.scenarios.registry import SCENARIOS, get_scenario
from reports.build import abstract_coverage
from results.schema import abstract_node_part

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_has_the_reference_s_node_states_and_each_is_in_its_universe(scenario):
    known = reference_reached(scenario)
    assert known, f"{scenario}: no node states recorded in {REACHED_FILE.name} (benchmarks/reference_sweep.py --reached)"
    assert list(known) == sorted(set(known))
    stray = set(known) - set(get_scenario(scenario).abstract_universe)
    assert not stray, f"{scenario}: recorded node states its universe cannot hold (renamed components?): {sorted(stray)[:5]}"


def test_the_file_says_which_sweeps_added_its_states():
    data = read_reached()
    assert data["sweeps"] and all(isinstance(s, str) and "runs" in s for s in data["sweeps"])


def test_adding_a_sweep_s_states_keeps_the_union_and_notes_the_sweep(tmp_path):
    path = tmp_path / "reached.json"
    universe = get_scenario("dledger").abstract_universe
    assert add_reached(path, "dledger", ["L=s/same/=|tick|leaders=1|clean", "F=o/prefix/<|PushEntryRequest|leaders=1|cut"],
                       "dledger from seed 0", universe) == 2
    assert add_reached(path, "dledger", ["L=s/same/=|VoteRequest|leaders=1|lossy", "C<s/stale/<|tick|leaders=0|cut",
                                         "ctl|tick|clean"],  # (not a node state of the scenario's universe)
                       "dledger from seed 5000", universe) == 1
    data = json.loads(path.read_text())
    assert data["scenarios"]["dledger"] == ["C<s/stale/<", "F=o/prefix/<", "L=s/same/="]
    assert data["sweeps"] == ["dledger from seed 0", "dledger from seed 5000"]
    assert not (tmp_path / "reached.tmp").exists()


def test_the_coverage_sets_a_campaign_against_the_reference_and_the_universe():
    universe = ["A", "B", "C", "D", "E"]
    rows = [("impl", 0, 0, "A|x|clean"), ("impl", 1, 1, "A|y|cut"), ("impl", 2, 2, "D|x|clean")]
    [c] = abstract_coverage(rows, {"impl": {"scenario": "s"}}, {"s": universe}, {"s": ["A", "B", "C"]})
    assert (c["states"], c["node_states"], c["universe"]) == (3, 2, 5)
    assert c["never_reached"] == ["B", "C", "E"]
    assert (c["reference_states"], c["reference_states_reached"]) == (3, 1)
    assert c["reference_never_reached"] == ["B", "C"] and c["beyond_reference"] == ["D"]
    # a campaign written before the reference's states were recorded: the universe alone
    [old] = abstract_coverage(rows, {"impl": {"scenario": "s"}}, {"s": universe}, None)
    assert "reference_states" not in old and old["never_reached"] == ["B", "C", "E"]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"scenarios": [1]}'])
def test_a_malformed_file_of_node_states_is_one_line_of_error(tmp_path, text):
    path = tmp_path / "reached.json"
    path.write_text(text)
    with pytest.raises(UserError, match="not a file of node states"):
        read_reached(path)
    with pytest.raises(UserError):  # a sweep adding to it leaves it as it was
        add_reached(path, "dledger", ["L=s/same/=|tick|leaders=1|clean"], "x", get_scenario("dledger").abstract_universe)
    assert path.read_text() == text


def test_a_state_s_node_part_is_what_comes_before_its_first_bar():
    assert abstract_node_part("F=o/prefix/<|PushEntryRequest|leaders=1|cut") == "F=o/prefix/<"
    assert abstract_node_part("Md/acked/cur/same/same") == "Md/acked/cur/same/same"


def test_a_sweep_adds_what_its_campaigns_reached_as_a_user_runs_it(tmp_path):
    path = tmp_path / "reached.json"
    done = subprocess.run([sys.executable, "benchmarks/reference_sweep.py", "--scenarios", "truncation", "--runs", "8",
                           "--reached", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(path.read_text())
    assert data["scenarios"]["truncation"] and data["sweeps"][0].startswith("truncation from seed 0, stream own, 8 runs")
    assert f"node states new to {path}" in done.stdout
    refused = subprocess.run([sys.executable, "benchmarks/reference_sweep.py", "--adapter", "mutant:double-vote",
                              "--reached", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "with --adapter reference only" in refused.stderr
    (tmp_path / "bad.json").write_text("{not json")
    bad = subprocess.run([sys.executable, "benchmarks/reference_sweep.py", "--reached", str(tmp_path / "bad.json")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "not a file of node states" in bad.stderr and "Traceback" not in bad.stderr
