"""Each benchmark runs as a user runs it (tiny sizes) and prints its targets and ratios.

The figures themselves are never asserted: speed lives in benchmarks/, not in tests.
"""
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import adapters
from benchmarks.throughput import cpu_with_implementations, process_cpu
from conformance.campaign import execute
from conformance.script import read_script

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> str:
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_simulator_throughput_prints_targets_and_ratios():
    out = run("benchmarks/simulator_throughput.py", "--runs", "1", "--sizes", "3", "--mixes", "none")
    assert "50,000 simulated s/s, 300,000 protocol events/s" in out
    assert "load average" in out
    row = next(line for line in out.splitlines() if line.startswith("none"))
    assert ("ok" in row or "MISS" in row) and "x target" in out
    # the ceiling: the same runs with the checks off part by part, and the simulator alone
    assert "ceiling" in out and "without monitors and trace" in out and "the simulator alone" in out


def test_the_default_fault_mixes_are_ones_each_scenario_runs_on_the_reference():
    """Without --mixes the benchmarks run what a campaign draws by default (a link-fault
    mix needs an implementation holding connections; the reference refuses it)."""
    out = run("benchmarks/simulator_throughput.py", "--runs", "1", "--sizes", "3", "--duration-ms", "500",
              "--no-ceiling")
    assert {line.split()[0] for line in out.splitlines() if line.split()} >= {"mixed", "crash", "partition",
                                                                              "lossy", "none"}


def test_controller_stack_prints_its_target():
    out = run("benchmarks/controller_stack.py", "--runs", "1", "--mixes", "none", "--failovers", "0")
    assert "protocol events per CPU-second" in out and "x target" in out
    assert sum(1 for line in out.splitlines() if line.startswith("none")) == 2
    # the ceiling: the same runs with the checks off part by part
    assert "ceiling" in out and "without step conformance and abstract states" in out
    assert "without monitors and trace" in out


def test_stdio_node_kinds_prints_its_target():
    out = run("benchmarks/stdio_node_kinds.py", "--runs", "1", "--duration", "2000")
    assert "within 3x of in process" in out and "x wall" in out and "load average" in out
    row = next(line for line in out.splitlines() if line.startswith("controller"))
    assert row.endswith("ok") or row.endswith("MISS")


@pytest.mark.jvm
@pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")
def test_adapter_overhead_prints_both_targets():
    out = run("benchmarks/adapter_overhead.py", "--seconds", "0.1")
    assert "Java shim over stdio" in out and "Java shim through JPype" in out
    assert "20,000" in out and "50,000" in out


def test_search_coverage_prints_its_target():
    out = run("benchmarks/search_coverage.py", "--runs", "4", "--chunk-size", "1", "--waves", "2")
    assert "search / sampling:" in out and "target 2.0x" in out and "per CPU-second" in out and "load average" in out


def test_search_coverage_prints_the_runs_verdicts():
    """Coverage is not all it says: a run that failed is named (seed, what it violated)."""
    out = run("benchmarks/search_coverage.py", "--runs", "4", "--chunk-size", "1", "--waves", "2")
    assert out.strip().splitlines()[-1] == "verdicts: every run of reference passed"
    out = run("benchmarks/search_coverage.py", "--runs", "4", "--chunk-size", "1", "--waves", "2",
              "--adapter", "mutant:double-vote")
    last = out.strip().splitlines()[-1]
    assert last.startswith("verdicts: ") and "of mutant:double-vote failed: sampling from 0: seed " in last, last


def test_search_coverage_sums_up_several_seed_ranges():
    out = run("benchmarks/search_coverage.py", "--runs", "3", "--chunk-size", "1", "--waves", "2",
              "--ranges", "2", "--range-step", "100")
    assert "seed range 2 of 2: seeds from 100" in out
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("over 2 seed ranges x 1 stream: per 3 runs") and "median" in summary
    assert "met in" in summary and "of 2:" in summary


def test_search_coverage_searches_a_range_with_several_random_streams():
    """Each stream's search gets its rows and its ratios; the summary counts every (range, stream)."""
    out = run("benchmarks/search_coverage.py", "--runs", "6", "--chunk-size", "2", "--waves", "2", "--streams", "2")
    assert "search / sampling:" in out and "search b / sampling:" in out
    assert "(sampling on to the CPU seconds of search b)" in out
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("over 1 seed range x 2 streams: per 6 runs") and "of 2:" in summary


