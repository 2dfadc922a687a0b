"""Stateful property tests of a broker set whose roles the harness assigns (the
truncation scenario), against ``--adapter`` (default: reference)."""
import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.stateful import truncation_machine_for
from tests.conformance.conftest import require_scenario

BOUNDED = settings(stateful_step_count=25, deadline=None)  # examples: the Hypothesis profile's


@pytest.mark.parametrize("replicas", [3, 2])
def test_broker_set_keeps_every_truncation_invariant(adapter, replicas):
    require_scenario(adapter, "truncation")
    run_state_machine_as_test(truncation_machine_for(adapter, replicas), settings=BOUNDED)


# (ascending-scan and max-of-end-offsets need rarer schedules than the profile's
# examples reach: campaigns and tests/scenarios/truncation/mutant-*.rmqha kill them)
# (step conformance, spec/steps/replica.py, usually sees the variant's first wrong step before an invariant breaks)
@pytest.mark.parametrize("variant,prop", [("equal-start-append", "epoch-file-well-formed|step-conformance:role_change"),
                                          ("label-switched-before-header", "positions-covered|step-conformance:next_batch"),
                                          ("upstream-empty-epoch",
                                           "handshake-progress|prefix-agreement|step-conformance:handshake")])
def test_stateful_search_kills_truncation_variants(variant, prop):
    hunt = settings(BOUNDED, report_multiple_bugs=False, phases=[Phase.generate])
    with pytest.raises(AssertionError, match=prop):
        run_state_machine_as_test(truncation_machine_for(f"mutant:{variant}"), settings=hunt)
