"""Every documented finding (reports/build.py FINDINGS) is what a scenario records, is
described in docs/reports.md, and its replay command shows it: a user reading a report
can look each up and run it."""
import shlex
from pathlib import Path

import pytest

from conformance.campaign import execute
import conformance.scenarios.registry  # noqa: F401 (every scenario's cluster class loaded)
from conformance.scenarios.base import SimCluster
from conformance.script import read_script
from reports.build import FINDINGS

ROOT = Path(__file__).resolve().parents[2]


def _recorded_names() -> set[str]:
    """The findings every scenario's cluster class (and subclass) can record."""
    names, todo = set(), [SimCluster]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        names.update(cls.finding_names or ((cls.finding_name,) if cls.finding_name else ()))
    return names


def test_every_finding_a_scenario_records_is_documented_and_no_other():
    assert _recorded_names() == set(FINDINGS)


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_each_finding_is_named_in_the_reports_doc(name):
    assert f"`{name}`" in (ROOT / "docs" / "reports.md").read_text()


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_each_findings_replay_shows_it_and_no_violation(name):
    argv = shlex.split(FINDINGS[name]["replay"])
    assert argv[:2] == ["rmqha", "replay"]
    script = read_script(str(ROOT / argv[2]))
    ex = execute(script, "reference", record_trace=False)
    assert name in {f.name or ex.cluster.finding_name for f in ex.cluster.findings}
    assert not ex.cluster.violations, ex.cluster.violations[0].violation.message
