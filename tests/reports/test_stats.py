"""The 95% upper bound of a violation rate (Wilson score interval)."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reports.stats import wilson_upper


# Upper ends of the Wilson intervals published by Newcombe (Statistics in Medicine,
# 1998, table I, method 3), plus the zero-failure cases the matrix shows most often.
@pytest.mark.parametrize(
    "failures, runs, upper",
    [
        (81, 263, 0.3662),
        (15, 148, 0.1605),
        (0, 20, 0.1611),
        (1, 29, 0.1718),
        (0, 10, 0.2775),
        (0, 100, 0.0370),  # z^2 / (n + z^2): close to the rule of three's 3/n
        (10, 10, 1.0),
    ],
)
def test_published_values(failures, runs, upper):
    assert wilson_upper(failures, runs) == pytest.approx(upper, abs=5e-5)


def test_no_runs_bounds_nothing():
    assert wilson_upper(0, 0) == 1.0


@given(st.integers(1, 10_000), st.data())
def test_bound_is_a_rate_above_the_observed_one_and_shrinks_with_runs(runs, data):
    failures = data.draw(st.integers(0, runs))
    upper = wilson_upper(failures, runs)
    assert failures / runs <= upper <= 1.0
    assert wilson_upper(failures, runs + 1) <= upper  # one more passing run never widens it
    if failures < runs:
        assert wilson_upper(failures + 1, runs) >= upper  # one more failure never narrows it
