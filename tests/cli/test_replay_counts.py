"""``rmqha replay`` counts a script's steps as its title counts them: a counterexample
"shrunk to 4" replays as 4 steps, its ``expect`` lines named apart (they check, not act)."""
from cli.main import main

SHRUNK = "tests/scenarios/classic/mutant-connect-reports-zero.rmqha"  # "shrunk to 4", one expect line


def test_a_shrunk_counterexample_replays_with_the_steps_its_title_counts(capsys):
    assert main(["replay", SHRUNK]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert ", 4 steps and 1 expect line, " in first, first


def test_a_failed_expectation_says_when_adapter_replaced_the_scripts_own(capsys):
    # a mutant's counterexample replayed against another implementation (here the reference, as
    # a user's broker would be) fails its expectation by design: the output says whose it was
    script = "tests/scenarios/controller/mutant-7219-shrink-removes-master.rmqha"
    assert main(["replay", script, "--adapter", "broker=reference"]) == 1
    out = capsys.readouterr().out
    assert "expectation failed" in out
    assert ("the script's expectations were written for its adapter line, mutant:shrink-removes-master; "
            "--adapter replaced it: this replay ran reference") in out
    assert main(["replay", script]) == 0  # its own adapter: no note
    assert "written for" not in capsys.readouterr().out
    # a regression script names no adapter: its expectations are the reference's
    story = "tests/scenarios/controller/isolation-7017-all-ack.rmqha"  # all-ack: 4 acknowledged, not 7
    assert main(["replay", story, "--adapter", "broker=mutant:all-ack-ignored"]) == 1
    out = capsys.readouterr().out
    assert "expect acknowledged 4: but 7 were acknowledged" in out
    assert ("(the script's expectations were written for reference (it names no adapter); --adapter replaced "
            "it: this replay ran broker=mutant:all-ack-ignored + controller=reference)") in out


def test_a_classic_mutants_counterexample_replayed_against_another_names_the_mutant(capsys):
    """A mutant's counterexample replayed against another implementation fails its ``expect
    violation`` lines; the message names the adapter line they were written for."""
    assert main(["replay", SHRUNK, "--adapter", "reference"]) == 1
    out = capsys.readouterr().out
    assert "expectation failed" in out
    assert ("written for its adapter line, mutant:connect-reports-zero; --adapter replaced it: "
            "this replay ran reference") in out


def test_a_failed_expectation_without_a_replaced_adapter_adds_nothing(tmp_path, capsys):
    script = tmp_path / "s.rmqha"
    script.write_text("scenario classic\nnodes b1 b2\nseed 0\nrun 10\nexpect max b1 999\n")
    assert main(["replay", str(script)]) == 1
    out = capsys.readouterr().out
    assert "expectation failed" in out and "written for" not in out
