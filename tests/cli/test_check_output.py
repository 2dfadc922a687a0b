"""What ``rmqha check`` prints: a failing check names its first counterexamples and their
replay commands before the verdict (the last line), so a user starts without the report."""
import shlex

from cli.main import main


def test_a_failing_check_prints_its_counterexamples_before_the_verdict(tmp_path, capsys):
    status = main(["check", "--scenario", "controller", "--adapter", "mutant:shrink-removes-master", "--runs", "1",
                   "--no-spark", "--quiet", "--out", str(tmp_path / "results"), "--report", str(tmp_path / "report")])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1 and lines[-1].startswith("verdict: NOT CONFORMANT"), lines
    shown = [i for i, line in enumerate(lines) if line.startswith("counterexample: ")]
    assert shown and shown[-1] < len(lines) - 1, lines
    first = lines[shown[0]]
    assert "(seed 0, shrunk to 1 step)" in first, first
    replay = lines[shown[0] + 1]
    assert replay.startswith("  replay: rmqha replay "), replay
    argv = shlex.split(replay.split("replay: ", 1)[1])
    assert main(argv[1:]) == 0  # the printed command reproduces it


def test_a_conformant_check_prints_no_counterexample(tmp_path, capsys):
    assert main(["check", "--scenario", "controller", "--runs", "1", "--no-spark", "--quiet", "--no-search",
                 "--duration", "3000", "--out", str(tmp_path / "results"), "--report", str(tmp_path / "report")]) == 0
    assert "counterexample:" not in capsys.readouterr().out
