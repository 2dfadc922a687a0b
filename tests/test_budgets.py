"""Test budgets come from the Hypothesis profiles (conftest.py), never from a test.

A ``max_examples`` pinned in a test silently overrides the profile, so a user asking for
a deeper run (``RMQHA_HYPOTHESIS_PROFILE=explore``) would not get one there; tests take a
share of the profile instead (tests/budgets.py)."""
from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import settings

from tests.budgets import share

TESTS = Path(__file__).parent
ALLOWED = {TESTS / "budgets.py"}
PINNED = re.compile(r"\bmax_examples\s*=(?!=)")  # an assignment, not a comparison


def test_no_test_pins_its_own_number_of_examples():
    pinned = [f"{p.relative_to(TESTS.parent)}:{n}" for p in sorted(TESTS.rglob("*.py")) if p not in ALLOWED
              for n, line in enumerate(p.read_text().splitlines(), 1) if PINNED.search(line)]
    assert not pinned, "max_examples pinned in a test (take a share of the profile: tests/budgets.py): " + ", ".join(pinned)


def test_a_share_follows_the_active_profile():
    active = settings.default.max_examples
    assert share(0.5).max_examples == max(1, round(active * 0.5))
    assert share(0.001).max_examples == 1
    parent = settings(deadline=None, stateful_step_count=7)
    child = share(0.5, parent)
    assert (child.deadline, child.stateful_step_count) == (None, 7)
    settings.load_profile("explore")
    try:
        deeper = share(0.25).max_examples
        assert deeper == round(settings.get_profile("explore").max_examples * 0.25)
    finally:
        settings.load_profile(os.environ.get("RMQHA_HYPOTHESIS_PROFILE", "ci"))
    assert deeper > round(settings.get_profile("ci").max_examples * 0.25)
