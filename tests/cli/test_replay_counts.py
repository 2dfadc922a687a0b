"""``rmqha replay`` counts a script's steps as its title counts them: a counterexample
"shrunk to 4" replays as 4 steps, its ``expect`` lines named apart (they check, not act)."""
from cli.main import main

SHRUNK = "tests/scenarios/classic/mutant-connect-reports-zero.rmqha"  # "shrunk to 4", one expect line


def test_a_shrunk_counterexample_replays_with_the_steps_its_title_counts(capsys):
    assert main(["replay", SHRUNK]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert ", 4 steps and 1 expect line, " in first, first
