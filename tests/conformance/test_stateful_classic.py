"""Stateful property tests of classic master/slave HA (a master and two slaves),
against ``--adapter`` (default: reference; its brokers are the node kind ``classic``)."""
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.stateful import classic_machine_for
from tests.conformance.conftest import require_scenario

STEPS = settings(stateful_step_count=8, deadline=None)


def test_classic_group_keeps_every_invariant(adapter):
    require_scenario(adapter, "classic")
    # mode, flush type and release are drawn per example
    run_state_machine_as_test(classic_machine_for(adapter), settings=STEPS)

