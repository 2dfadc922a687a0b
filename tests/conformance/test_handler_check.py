"""``rmqha check`` on an implementation that runs no nodes: a handler-level check, as a user runs it.

An epoch file that behaves as RocketMQ's does passes, each known departure named in the
output and in ``handler-level.md``; one with a bug no release has fails with exit 1 and
its first disagreement. (The real classes: tests/adapters/test_jvm_real_rocketmq.py.)
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
FIXTURE = "python:tests.fixtures.epoch_file_adapters"


def check(tmp_path, factory):
    report = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "cli", "check", "--adapter", f"{FIXTURE}:{factory}", "--quiet",
                           "--out", str(tmp_path / "results"), "--report", str(report)],
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


def test_fingerprint_of_an_implementation_without_dledger_operations_judges_what_it_declares():
    done = subprocess.run([sys.executable, "-m", "cli", "fingerprint", "--adapter", f"{FIXTURE}:as_released",
                           "--quiet", "--samples", "50"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "truncation.append" in done.stdout and "agrees but for known departures (upstream-empty-epoch" in done.stdout
    assert "handle_vote" not in done.stdout  # no DLedger table of "not applicable" rows
