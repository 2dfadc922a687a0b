"""Following README: 'rmqha check', then 'rmqha run', then another 'rmqha run', all with
their default --out, in the same directory and the same second: each gets a directory
of its own (a second campaign used to find the first one's and stop)."""
from cli.main import main

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
