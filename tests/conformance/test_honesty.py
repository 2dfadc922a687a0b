"""No conformance test runs rmqha's reference on a foreign implementation's behalf
(tests/conformance/honesty.py): run against an implementation that is not the
reference, the suite credits it only with what it was judged on, and a test that cheats
fails."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
FOREIGN = "python:tests.fixtures.spec_handlers:SpecHandlers"


def pytest_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def outcomes(out: str) -> dict[str, str]:
    found = {}
    for line in out.splitlines():
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(word + " "):
                name = line.split(" - ")[0].split()[-1].split("::")[-1]
                found[name] = word
    return found


def test_a_test_that_runs_the_reference_for_a_foreign_adapter_fails():
    run = pytest_run("tests/fixtures/dishonest/dishonest_checks.py", "--adapter", FOREIGN)
    seen = outcomes(run.stdout)
    assert seen == {"test_takes_the_adapter_but_runs_the_reference": "FAILED",
                    "test_judges_the_adapter": "PASSED"}, run.stdout
    assert "1 skipped" in run.stdout and "not run for a foreign --adapter" in run.stdout  # test_ignores_the_adapter
    assert "ran rmqha's reference (BrokerReplica, ControllerNode)" in run.stdout or \
        "ran rmqha's reference (ControllerModeBroker, ControllerNode)" in run.stdout, run.stdout


def test_the_rule_leaves_reference_runs_alone():
    run = pytest_run("tests/fixtures/dishonest/dishonest_checks.py", "--adapter", "reference")
    assert set(outcomes(run.stdout).values()) == {"PASSED"}, run.stdout


def test_the_conformance_suite_credits_a_foreign_adapter_only_with_its_own_answers():
    run = pytest_run("tests/conformance", "--adapter", FOREIGN, "-x")
    assert run.returncode == 0, run.stdout[-3000:]
    passed = [name for name, outcome in outcomes(run.stdout).items() if outcome == "PASSED"]
    # the two operations it offers, judged against the spec; everything else not applicable
    assert sorted(passed) == ["test_operation_agrees_with_the_spec[broker.maybe_shrink]",
                              "test_operation_agrees_with_the_spec[truncation.find_consistent_point]"], run.stdout
