"""Edge slips at handler level are caught by the differential tests, in the default budget.

Each implementation of tests/fixtures/handler_slips.py answers every operation as the
spec does but one, which differs only at an edge (issue 14's list: a shrink comparing the
lag with ``>=``, an alter accepting a member the controller considers dead, an elect
ordering priorities the wrong way or letting the old master beat an admin-designated one,
a DLedger push overwriting entries it should compare; and four more of the same kind).
The differential test of that operation (tests/conformance/test_handler_level.py, the
active profile's examples split across the operation's strata) must fail on it, showing
both answers, and pass on every other operation.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from adapters import resolve
from tests.conformance.test_handler_level import differential
from tests.fixtures.handler_slips import SLIPS

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("slip", sorted(SLIPS))
def test_the_differential_test_catches_the_slip(slip):
    operation, _ = SLIPS[slip]
    adapter = resolve(f"python:tests.fixtures.handler_slips:{slip.replace('-', '_')}")
    with pytest.raises(AssertionError) as caught:
        differential(adapter, operation, shrink=False)  # found is enough here; pytest --adapter shrinks
    assert f"{operation}(" in str(caught.value) and "implementation:" in str(caught.value)


def test_a_slipped_implementation_agrees_everywhere_else():
    """The slip is the only difference: the neighbouring operations pass."""
    adapter = resolve("python:tests.fixtures.handler_slips:shrink_lag_at_bound")
    for operation in ("broker.maybe_expand", "broker.compute_master_confirm_offset"):
        judged, _ = differential(adapter, operation)
        assert judged > 0


def test_the_user_sees_it_fail_with_pytest_and_the_adapter():
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "tests/conformance/test_handler_level.py", "-k", "maybe_shrink",
                           "--adapter", "python:tests.fixtures.handler_slips:shrink_lag_at_bound"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "broker.maybe_shrink(" in done.stdout and "1 failed" in done.stdout
