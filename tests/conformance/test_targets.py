"""The target registry: per-role adapters, their one-line form, and not applicable."""
import pytest

from cli.main import main
from conformance.campaign import ShrinkBudget, run_one
from conformance.errors import NotApplicable, UserError
from conformance.targets import (
    check_applicable,
    combine_adapter_args,
    join_roles,
    resolve_targets,
    role_specs,
    split_roles,
)
from results.runresult import RunConfig

FOREIGN = "python:tests.fixtures.spec_handlers:SpecHandlers"  # handler level only, no nodes


@pytest.mark.parametrize("text,roles", [
    ("reference", None),
    ("stdio:java -cp build Shim", None),
    ("broker=stdio:node b.js", {"broker": "stdio:node b.js"}),
    ("broker=stdio:sh -c 'a + b' + controller=reference", {"broker": "stdio:sh -c 'a + b'", "controller": "reference"}),
    ("controller=mutant:no-periodic-reelect + broker=stdio:x", {"broker": "stdio:x", "controller": "mutant:no-periodic-reelect"}),
])
def test_role_qualified_adapters_split_and_join(text, roles):
    assert split_roles(text) == roles
    if roles is not None:
        assert split_roles(join_roles(roles)) == roles


@pytest.mark.parametrize("values,scenario,want", [
    (["reference"], "controller", ["reference"]),
    (["reference", "mutant:shrink-removes-master"], "controller", ["reference", "mutant:shrink-removes-master"]),
    (["broker=stdio:b", "controller=reference"], "controller", ["broker=stdio:b + controller=reference"]),
    (["broker=stdio:b"], "controller", ["broker=stdio:b + controller=reference"]),
    (["stdio:s", "controller=reference"], "controller", ["broker=stdio:s + controller=reference"]),
    (["broker=stdio:b", "controller=stdio:b"], "controller", ["stdio:b"]),  # one implementation for every role
    (["broker=stdio:r"], "truncation", ["stdio:r"]),
])
def test_command_line_adapters_combine_per_scenario(values, scenario, want):
    assert combine_adapter_args(values, scenario) == want


@pytest.mark.parametrize("values,scenario,message", [
    (["a", "b", "broker=c"], "controller", "at most one plain SPEC"),
    (["broker=a", "broker=b"], "controller", "role 'broker' is given twice"),
    (["controller=reference"], "truncation", "scenario truncation has no role 'controller'"),
    (["broker="], "controller", "has no adapter"),
])
def test_bad_role_adapters_are_one_line_errors(values, scenario, message):
    with pytest.raises(UserError, match=message):
        combine_adapter_args(values, scenario)


def test_unnamed_roles_run_the_reference_and_the_target_says_who_runs_what():
    targets = resolve_targets("controller", "broker=mutant:shrink-removes-master", "rocketmq-5.1")
    assert role_specs("controller", "broker=mutant:shrink-removes-master")["controller"] == "reference"
    assert targets.implementation == "broker=rmqha-reference+shrink-removes-master + controller=rmqha-reference"
    assert not targets["broker"].foreign and not targets["controller"].foreign


@pytest.mark.parametrize("scenario", ["controller", "truncation", "dledger", "raft", "classic"])
def test_an_adapter_without_the_node_kind_is_not_applicable(scenario):
    with pytest.raises(NotApplicable, match=r"^not applicable: spec-handlers .* runs no \w+ nodes"):
        check_applicable(scenario, FOREIGN)


def test_a_scenario_script_against_an_adapter_without_the_node_kind_says_not_applicable(capsys):
    status = main(["replay", "tests/scenarios/controller/isolation-7017-all-ack.rmqha", "--adapter", FOREIGN])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("rmqha: not applicable: spec-handlers")


def test_a_campaign_skips_adapters_that_are_not_applicable_and_says_why(tmp_path, capsys):
    status = main(["run", "--scenario", "truncation", "--adapter", FOREIGN, "--adapter", "reference", "--runs", "1",
                   "--no-spark", "--quiet", "--out", str(tmp_path / "r")])
    captured = capsys.readouterr()
    assert status == 0 and "1 runs" in captured.out
    assert "not applicable: spec-handlers" in captured.err and "(skipped)" in captured.err
    status = main(["run", "--scenario", "truncation", "--adapter", FOREIGN, "--runs", "1", "--no-spark",
                   "--out", str(tmp_path / "none")])
    assert status == 2 and not (tmp_path / "none").exists()


@pytest.mark.parametrize("brokers", ["reference", "mutant:shrink-removes-master",
                                     "controller=stdio:x + broker=reference"])
def test_the_reference_brokers_under_a_controller_profile_without_5_1_registration_are_not_applicable(
        brokers, tmp_path, capsys):
    # every run would end in an UnsupportedRequest error: said once, up front, nothing written
    status = main(["run", "--scenario", "controller", "--profile", "rocketmq-5.0", "--adapter", brokers,
                   "--runs", "2", "--no-spark", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and not (tmp_path / "r").exists()
    assert len(err) == 1 and err[0].startswith("rmqha: not applicable: rmqha's reference broker registers as 5.1")
    resolve_targets("controller", "reference", "rocketmq-5.1")  # the 5.1 profile runs them


def test_a_mixed_campaign_runs_and_its_counterexample_replays_with_its_roles(tmp_path, capsys):
    config = RunConfig("t", 0, "broker=mutant:shrink-removes-master + controller=reference", "controller",
                       "rocketmq-5.1", 3, "mixed", 30_000)
    result = run_one(config, shrink_budget=ShrinkBudget(40, 60.0))
    assert result.verdict == "fail" and result.counterexamples and result.counterexamples[0].shrunk
    script = result.counterexamples[0].script
    assert "adapter 'broker=mutant:shrink-removes-master + controller=reference'\n" in script  # quoted: one value
    path = tmp_path / "c.rmqha"
    path.write_text(script)
    assert main(["replay", str(path)]) == 0  # its expected violation, with the roles its adapter line names
    assert "adapter broker=mutant:shrink-removes-master + controller=reference" in capsys.readouterr().out


def test_an_adapter_that_plays_another_role_of_the_scenario_is_told_how_to_give_it_that_role():
    # a broker-only implementation given every role (--adapter SPEC): the line says how to run it
    # as the brokers alone, beside rmqha's controllers
    spec = "python:tests.fixtures.broker_only:server"
    with pytest.raises(NotApplicable) as caught:
        check_applicable("controller", spec)
    assert str(caught.value).endswith(f"runs no controller nodes, which scenario controller needs for its "
                                      f"controllers (it offers: broker); to run it as the brokers only, the other "
                                      f"roles on rmqha's reference: --adapter broker={spec}")
    check_applicable("controller", f"broker={spec}")  # and so it runs
