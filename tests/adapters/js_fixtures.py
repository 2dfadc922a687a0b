"""The independent JavaScript nodes of tests/fixtures/js/ as their tests use them: each
declares its slips in a ``SLIPS`` table (``--slip NAME``), keeps the shrunk counterexample
the default check found for each under a directory of its own, and every fixture's tests
make the same checks of them, written here once."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from conformance.campaign import execute
from conformance.script import read_script

ROOT = Path(__file__).parents[2]
NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not on PATH")


@attrs.frozen
class JsNode:
    node: Path  # the fixture's .js file
    scripts: Path  # its slips' counterexamples, SLIP.rmqha
    role: str = ""  # "broker=" when it plays one role of its scenario
    absolute: bool = False  # name the file by its absolute path (else from the repository's root, as a user would)

    @property
    def slips(self) -> list[str]:
        """The slips its ``SLIPS`` table declares (single-quoted keys; EQUIVALENT_SLIPS use double quotes)."""
        return re.findall(r"^\s+'([a-z0-9-]+)': '", self.node.read_text(), re.M)

    def adapter(self, slip: str | None = None) -> str:
        path = self.node if self.absolute else self.node.relative_to(ROOT)
        return f"{self.role}stdio:node {path}" + (f" --slip {slip}" if slip else "")

    def check_every_slip_has_a_counterexample(self, fewest: int, written_by: str) -> None:
        """At least ``fewest`` slips, each with its script, and no script for a slip it does not declare."""
        slips = self.slips
        assert len(slips) >= fewest, slips
        missing = [s for s in slips if not (self.scripts / f"{s}.rmqha").is_file()]
        assert not missing, f"no counterexample script for {missing} ({written_by})"
        extra = sorted(p.stem for p in self.scripts.glob("*.rmqha") if p.stem not in slips)
        assert not extra, f"scripts for slips the fixture does not declare: {extra}"

    def check_slip_caught_by_its_counterexample(self, slip: str) -> None:
        """Replayed as a user replays it, the slip's script shows the violation it names; its
        steps against the correct node violate nothing."""
        path = self.scripts / f"{slip}.rmqha"
        if not path.is_file():
            pytest.fail(f"no counterexample for {slip}")
        done = subprocess.run([sys.executable, "-m", "cli.main", "replay", str(path), "--adapter", self.adapter(slip)],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        script = read_script(str(path))
        plain = script.with_steps(s for s in script.steps if s.op != "expect")
        run = execute(plain, self.adapter(), record_trace=False)
        assert run.error is None and not run.violations, (run.error, [r.violation.message for r in run.violations[:3]])

    def check_unknown_slip_refused(self) -> None:
        """``--slip`` with a name it does not declare: exit 2, saying so (not a correct node)."""
        done = subprocess.run(["node", str(self.node), "--slip", "no-such-slip"], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=30)
        assert done.returncode == 2 and "unknown slip no-such-slip" in done.stderr, (done.returncode, done.stderr)

    @staticmethod
    def check_counterexample_replays(summary: dict, prop: str) -> None:
        """A failing check's report names ``prop`` with a replay command that works from any
        directory, run from a fresh shell as a user runs it, and reproduces the violation."""
        props = {c["property"] for c in summary["counterexamples"]}
        assert prop in props, props
        replay = next(c["replay"] for c in summary["counterexamples"] if c["property"] == prop)
        assert replay.startswith(f"cd {ROOT}") or replay.startswith(f"cd '{ROOT}'"), replay
        done = subprocess.run(replay, shell=True, cwd="/", capture_output=True, text=True, timeout=300,
                              env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"})
        assert done.returncode == 0 and f"reproduced: {prop}" in done.stdout, done.stdout + done.stderr
