"""Known holes: runs where rmqha's reference, following the spec, breaks a safety invariant
(docs/truncation.md "Open: a crash that loses a replicated tail"). They stay visible and
reproducible (`rmqha replay tests/known_holes/NAME.rmqha` shows the violation) until the
spec decides; each test is a strict xfail, so the decision that closes a hole fails it
here, and its script then moves to tests/scenarios/ as a regression script."""
from pathlib import Path

import pytest

from conformance.campaign import execute
from conformance.script import read_script

HERE = Path(__file__).parent
HOLES = {
    "reconfirmed-master-rewrites-a-lost-tail.rmqha": "queue_offsets_never_reused",
    "remastered-broker-writes-under-its-old-epoch-entry.rmqha": "prefix-agreement",
}


def test_every_known_hole_script_is_listed():
    assert sorted(p.name for p in HERE.glob("*.rmqha")) == sorted(HOLES)


@pytest.mark.parametrize("name", sorted(HOLES))
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="open spec hole: docs/truncation.md 'Open: a crash that loses a replicated tail'")
def test_the_reference_keeps_its_invariants_through_a_known_hole(name):
    ex = execute(read_script(str(HERE / name)), "reference", record_trace=False)
    violated = {r.violation.property for r in ex.violations}
    assert HOLES[name] not in violated, f"{name}: {sorted(violated)}"
    assert not violated
