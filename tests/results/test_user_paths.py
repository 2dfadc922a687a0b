"""`rmqha check` as a user runs it against a stdio implementation in its own directory:
the exit status is the report's verdict, and the replay command the report prints for
a counterexample works, as printed, from any other directory."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main

pytestmark = pytest.mark.spark

BIN = Path(sys.executable).parent  # where the rmqha command is installed beside this Python
FIXTURES = Path(__file__).parents[1] / "fixtures"
SHIM = """import sys
from adapters.stdio_server import main
sys.exit(main(["--mutant", "double-vote"]))
"""
FAST = ["--runs", "2", "--group-size", "3", "--duration", "6000", "--no-spark", "--quiet", "--master", "local[2]"]


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_counterexample_from_a_stdio_adapter_replays_with_the_printed_command(spark, tmp_path, monkeypatch,
                                                                                  capsys):
    impl = tmp_path / "my impl"  # a space in the path: the command must be quoted
    impl.mkdir()
    (impl / "shim.py").write_text(SHIM)
    monkeypatch.chdir(impl)
    adapter = f"stdio:{sys.executable} shim.py"  # relative to the implementation's directory
    code = main(["check", "--adapter", adapter, *FAST, "--out", "results", "--report", "report"])
    out = capsys.readouterr().out
    assert code == 1 and "verdict: NOT CONFORMANT" in out, out
    summary = json.loads((impl / "report" / "summary.json").read_text())
    assert summary["verdict"]["verdict"] == "not conformant"
    (cx, *_) = summary["counterexamples"]
    script = (impl / "report" / "counterexamples").glob("*.rmqha")
    assert f"adapter 'stdio:{sys.executable} shim.py'" in next(script).read_text()  # quoted, parses back

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    replay = shell(cx["replay"], elsewhere)
    assert replay.returncode == 0, (cx["replay"], replay.stdout, replay.stderr)
    assert f"reproduced: {cx['property']}" in replay.stdout
    assert cx["replay"] in (impl / "report" / "report.md").read_text()


def test_check_of_an_implementation_whose_runs_error_exits_3_and_says_why(spark, tmp_path, capsys):
    adapter = f"stdio:{sys.executable} {FIXTURES / 'misbehaving_adapter.py'} exit"
    loud = [a for a in FAST if a not in ("--quiet", "--no-spark")]  # on Spark, saying so
    code = main(["check", "--adapter", adapter, *loud, "--out", str(tmp_path / "r"),
                 "--report", str(tmp_path / "report")])
    out, err = capsys.readouterr()
    assert code == 3 and "verdict: ERRORS" in out, out  # was exit 0: "4 runs: 0 failed, 3 errors"
    # no silence between the campaign and the report: each stage as it starts, with the time so far
    stages = [line for line in err.splitlines() if line.startswith("report: ")]
    assert [s.rsplit(" (", 1)[0] for s in stages[:2]] == ["report: starting Spark (local[2])",
                                                         "report: collating: runs and the implementation x property "
                                                         "matrix (1 chunk)"]
    assert any("plots and the report files" in s for s in stages) and all(s.endswith(" s)") for s in stages)
    md = (tmp_path / "report" / "report.md").read_text()
    assert md.splitlines()[2].startswith("> **Verdict: ERRORS**")
    assert "### Errored runs" in md and "the process exited (status 7) fatal: simulated crash" in md
    assert "ERROR: all 2 runs errored" in md
