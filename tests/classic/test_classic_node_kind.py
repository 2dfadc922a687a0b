"""The classic node kind over the adapter protocol: rmqha's reference broker served by
``rmqha serve-stdio`` is driven node by node through the protocol, and the scenario
judges it exactly as the in-process reference: the same trace, violations, findings
and producer answers, byte for byte."""
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from adapters import codec
from adapters.reference_server import ReferenceServer
from cli.main import main
from conformance.campaign import execute, plan_configs
from conformance.scenarios.registry import get_scenario
from conformance.script import read_script
from spec.classic.records import BrokerRole
from spec.classic.wire import ClassicNodeConfig, Put

SERVE = f"stdio:{sys.executable} -m cli serve-stdio"
SCRIPTS = Path(__file__).parents[1] / "scenarios" / "classic"


def outcome(script, adapter):
    ex = execute(script, adapter, record_trace=True)
    cluster = ex.cluster
    return (ex.error, cluster.trace_jsonl(), [(r.violation.property, r.violation.message) for r in ex.violations],
            [(f.name, f.subject, f.detail) for f in cluster.findings], cluster.statuses)


@pytest.mark.parametrize("name", ["failover-async-master-loses-acknowledged.rmqha", "empty-slave-starts-at-last-file.rmqha",
                                  "master-power-loss-slave-diverges.rmqha"])
def test_a_script_over_the_protocol_is_the_in_process_run(name):
    script = read_script(str(SCRIPTS / name))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    assert outcome(script, SERVE) == outcome(script, "reference")


def test_a_generated_run_over_the_protocol_is_the_in_process_run():
    config = next(plan_configs("protocol", 1, 4, scenario="classic", group_sizes=(3,), fault_mixes=("mixed",)))
    script = get_scenario("classic").generate(config)
    assert outcome(script, SERVE) == outcome(script, "reference")


@pytest.mark.parametrize("mutant", ["empty-log-appends-at-zero", "sync-flush-not-waited", "offset-check-keyed-on-master-offset"])
def test_a_mutant_served_over_stdio_is_caught_as_in_process(mutant):
    # (every mutant: rmqha mutants --scenario classic --over-stdio)
    script = read_script(str(SCRIPTS / f"mutant-{mutant}.rmqha"))
    script = script.with_steps(s for s in script.steps if s.op != "expect")
    here = outcome(script, f"mutant:{mutant}")
    assert here[2], "the counterexample no longer fails in process"
    assert outcome(script, f"{SERVE} --mutant {mutant}") == here


def rmqha(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_rmqha_check_judges_classic_brokers_over_stdio_as_a_user_runs_it(tmp_path):
    done = rmqha("check", "--scenario", "classic", "--adapter", SERVE, "--runs", "2", "--no-spark", "--quiet",
                 "--out", "out", "--report", "report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "verdict: CONFORMANT" in done.stdout and "serve-stdio: conformant (2 runs" in done.stdout


def test_an_implementation_without_classic_nodes_is_not_applicable_to_the_scenario(tmp_path, capsys):
    pysyncobj = f"{SERVE} --implementation pysyncobj"  # node kind raft only
    status = main(["check", "--scenario", "classic", "--adapter", pysyncobj, "--runs", "1", "--no-spark",
                   "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report")])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"rmqha: not applicable: pysyncobj ({pysyncobj}) runs no classic nodes, which scenario "
        "classic needs for its brokers (it offers: raft)"]
    assert not (tmp_path / "out").exists()


def test_the_served_broker_says_when_nothing_observable_changed():
    # (a classic broker keeps no version: the server compares what node.observe would answer,
    # so the driver re-observes only after activations that changed something)
    server = ReferenceServer()
    config = codec.encode(ClassicNodeConfig(BrokerRole.SYNC_MASTER))
    calls = itertools.count(1)

    def call(op, **args):
        answer = server.handle({"rmqha": 1, "id": next(calls), "op": op, "args": args})
        assert answer["ok"], answer
        return answer["result"]

    call("node.create", kind="classic", handle="h", node_id="b1", peers=["b1", "b2"], seed=0, durable=None,
         now=0, config=config)
    put = codec.encode(Put("m1", 64, True))
    assert call("node.step", handle="h", now=10, message={"src": "client", "dst": "b1", "payload": put})["changed"]
    quiet = [call("node.tick", handle="h", now=t)["changed"] for t in range(20, 2000, 10)]
    assert not all(quiet) and not any(quiet[-10:])
