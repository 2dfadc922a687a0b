"""The reference behind the protocol: the dledger, replica, broker and controller node kinds
served over stdio (``rmqha serve-stdio``; classic: tests/classic/test_classic_node_kind.py)
give the same traces as the same nodes in process, for the same seeds, alone and mixed
with in-process roles. This is the control that keeps the protocol honest: every message,
view and durable state crosses it and comes back the same.
"""
import sys

import attrs
import pytest

from cli.main import main
from conformance.campaign import execute, plan_configs, run_one
from conformance.faults import DEFAULT_FAULT_MIXES
from conformance.scenarios.registry import get_scenario
from results.runresult import RunConfig

SERVE = f"stdio:{sys.executable} -m cli serve-stdio"


# the profile a scenario runs (serve-stdio's DLedger nodes declare its default)
PROFILE = {"dledger": "dledger-0.4"}


def trace(scenario: str, seed: int, size: int, adapter: str, duration_ms: int = 12_000) -> tuple[str, int]:
    config = RunConfig("t", seed, "reference", scenario, PROFILE.get(scenario, "rocketmq-5.1"), size, "mixed",
                       duration_ms)
    ex = execute(get_scenario(scenario).generate(config), adapter, record_trace=True)
    assert ex.error is None, ex.error
    return ex.cluster.trace_jsonl(), len(ex.violations)


@pytest.mark.parametrize("scenario,seed,size", [("truncation", 0, 3), ("truncation", 1, 2),
                                                ("controller", 0, 3), ("controller", 1, 2),
                                                ("dledger", 0, 3), ("dledger", 1, 4), ("dledger", 2, 5)])
def test_stdio_reference_nodes_trace_as_in_process_ones(scenario, seed, size):
    here = trace(scenario, seed, size, "reference")
    there = trace(scenario, seed, size, SERVE)
    assert here[1] == there[1] == 0
    assert there[0] == here[0]
    if scenario in ("truncation", "controller"):
        assert '"kind":"reply"' in here[0]  # acknowledgements are replies the monitor reads off the wire


@pytest.mark.parametrize("adapter", [f"broker={SERVE}", f"controller={SERVE}"])
def test_one_role_over_stdio_traces_as_in_process(adapter):
    assert trace("controller", 2, 3, adapter)[0] == trace("controller", 2, 3, "reference")[0]


@pytest.mark.parametrize("scenario,mutant", [("truncation", "label-switched-before-header"),
                                             ("controller", "shrink-removes-master"),
                                             ("dledger", "double-vote")])
def test_a_mutant_served_over_stdio_is_caught_as_in_process(scenario, mutant):
    # (every mutant: rmqha mutants --scenario S --over-stdio; docs/mutants.md)
    configs = plan_configs("t", 6, 0, scenario, (f"mutant:{mutant}",), None, get_scenario(scenario).group_sizes,
                           DEFAULT_FAULT_MIXES, 10_000)
    here = next(r for r in (run_one(c) for c in configs) if r.verdict == "fail")
    there = run_one(attrs.evolve(here.config, adapter=f"{SERVE} --mutant {mutant}"))
    assert there.verdict == "fail" and there.implementation == f"rmqha-reference+{mutant}"
    assert [(p.name, p.verdict) for p in there.properties] == [(p.name, p.verdict) for p in here.properties]


def test_a_mutant_server_runs_only_its_familys_node_kinds(capsys):
    status = main(["replay", "tests/scenarios/controller/isolation-7017-all-ack.rmqha", "--adapter",
                   f"{SERVE} --mutant max-of-end-offsets"])
    assert status == 2 and "runs no controller nodes" in capsys.readouterr().err
