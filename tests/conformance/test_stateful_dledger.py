"""Stateful property tests of a DLedger group, against ``--adapter`` (default: reference)."""
import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.stateful import machine_for
from tests.budgets import share
from tests.conformance.conftest import require_nodes

BOUNDED = share(50 / 60, stateful_step_count=40, deadline=None)  # 50 examples under the ci profile
# a mutant fails on most examples: stop at the first bug and keep the shrink short
HUNT = share(0.25, BOUNDED, report_multiple_bugs=False, stateful_step_count=10,
             phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])


@pytest.mark.parametrize("profile", ["dledger-0.4", "dledger-0.2"])
def test_dledger_group_keeps_every_invariant(adapter, implementation, node_kinds, profile):
    require_nodes(node_kinds, "dledger", implementation)
    run_state_machine_as_test(machine_for(adapter, profile), settings=BOUNDED)


def test_stateful_search_finds_and_shrinks_a_double_vote():
    with pytest.raises(AssertionError, match="election-safety|one-vote-per-term|step-conformance:handle_vote") as failure:
        run_state_machine_as_test(machine_for("mutant:double-vote"), settings=HUNT)
    script = str(failure.value).split("--- scenario script ---\n")[1]
    steps = [line for line in script.splitlines() if line.split()[0] not in
             ("scenario", "profile", "adapter", "nodes", "seed", "start-spread")]
    assert len(steps) <= 8, script  # shrunk to a handful (teardown heals, restarts and awaits a leader)


@pytest.mark.parametrize("mutant,prop", [("vote-not-durable", "step-conformance:persist|restart-durable|one-vote-per-term|election-safety"),
                                         ("term-not-durable", "step-conformance:persist|restart-durable|term-monotonic|one-vote-per-term")])
def test_stateful_search_kills_durability_mutants(mutant, prop):
    # detection only (shrinking is shown above and costs seconds per mutant)
    with pytest.raises(AssertionError, match=prop):
        run_state_machine_as_test(machine_for(f"mutant:{mutant}"), settings=settings(HUNT, phases=[Phase.generate]))
