"""Following README: 'rmqha check', then 'rmqha run', then another 'rmqha run', all with
their default --out, in the same directory and the same second: each gets a directory
of its own (a second campaign used to find the first one's and stop)."""
import pytest

from cli.main import main
from conformance.scenarios.registry import SCENARIOS

FAST = ["--runs", "1", "--duration", "1000", "--group-size", "3", "--fault-mix", "none", "--no-spark", "--quiet"]


def test_campaigns_with_the_default_out_never_meet(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", *FAST]) == 0
    assert main(["run", *FAST]) == 0
    assert main(["run", *FAST, "--scenario", "truncation", "--group-size", "2"]) == 0
    campaigns = sorted(p.name for p in (tmp_path / "rmqha-results").iterdir())
    assert len(campaigns) == 3 and all((tmp_path / "rmqha-results" / c / "manifest.json").is_file() for c in campaigns)
    out = capsys.readouterr().out
    assert all(f"committed in rmqha-results/{c}" in out for c in campaigns)


def test_resume_needs_the_directory_it_finishes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--resume", "--no-spark"]) == 2
    assert capsys.readouterr().err == "rmqha: error: --resume needs --out DIR: the campaign directory to finish\n"
    assert not (tmp_path / "rmqha-results").exists()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_runs_from_the_command_line(scenario, tmp_path, capsys):
    """A scenario in the registry is a scenario a user can run (classic's first campaign
    was a KeyError traceback in the adapter description)."""
    adapter = "pysyncobj" if scenario == "raft" else "reference"
    code = main(["run", "--scenario", scenario, "--adapter", adapter, "--runs", "1", "--duration", "1000",
                 "--no-spark", "--quiet", "--out", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr()


def test_a_second_check_says_whose_report_it_replaced(tmp_path, monkeypatch, capsys):
    """README's two 'rmqha check' lines share the default --report: the second says what it
    replaced and how to rebuild it (the results of both are kept)."""
    monkeypatch.chdir(tmp_path)
    assert main(["check", *FAST]) == 0
    first = capsys.readouterr().out
    assert "replaced" not in first
    (campaign,) = [p.name for p in (tmp_path / "rmqha-results").iterdir()]
    assert main(["check", *FAST]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == (f"report: this replaced campaign {campaign}'s report in rmqha-report; its results are kept "
                         f"(rmqha report rmqha-results/{campaign} --out DIR rebuilds it; --report DIR keeps reports "
                         f"apart)")
    assert lines[-1].startswith("verdict: CONFORMANT")
    assert len(list((tmp_path / "rmqha-results").iterdir())) == 2
