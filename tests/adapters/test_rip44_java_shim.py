"""A RIP-44 broker and controller in another language, through the user paths of issue 12.

``tests/fixtures/java/Rip44Shim.java`` was written from docs/adapter-protocol.md and
the semantics of controller mode, not from rmqha's reference (its controller is a
static leader, its broker its own): node kinds ``replica``, ``broker`` and
``controller`` over stdio. Compiled here with ``javac``, it runs in fresh processes,
as a user runs it: ``rmqha check --scenario truncation`` and ``--scenario controller``
(both roles from Java, and Java nodes of one role beside rmqha's of the other), the stateful tests
(``pytest tests/conformance --adapter ...``), and two of its slips (``--slip NAME``),
which the campaigns must catch (each counterexample replayed with the command the report prints) (docs/adapters.md, "A broker and a controller in Java").
The counterexamples the default 200-run controller check once found in the shim replay clean.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
JAVA = ROOT / "tests" / "fixtures" / "java"
RMQHA = Path(sys.executable).with_name("rmqha")

pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("rip44-java")
    subprocess.run(["javac", "-d", str(out), str(JAVA / "RmqhaShim.java"), str(JAVA / "Rip44Shim.java")],
                   check=True, capture_output=True)
    return f"stdio:java -cp {out} Rip44Shim"


def check(tmp_path, scenario: str, *adapters: str, seed: int = 0, runs: int = 2) -> tuple[int, str]:
    """``rmqha check`` as a user types it; (exit status, report.md)."""
    args = [str(RMQHA), "check", "--scenario", scenario, "--runs", str(runs), "--seed", str(seed),
            "--duration", "5000", "--no-spark", "--no-shrink", "--quiet",
            "--out", str(tmp_path / "results"), "--report", str(tmp_path / "report")]
    for adapter in adapters:
        args += ["--adapter", adapter]
    done = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=900)
    report = tmp_path / "report" / "report.md"
    return done.returncode, (report.read_text() if report.exists() else done.stdout + done.stderr)


@pytest.mark.parametrize("scenario", ["truncation", "controller"])
def test_the_java_broker_and_controller_are_conformant(shim, scenario, tmp_path):
    status, report = check(tmp_path, scenario, shim)
    assert status == 0, report
    assert "Verdict: CONFORMANT" in report and "rip44-java-shim" in report
    assert "2 runs; 0 failed, 0 errored" in report


@pytest.mark.parametrize("java,reference", [("broker", "controller"), ("controller", "broker")])
def test_java_nodes_of_one_role_beside_rmqha_nodes_of_the_other(shim, java, reference, tmp_path):
    status, report = check(tmp_path, "controller", f"{java}={shim}", f"{reference}=reference", runs=1)
    assert status == 0, report
    assert "rip44-java-shim" in report


@pytest.mark.parametrize("scenario,slip,seed,violated", [
    ("truncation", "ack-before-replicate", 4, "step-conformance:confirm_offset"),  # at its first ack (replica steps)
    ("controller", "confirm-own-max", 0, "confirm_offset_bounded"),      # 2 seeds in 3 at 5 s
])
def test_a_slip_is_caught(shim, scenario, slip, seed, violated, tmp_path):
    status, report = check(tmp_path, scenario, f"{shim} --slip {slip}", seed=seed, runs=1)
    assert status == 1, report
    assert "NOT CONFORMANT" in report and f"violates {violated}" in report
    # the counterexample (it expects the violation) replays against the slipped shim with the
    # command the report prints
    replay = re.search(r"Replay: `(cd .*? && rmqha replay .*?)`", report).group(1)
    env = dict(os.environ, PATH=f"{RMQHA.parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(replay, shell=True, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and f"reproduced: {violated}" in done.stdout, done.stdout + done.stderr


# What `rmqha check --scenario controller` with its defaults (200 runs) found in the shim,
# shrunk: an alter sent seconds after it was decided, from the queue of calls waiting for
# the active controller (seeds 37 and 14), and a clean that emptied the SyncStateSet
# leaving the controller's SyncStateInfo in place (seed 175). Each failed on the shim
# before its fix; the reference passes them too (tests/scenarios/test_scenarios.py).
FOUND_BY_THE_DEFAULT_CHECK = [
    "controller/alter-decided-before-a-role-change.rmqha",
    "controller/alter-for-a-slave-replaced-while-it-waits.rmqha",
    "controller/clean-empties-the-sync-state-set.rmqha",
]


@pytest.mark.parametrize("name", FOUND_BY_THE_DEFAULT_CHECK)
def test_what_the_default_check_found_stays_fixed(shim, name):
    script = ROOT / "tests" / "scenarios" / name
    done = subprocess.run([str(RMQHA), "replay", str(script), "--adapter", shim],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "no property violated" in done.stdout, done.stdout + done.stderr
    assert "adapter stdio:java" in done.stdout  # it judged the shim, not rmqha's reference


def stateful(shim: str, *k: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
         "tests/conformance/test_stateful_controller.py", "tests/conformance/test_stateful_truncation.py",
         "--adapter", shim, *k], capture_output=True, text=True, cwd=ROOT, timeout=900)


def test_the_stateful_tests_judge_the_java_nodes(shim, tmp_path):
    """The controller stack and the truncation machine run the Java nodes: they pass,
    none is skipped, and the honesty guard (tests/conformance/honesty.py) would fail any
    of them that ran rmqha's reference on the shim's behalf."""
    done = stateful(shim, "-k", "all-2 or invariant[2]")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    passed = [line for line in done.stdout.splitlines() if line.startswith("PASSED")]
    assert any("test_controller_stack_keeps_every_invariant" in p for p in passed), done.stdout[-3000:]
    assert any("test_broker_set_keeps_every_truncation_invariant" in p for p in passed), done.stdout[-3000:]

