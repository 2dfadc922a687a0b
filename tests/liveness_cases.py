"""What the liveness tests share: an implementation that stops (a mutant, or an independent
JS node with one line taken out) fails its first failing generated run by the one property
under test and no other (the others cannot see it: that is why the property exists)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conformance.campaign import plan_configs, run_one
from conformance.faults import MESSAGE_FAULT_MIXES
from conformance.scenarios.registry import get_scenario

ROOT = Path(__file__).resolve().parents[1]


def fails_only(prop: str, scenario: str, adapter: str, runs: int) -> None:
    """The first of ``runs`` generated runs of ``adapter`` that fails, fails ``prop`` alone."""
    configs = plan_configs("t", runs, 0, scenario, (adapter,), None, get_scenario(scenario).group_sizes,
                           tuple(MESSAGE_FAULT_MIXES), 30_000)
    for config in configs:
        result = run_one(config)
        if result.verdict == "fail":
            assert {p.name for p in result.properties if p.verdict == "fail"} == {prop}, (config.seed, result.error)
            return
    pytest.fail(f"{adapter} passed {runs} runs")


def js_without(tmp_path: Path, fixture: str, line: str, instead: str = "/* taken out */") -> Path:
    """A copy of ``tests/fixtures/js/FIXTURE`` with ``line`` (found exactly once) taken out
    (replaced by ``instead``)."""
    source = (ROOT / "tests" / "fixtures" / "js" / fixture).read_text()
    assert source.count(line) == 1, line
    copy = tmp_path / f"without-{fixture}"
    copy.write_text(source.replace(line, instead))
    return copy
