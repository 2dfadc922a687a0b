"""Test budgets as shares of the active Hypothesis profile.

conftest.py registers the profiles (``ci``: 60 examples, derandomized; ``explore``:
2,000, random; chosen by ``RMQHA_HYPOTHESIS_PROFILE``). A test that needs fewer or more
examples than the profile's takes a *share* of it, so a user asking for a deeper run
gets one in every test; no test pins its own ``max_examples`` (tests/test_budgets.py).
"""
from __future__ import annotations

from hypothesis import settings


def share(fraction: float, parent: settings | None = None, **kw) -> settings:
    """``fraction`` of the active profile's examples (at least one), on top of ``parent``."""
    examples = max(1, round(settings.default.max_examples * fraction))
    if parent is None:
        return settings(max_examples=examples, **kw)
    return settings(parent, max_examples=examples, **kw)


# A stratum (one aim of an operation's generator, conformance.strategies.strata) gets its
# share of the profile's examples, and at least this fraction of them: an operation with many
# aims (controller.handle) runs more examples than one with a single strategy.
STRATUM_FLOOR = 1 / 8


def stratum_share(strata: int, fraction: float = 1.0) -> float:
    """The share of the profile each of ``strata`` strata of one operation gets."""
    return fraction * max(1 / strata, STRATUM_FLOOR)
