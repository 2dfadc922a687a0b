"""Every command README.md and docs/*.md show, run as a user runs it.

Each document's commands run in order, in a fresh copy of the repository (what a
clone holds), each through ``bash`` in a fresh shell that activates the virtual
environment exactly as README says (``. .venv/bin/activate``), from the copy's root.
A command must end as its documents say: exit 0 (1 allowed where the command runs
known-bad variant: a `mutant:` adapter), no traceback, and a non-zero exit explained on
stderr. A `rmqha mutants` command must exit 0: every mutant it runs is killed.

Lean enough for CI: a command that starts a long campaign runs with a small budget
appended (``BUDGET``: fewer runs, shorter runs; a later flag wins in argparse), and
every command is deduplicated. ``RMQHA_DOCS_AS_WRITTEN=1`` runs them exactly as
written, budgets off (minutes to hours: for a release, by hand).

What is not run says why (``NOT_RUN``); synopsis lines (``rmqha run --adapter SPEC
[--runs N]``) are checked against the parser instead: every flag they show exists.
The quick start's install line is what .ci/run does on a fresh machine, checked here.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli.main import build_parser
from conformance.scenarios.registry import get_scenario

pytestmark = pytest.mark.spark  # check and report start Spark when run as written (RMQHA_DOCS_AS_WRITTEN=1)

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
AS_WRITTEN = os.environ.get("RMQHA_DOCS_AS_WRITTEN") == "1"

# substring of a command -> why this test does not run it
NOT_RUN = {
    "./my-": "stands for the reader's own program (./my-shim, ./my-broker, ...)",
    "mvn ": "needs Maven Central and the reader's jars (docs/adapters.md says so)",
    "RMQHA_DLEDGER_JAR": "needs the real DLedger jars",
    "jvm:dledger": "needs the real DLedger jars",
    "path/to/": "needs a source tree the reader fetched (a RocketMQ checkout)",
    "RMQHA_ROCKETMQ_CLASSPATH": "needs RocketMQ classes built from the reader's checkout",
    "jvm:rocketmq": "needs RocketMQ classes built from the reader's checkout (CI replays recorded transcripts)",
    "cat > pom.xml": "part of the Maven recipe",
    "python benchmarks/": "benchmarks print measured figures against targets: minutes, run by hand",
    "python -m pytest -q": "the test suite itself (CI runs it)",
}
# the quick start's set-up, which .ci/run performs on CI's fresh machine
SETUP = ("python3 -m venv .venv", "pip install -e '.[bench]'")

# command prefix -> flags appended to keep CI lean (argparse: the last --runs wins)
BUDGET = {
    "rmqha check": "--runs 2 --duration 3000 --no-spark",  # the campaign in process; the report is Spark's
    "rmqha run": "--runs 2 --duration 3000 --no-spark",  # the Spark path has its own tests (tests/results)
    # one mutant (below), until the first run that kills it; its counterexample kept as generated
    "rmqha mutants": "--runs 20 --duration-ms 2000 --no-shrink",
    # Spark's start costs ~75 s a report at load 13: the Spark path of 'rmqha report' has its own
    # tests (tests/results/test_spark_pipeline.py, test_results_io.py); here it runs in process
    "rmqha report": "--no-spark",
    "rmqha fingerprint": "--samples 20",
    "rmqha prove truncation": "--variant reference --max-epochs 2",  # every variant at K=3: minutes
    # the tests that judge the adapter (docs/adapters.md); the rest of tests/conformance
    # does not depend on --adapter and runs in the suite itself (8 more minutes)
    "pytest tests/conformance": "-q -k 'handler_level or stateful_dledger or stateful_raft'",
}
# a campaign on a known-bad variant (or its resume, rmqha-results/vnd: it exits with the campaign's
# verdicts), the Java node's buggy twin's trace: exit 1 is the expected finding
MAY_FAIL = ("mutant:", "--out rmqha-results/vnd", "-vote-order.trace", "mutant-ack-before-replicate.trace",
            "stack-all-ack-ignored.trace")

PLACEHOLDER = re.compile(r"(^|[\s=:\[])([A-Z][A-Z0-9_]*)(\.\.\.|\.json|\])?($|[\s\]])")


def _strip_comment(line: str) -> str:
    """Drop a trailing ``  # comment`` (two spaces before the hash, as the docs align them)."""
    return re.split(r"\s{2,}#\s", line, maxsplit=1)[0].strip()


def _blocks(text: str):
    for m in re.finditer(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        yield m.group(1)


def commands(path: Path) -> list[str]:
    """Shell commands in ``path``: lines of its sh blocks, and inline ``rmqha ...`` spans with arguments."""
    text = path.read_text(encoding="utf-8")
    found = []
    for block in _blocks(text):
        if any(marker in block for marker in ("mvn ", "<<'")):
            found.append(block.strip())  # a recipe is one unit
            continue
        for line in re.sub(r"[ \t]*\\\n\s*", " ", block).splitlines():
            line = _strip_comment(line)
            if line and not line.startswith("#"):
                found.append(line)
    if path.name == "README.md":
        for span in re.findall(r"`((?:rmqha|pytest)\s[^`]+)`", text):
            span = " ".join(span.split())  # a span may wrap across lines
            if len(span.split()) > 2:  # `rmqha run` alone names the command, it is no instruction
                found.append(span)
    return list(dict.fromkeys(found))


def is_synopsis(command: str) -> bool:
    return "[" in command or "..." in command or bool(PLACEHOLDER.search(command.replace("'.[bench]'", "")))


def _parsers():
    def walk(parser, path):
        for action in parser._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict):
                for name, sub in action.choices.items():
                    yield from walk(sub, path + (name,))
        yield " ".join(path), parser

    return dict(walk(build_parser(), ("rmqha",)))


