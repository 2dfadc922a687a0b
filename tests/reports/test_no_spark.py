"""``--no-spark`` means no Spark: the campaign and its report in one process, no JVM."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
