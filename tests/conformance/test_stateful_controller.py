"""Stateful property tests of the controller stack (3 controllers and a broker set),
against ``--adapter`` (default: reference); ROLE=SPEC adapters mix implementations."""
import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.stateful import controller_machine_for
from tests.budgets import share
from tests.conformance.conftest import require_scenario

BOUNDED = share(0.2, stateful_step_count=20, deadline=None)  # 12 examples under the ci profile
HUNT = share(25 / 60, BOUNDED, report_multiple_bugs=False, stateful_step_count=12,
                phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])


@pytest.mark.parametrize("acks,brokers", [("all", 3), ("all", 2), ("default", 3)])
def test_controller_stack_keeps_every_invariant(adapter, acks, brokers):
    require_scenario(adapter, "controller")
    run_state_machine_as_test(controller_machine_for(adapter, acks, brokers), settings=BOUNDED)


def test_stateful_search_finds_and_shrinks_a_broker_serving_before_its_role_is_confirmed():
    # the restarted broker starts as a master, unfenced, before any controller confirmed a
    # role (step-conformance:on_restart, at its boot), and then serves as a master of an
    # epoch the controller gave another broker with a SyncStateSet the controller never
    # accepted: any of these may fire first
    with pytest.raises(AssertionError, match="step-conformance:on_restart|one_master_per_master_epoch|"
                                             "sync_state_set_epoch_unique") as failure:
        run_state_machine_as_test(controller_machine_for("mutant:writes-before-role-confirmed"), settings=HUNT)
    script = str(failure.value).split("--- scenario script ---\n")[1]
    steps = [line for line in script.splitlines() if line.split()[0] not in
             ("scenario", "profile", "adapter", "nodes", "seed", "start-spread", "option")]
    # shrunk to a crash and a restart: the machine's first step, one rule, then the
    # teardown (heal, default network, restart everything, await a master, write, read)
    assert len(steps) <= 11, script