def test_shrinking_prints_both_targets():
    out = run("benchmarks/shrinking.py", "--seeds", "2", "--runs", "4", "--adapter", "mutant:double-vote")
    assert "target median <= 5 s" in out and "failing / passing:" in out and "target <= 2x" in out


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_slips_prints_its_target():
    out = run("benchmarks/slips.py", "--slip", "quorum-half", "--runs", "3")
    assert "target median <= 5 s per CPU-second" in out and "caught 1 of 1 slips" in out and "load average" in out
    ticked = run("benchmarks/slips.py", "--slip", "quorum-half", "--runs", "3", "--no-deadlines")
    assert "ticked every 10 ms" in ticked and "caught 1 of 1 slips" in ticked


@pytest.mark.parametrize("scenario", ["classic", "truncation"])
def test_step_conformance_prints_its_target(scenario):
    out = run("benchmarks/step_conformance.py", "--scenario", scenario, "--runs", "3")
    assert f"{scenario} campaign" in out and "target <= 1.5x" in out and "load average" in out


def test_trace_validation_streams_through_a_pipe():
    out = run("benchmarks/trace_validation.py", "--events", "2000", "--pipe", "--chunk", "500")
    assert "through a pipe (nothing stored; a run of 500 steps repeated)" in out
    assert "2000 steps of rmqha reference (benchmark)" in out and "target <= 1.2x" in out


def test_reference_sweep_passes_the_reference_and_names_a_failing_run_with_its_report_command(tmp_path):
    out = run("benchmarks/reference_sweep.py", "--runs", "3", "--scenarios", "truncation,classic")
    assert "target 0 failing or erroring runs" in out and "load average" in out
    assert sum(1 for line in out.splitlines() if line.split()[:1] in (["truncation"], ["classic"])) == 2
    assert out.strip().splitlines()[-1] == "verdict: every run of reference passed"
    # raft: runs failing only the known differences of DLedger nodes seen as Raft nodes
    # (commit-monotonic) count as the verdict counts them: not failing, shown as findings
    out = run("benchmarks/reference_sweep.py", "--runs", "6", "--scenarios", "raft")
    assert "known difference commit-monotonic" in out
    assert out.strip().splitlines()[-1] == "verdict: every run of reference passed"
    # --streams: each (scenario, first seed) again with another random stream of the search
    out = run("benchmarks/reference_sweep.py", "--runs", "3", "--scenarios", "classic", "--streams", "own,b")
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("classic ")] == \
        [["classic", "0", "own"], ["classic", "0", "b"]]
    bad = subprocess.run([sys.executable, "benchmarks/reference_sweep.py", "--streams", "b c"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "'b c' is not a stream name" in bad.stderr and "Traceback" not in bad.stderr
    done = subprocess.run([sys.executable, "benchmarks/reference_sweep.py", "--runs", "2", "--scenarios", "dledger",
                           "--adapter", "mutant:double-vote", "--out", str(tmp_path), "--shrink", "50/10"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "MISS" in done.stdout and "dledger from seed 0: 2 runs did not pass: seed 0 (fail: " in done.stdout
    # --shrink: each failing run's counterexample shrunk, replayed with the command printed
    shrunk = [line.split("rmqha replay ")[-1] for line in done.stdout.splitlines() if "shrunk to" in line]
    assert len(shrunk) == 2 and "failing runs shrunk after them, 50/10" in done.stdout
    for path in shrunk:
        replay = subprocess.run([sys.executable, "-m", "cli", "replay", path], cwd=ROOT, capture_output=True,
                                text=True, timeout=300)
        assert replay.returncode == 0 and "reproduced: " in replay.stdout, replay.stdout + replay.stderr
    bad = subprocess.run([sys.executable, "benchmarks/reference_sweep.py", "--shrink", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--shrink '0'" in bad.stderr and "Traceback" not in bad.stderr
    command = next(line for line in done.stdout.splitlines() if "results: " in line).split(": ")[-1]
    assert command.startswith("rmqha report ")
    report = subprocess.run([sys.executable, "-m", "cli", *command.split()[1:]], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    assert "rmqha replay" in (tmp_path / "dledger-0" / "report" / "report.md").read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_cpu_of_an_implementation_kept_open_between_runs_is_counted():
    """A stdio server stays open between runs, so no rusage of this process counts it
    yet: the benchmarks that quote the implementation's CPU read it from /proc."""
    spec = f"stdio:node {ROOT / 'tests' / 'fixtures' / 'js' / 'dledger_node.js'}"
    script = read_script(str(ROOT / "tests" / "fixtures" / "js" / "slips" / "commit-regresses.rmqha"))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    server = adapters.resolve(spec).proc.pid
    before, mine, theirs = cpu_with_implementations(), time.process_time(), process_cpu(server)
    for _ in range(5):
        execute(script, spec, record_trace=False)
    theirs = process_cpu(server) - theirs
    assert theirs > 0.05, theirs  # the server did work of its own, still running
    assert cpu_with_implementations() - before >= time.process_time() - mine + theirs - 0.02
