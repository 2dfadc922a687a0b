"""Configured election priorities in the controller stack (``option priorities NODE=N,...``).

``controller/priority-decides-failover.rmqha`` elects b2 because it is configured with
priority 0; the same schedule without the option elects b3: the priority, not the schedule,
decides. A malformed value is one line of bad input.
"""
from pathlib import Path

import attrs
import pytest

from conformance.campaign import execute
from conformance.errors import UserError
from conformance.scenarios.controller import generate_controller_script
from conformance.script import Step, read_script
from conformance.faults import FAULT_MIXES
from results.runresult import RunConfig

SCRIPT = Path(__file__).parent / "controller" / "priority-decides-failover.rmqha"


def test_without_the_option_the_other_slave_wins():
    script = read_script(str(SCRIPT))
    plain = attrs.evolve(script, options=tuple(o for o in script.options if o[0] != "priorities"),
                         steps=tuple(Step("expect", ("master", "b3")) if s.op == "expect" and s.args == ("master", "b2")
                                     else s for s in script.steps))
    assert execute(plain, "reference", record_trace=False).error is None


@pytest.mark.parametrize("value", ["b9=1", "b1=x", "b1=-1", "b1"])
def test_a_malformed_priority_is_bad_input(value):
    script = read_script(str(SCRIPT))
    bad = attrs.evolve(script, options=tuple(o for o in script.options if o[0] != "priorities") + (("priorities", value),))
    with pytest.raises(UserError, match="option priorities"):
        execute(bad, "reference", record_trace=False)


def test_campaigns_configure_priorities_on_some_seeds():
    configured = [s for s in range(40) if dict(generate_controller_script(
        RunConfig("t", s, "reference", "controller", "rocketmq-5.1", 3, "mixed", 30_000), FAULT_MIXES).options)
        .get("priorities")]
    assert 4 <= len(configured) <= 24
