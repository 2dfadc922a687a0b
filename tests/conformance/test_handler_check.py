"""``rmqha check`` on an implementation that runs no nodes: a handler-level check, as a user runs it.

An epoch file that behaves as RocketMQ's does passes, each known departure named in the
output and in ``handler-level.md``; one with a bug no release has fails with exit 1 and
its first disagreement; one that fails on a call exits 3 and names the call. (The real classes: tests/adapters/test_jvm_real_rocketmq.py.)
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
FIXTURE = "python:tests.fixtures.epoch_file_adapters"


def check(tmp_path, factory, *more):
    report = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "cli", "check", "--adapter", f"{FIXTURE}:{factory}", "--quiet",
                           "--out", str(tmp_path / "results"), "--report", str(report), *more],
                          capture_output=True, text=True, cwd=ROOT)
    return done, report


def test_upstreams_epoch_file_passes_with_its_departures_named(tmp_path):
    done, report = check(tmp_path, "as_released")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checked at handler level" in done.stdout
    assert "finite-end-after-suffix-truncation" in done.stdout and "upstream-empty-epoch" in done.stdout
    summary = json.loads((report / "handler-level.json").read_text())
    verdicts = {o["operation"]: o["verdict"] for o in summary["operations"]}
    assert verdicts == {"truncation.append": "agrees",
                        "truncation.find_consistent_point": "agrees but for known departures",
                        "truncation.truncate_suffix_by_offset": "agrees but for known departures"}
    assert "known departures" in (report / "handler-level.md").read_text()
    assert not (tmp_path / "results").exists()  # no campaign: it runs no nodes


def test_a_bug_no_release_has_fails_with_its_disagreement(tmp_path):
    done, report = check(tmp_path, "ascending_scan")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "truncation.find_consistent_point: disagrees" in done.stdout
    assert "first disagreement" in (report / "handler-level.md").read_text()


def test_an_implementation_that_fails_on_a_call_is_an_error_naming_the_call(tmp_path):
    done, report = check(tmp_path, "fails_on_empty_append")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "truncation.append: error" in done.stdout and "Traceback" not in done.stdout + done.stderr
    md = (report / "handler-level.md").read_text()
    assert "## truncation.append: error" in md and "NullPointerException" in md
    # the call it failed on, so that it can be asked again
    assert "on the call:" in md and "truncation.append(epoch_file=EpochFile(entries=()" in md
    failed = [o for o in json.loads((report / "handler-level.json").read_text())["operations"]
              if o["verdict"] == "error"]
    assert [o["operation"] for o in failed] == ["truncation.append"]
    assert failed[0]["failed_input"].startswith("truncation.append(epoch_file=EpochFile(entries=()")


def test_a_second_check_writes_its_report_where_the_first_did(tmp_path):
    """The default --report is reused by every check: a handler-level report is an rmqha
    report, replaced by the next check (it was refused as "not an rmqha report")."""
    first, report = check(tmp_path, "as_released")
    second, _ = check(tmp_path, "fails_on_empty_append")
    assert first.returncode == 0 and second.returncode == 3, second.stdout + second.stderr
    assert sorted(p.name for p in report.iterdir()) == ["handler-level.json", "handler-level.md"]
    assert "epoch-file-fails-on-empty-append" in (report / "handler-level.md").read_text()


def test_beside_a_campaign_each_report_is_kept_and_a_later_check_replaces_both(tmp_path):
    """One check naming an implementation that runs nodes and one that does not: the campaign's
    report and the handler-level one side by side, and the same check again replaces them."""
    campaign = ["--adapter", "reference", "--runs", "2", "--duration", "3000", "--no-spark"]
    for _ in range(2):
        done, report = check(tmp_path, "as_released", *campaign)
        assert done.returncode == 0, done.stdout + done.stderr
        sub = report / "python_tests.fixtures.epoch_file_adapters_as_released"
        assert (report / "report.md").is_file() and (sub / "handler-level.md").is_file(), sorted(report.iterdir())
        assert f"report: {sub / 'handler-level.md'}" in done.stdout
    # a handler-level check alone then replaces the lot, and says which campaign's report went
    done, report = check(tmp_path, "as_released")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in report.iterdir()) == ["handler-level.json", "handler-level.md"]
    assert "this replaced campaign c" in done.stdout and "its results are kept" in done.stdout


def test_fingerprint_of_an_implementation_without_dledger_operations_judges_what_it_declares():
    done = subprocess.run([sys.executable, "-m", "cli", "fingerprint", "--adapter", f"{FIXTURE}:as_released",
                           "--quiet", "--samples", "50"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "truncation.append" in done.stdout and "agrees but for known departures (upstream-empty-epoch" in done.stdout
    assert "handle_vote" not in done.stdout  # no DLedger table of "not applicable" rows


def test_a_named_scenario_judges_only_its_operations(tmp_path):
    """``--scenario`` names what to judge: the truncation operations belong to the truncation
    scenario and to the controller stack (whose brokers run the epoch file), not to DLedger."""
    for scenario in ("truncation", "controller"):
        done, report = check(tmp_path / scenario, "as_released", "--scenario", scenario)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-1] == "verdict: CONFORMANT (handler level)"
        assert len(json.loads((report / "handler-level.json").read_text())["operations"]) == 3


def test_a_named_scenario_none_of_whose_operations_it_answers_is_not_applicable(tmp_path):
    """An epoch file checked as a classic broker or a DLedger node: nothing to judge, exit 2,
    one line saying why; no report written (an earlier one would stay)."""
    for scenario in ("classic", "dledger"):
        done, report = check(tmp_path / scenario, "as_released", "--scenario", scenario)
        assert done.returncode == 2, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert f"answers no handler-level operation of scenario {scenario} ({scenario}.*): not applicable" in lines[0]
        assert lines[-1] == "verdict: NOT APPLICABLE (handler level)"
        assert not report.exists() and "Traceback" not in done.stderr


def test_without_a_scenario_every_declared_operation_is_judged_and_the_worst_verdict_wins(tmp_path):
    done, _ = check(tmp_path, "ascending_scan", "--adapter", f"{FIXTURE}:as_released")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("verdict: NOT CONFORMANT (handler level) — ")