PARSERS = _parsers()


def check_synopsis(command: str) -> None:
    words = command.replace("[", " ").replace("]", " ").split()
    if words[0] != "rmqha":
        return  # pytest --adapter=SPEC and the like
    name = " ".join(w for w in words[:3] if not w.startswith("-") and w.islower())
    while name not in PARSERS:
        name = name.rsplit(" ", 1)[0]
    known = {s for a in PARSERS[name]._actions for s in a.option_strings}
    flags = {w.split("=")[0] for w in words if w.startswith("--")}
    assert flags <= known, f"{command!r}: {name} has no {sorted(flags - known)}"


def budgeted(command: str) -> str:
    if AS_WRITTEN:
        return command
    parts = []
    for part in command.split(" && "):
        for prefix, extra in BUDGET.items():
            if part.startswith(prefix + " ") or part == prefix:
                if "--resume" not in part:  # a resumed campaign takes every setting from its manifest
                    part = f"{part} {extra}"
                if prefix == "rmqha mutants" and "--mutant" not in part:
                    part += f" --mutant {_first_mutant(part)}"
                break
        parts.append(part)
    return " && ".join(parts)


def _first_mutant(command: str) -> str:
    """The scenario's first mutant that names the property it violates: a run must kill it,
    so the command exits 0 (an equivalent mutant, naming none, may survive)."""
    words = shlex.split(command)
    return next(m.name for m in get_scenario(words[words.index("--scenario") + 1]).mutants if m.violates)


def fresh_copy(dest: Path) -> Path:
    """What a clone of the repository holds (tracked and new files, nothing ignored), plus
    the virtual environment this test runs in as ``.venv``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    (dest / ".venv").symlink_to(Path(sys.prefix))
    return dest


def in_fresh_shell(command: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.defpath if "PATH" not in os.environ else os.environ["PATH"].replace(
        str(Path(sys.executable).parent) + os.pathsep, "")  # not on PATH until activated
    script = f"set -e\n. .venv/bin/activate\n{command}\n"
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_the_quick_start_set_up_is_what_ci_does():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = next(_blocks(readme)).splitlines()[0]
    assert first == "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[bench]'"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv .venv && . .venv/bin/activate" in ci and "pip install -q -e '.[bench]'" in ci
    assert "\npython -m pytest -q\n" in ci  # README's test command, as written


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="not applicable: not running in a virtual environment")
def test_every_command_of_the_docs_runs_as_written(tmp_path):
    """Each document in a fresh copy, its commands in order; a command two documents
    show runs once (where it first appears)."""
    seen: set[str] = set()
    for doc in DOCS:
        if commands(doc):
            _run_document(doc, tmp_path / doc.stem, seen)


def _run_document(doc: Path, where: Path, seen: set) -> None:
    copy = fresh_copy(where)
    ran, skipped = [], []
    for command in commands(doc):
        if command in seen:
            continue
        seen.add(command)
        if any(s in command for s in SETUP):
            continue  # test_the_quick_start_set_up_is_what_ci_does
        reason = next((why for marker, why in NOT_RUN.items() if marker in command), None)
        if reason:
            skipped.append((command, reason))
            continue
        if is_synopsis(command):
            check_synopsis(command)
            continue
        actual = budgeted(command)
        started = time.monotonic()
        done = in_fresh_shell(actual, copy, timeout=3600 if AS_WRITTEN else 600)
        print(f"{time.monotonic() - started:6.1f} s  exit {done.returncode}  {actual}")  # shown with -s
        ran.append(actual)
        allowed = (0, 1) if any(m in command for m in MAY_FAIL) else (0,)
        assert "Traceback" not in done.stderr, (actual, done.stderr[-3000:])
        assert done.returncode in allowed, (actual, done.returncode, done.stdout[-2000:], done.stderr[-2000:])
        if done.returncode:
            assert done.stderr.strip(), (actual, "a non-zero exit must say why on stderr")
    assert ran or skipped or doc.name != "README.md"


def test_a_command_wrapped_across_lines_is_found(tmp_path):
    """README wraps inline commands anywhere, even right after ``rmqha`` (README's
    `rmqha\nmutants --scenario classic` was missed so)."""
    doc = tmp_path / "README.md"
    doc.write_text("run `rmqha\nmutants --scenario classic`, then `rmqha replay\ntests/x.rmqha` and `rmqha run`.\n"
                   "```sh\nrmqha check --runs 2 \\\n  --no-spark  # a comment\n```\n", encoding="utf-8")
    assert commands(doc) == ["rmqha check --runs 2 --no-spark", "rmqha mutants --scenario classic",
                             "rmqha replay tests/x.rmqha"]
    assert "rmqha mutants --scenario classic" in commands(ROOT / "README.md")
