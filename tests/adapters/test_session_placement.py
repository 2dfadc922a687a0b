"""``pytest --adapter SPEC``: the session runs beside an implementation in another
process or thread on one CPU, as ``rmqha check`` does (tests/conftest.py, adapters.placement);
beside rmqha's own reference, or with ``RMQHA_COLOCATE=0``, it stays where the kernel puts
it. tests/adapters/test_placement.py runs this file with a stdio adapter, both ways."""
import os

import pytest

from adapters import placement
from conformance.targets import drives_another_process


def test_the_session_runs_beside_the_implementation(adapter):
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("this platform cannot pin threads to CPUs")
    home = placement.home_cpu() if drives_another_process(adapter) else None
    if home is not None:
        assert os.sched_getaffinity(0) == {home}
    else:
        # pinned by nobody: the CPUs this process had when (if ever) it claimed one
        assert placement._claim is None or os.sched_getaffinity(0) == placement._claim[3]
