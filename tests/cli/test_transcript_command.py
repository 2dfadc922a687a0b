"""``rmqha transcript record|replay`` as a user runs them (docs/dledger.md "Recorded transcripts")."""
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main

RMQHA = Path(sys.executable).parent / "rmqha"  # the command installed beside this Python
TRANSCRIPTS = sorted((Path(__file__).parents[1] / "transcripts" / "dledger").glob("rounds-*.jsonl.gz"))


def test_replay_of_the_committed_transcripts(capsys):
    assert main(["transcript", "replay", *map(str, TRANSCRIPTS)]) == 0
    out = capsys.readouterr().out
    assert "openmessaging-dledger 0.2.7 judged against dledger-0.2: 600 of 600 recorded answers are the spec's" in out
    assert "dledger.heartbeat_round:" in out and "STEP_DOWN_LEASE_EXPIRED" in out


def test_replay_against_another_profile_disagrees_and_shows_where(capsys):
    assert main(["transcript", "replay", str(TRANSCRIPTS[0]), "--profile", "dledger-0.4"]) == 1
    out = capsys.readouterr().out
    assert "recorded:" in out and "spec:" in out


def test_a_tampered_answer_is_a_disagreement(tmp_path, capsys):
    lines = gzip.decompress(TRANSCRIPTS[-1].read_bytes()).decode().splitlines()
    call = json.loads(lines[1])
    key = "returns_at"
    call["answer"][key] += 1
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress("\n".join([lines[0], json.dumps(call)]).encode()))
    assert main(["transcript", "replay", str(bad)]) == 1
    assert "0 of 1 recorded answers are the spec's" in capsys.readouterr().out


@pytest.mark.parametrize("content,fragment", [
    (b"not gzip", "not an rmqha-transcript/1 transcript"),
    (gzip.compress(b'{"format": "something else"}\n'), "no header line"),
    (gzip.compress(b'{"format": "rmqha-transcript/1", "profile": "dledger-0.4"}\n{"op": "dledger.nope"}\n'),
     "line 2: unknown operation 'dledger.nope'"),
    # a line without a field it needs says which (it said only "line 2: 'args'")
    (gzip.compress(b'{"format": "rmqha-transcript/1", "profile": "dledger-0.4"}\n{"op": "dledger.handle_vote"}\n'),
     "line 2: no 'args'"),
    # more digits than Python converts, nesting deeper than it recurses: read as bad JSON, not a traceback
    (gzip.compress(b'{"format": "rmqha-transcript/1"}\n{"op": "dledger.handle_vote", "answer": ' + b"9" * 5000
                   + b'}\n'), "a number of more than 4300 digits"),
    (gzip.compress(b'{"format": "rmqha-transcript/1"}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n"),
     "nested more than"),
])
def test_a_file_that_is_not_a_transcript_is_bad_input(tmp_path, capsys, content, fragment):
    f = tmp_path / "t.jsonl.gz"
    f.write_bytes(content)
    assert main(["transcript", "replay", str(f)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_record_then_replay(tmp_path, capsys):
    out = tmp_path / "reference.jsonl.gz"
    assert main(["transcript", "record", "--adapter", "reference", "--out", str(out), "--samples", "60",
                 "--keep", "20", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "dledger.candidate_round: 60 of 60 answers agree with the spec" in text
    assert main(["transcript", "replay", str(out)]) == 0
    assert "40 of 40 recorded answers are the spec's" in capsys.readouterr().out


def test_record_refuses_what_the_implementation_does_not_answer(tmp_path, capsys):
    assert main(["transcript", "record", "--adapter", "pysyncobj", "--out", str(tmp_path / "x.jsonl.gz"),
                 "--quiet"]) == 2
    assert "does not answer any handler-level operation" in capsys.readouterr().err


def test_record_of_a_result_of_the_wrong_shape_is_the_implementations_error(tmp_path, capsys):
    shim = Path(__file__).parents[1] / "fixtures" / "misbehaving_adapter.py"
    assert main(["transcript", "record", "--adapter", f"stdio:{sys.executable} {shim} wrong-vote", "--samples", "5",
                 "--out", str(tmp_path / "t.jsonl.gz"), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "with a value that is not a" in err, err


def test_record_of_an_implementation_that_answers_nothing_judges_nothing_and_says_so(tmp_path, capsys):
    """'unsupported' to every call: nothing judged, exit 2 (as the fingerprint's zero
    samples), and no empty transcript left to look like a result."""
    shim = Path(__file__).parents[1] / "fixtures" / "misbehaving_adapter.py"
    out = tmp_path / "t.jsonl.gz"
    assert main(["transcript", "record", "--adapter", f"stdio:{sys.executable} {shim} unsupported", "--samples", "30",
                 "--out", str(out), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "nothing judged, no transcript written" in captured.err, captured.err
    assert "0 of 0" not in captured.out
    assert not out.exists()


def test_a_transcript_without_calls_judges_nothing_and_says_so(tmp_path):
    """As a user runs it: a valid header and no calls judged nothing, so exit 2 with one
    line saying so (it was exit 1, a verdict that something disagreed)."""
    f = tmp_path / "empty.jsonl.gz"
    f.write_bytes(gzip.compress(b'{"format": "rmqha-transcript/1", "profile": "dledger-0.4"}\n'))
    done = subprocess.run([str(RMQHA), "transcript", "replay", str(f)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == f"rmqha: error: {f}: no recorded calls: nothing was judged\n" and not done.stdout


ROCKETMQ = Path(__file__).parents[1] / "transcripts" / "rocketmq" / "develop.jsonl.gz"


def _epoch_file_transcript(tmp_path, **header) -> Path:
    """A transcript of epoch-file calls (no profile changes their answers) under ``header``."""
    lines = gzip.decompress(ROCKETMQ.read_bytes()).decode().splitlines()
    calls = [line for line in lines[1:] if json.loads(line)["op"].startswith("truncation.")][:3]
    f = tmp_path / "t.jsonl.gz"
    f.write_bytes(gzip.compress("\n".join([json.dumps({**json.loads(lines[0]), **header}), *calls]).encode()))
    return f


@pytest.mark.parametrize("header,flags,message", [
    ({"profile": "rocketmq-9.9", "profiles": {"controller": "rocketmq-9.9"}}, [],
     "{f}: the header names controller profile 'rocketmq-9.9', which rmqha does not know (known: rocketmq-5.1, "
     "rocketmq-5.0)"),
    ({"profile": "dledger-9.9", "profiles": {}}, [],
     "{f}: the header names profile 'dledger-9.9', which rmqha does not know (known: dledger-0.1, dledger-0.2, "
     "dledger-0.4, rocketmq-5.1, rocketmq-5.0, rocketmq-4.9.3, rocketmq-4.9.0)"),
    ({}, ["--profile", "nope"], "unknown profile 'nope' (known: dledger-0.1, "),
    ({"profiles": ["rocketmq-5.1"]}, [], "header field 'profiles' is ['rocketmq-5.1'], not an object"),
])
def test_a_profile_rmqha_does_not_know_is_bad_input_not_a_verdict(tmp_path, header, flags, message):
    """As a user runs it: the calls' answers depend on no profile, so they were replayed and
    reported "judged against rocketmq-9.9", exit 0, for a profile rmqha does not have."""
    f = _epoch_file_transcript(tmp_path, **header)
    done = subprocess.run([str(RMQHA), "transcript", "replay", str(f), *flags], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and message.format(f=f) in done.stderr, done.stderr
    assert not done.stdout


def test_the_epoch_file_transcript_of_the_test_above_is_judged_as_it_is(tmp_path):
    f = _epoch_file_transcript(tmp_path)
    done = subprocess.run([str(RMQHA), "transcript", "replay", str(f)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "judged against rocketmq-5.1: 3 of 3" in done.stdout, (done.stdout, done.stderr)


DLEDGER_0_4 = Path(__file__).parents[1] / "transcripts" / "dledger" / "rounds-0.4.0.jsonl.gz"


def test_a_header_without_a_profile_is_bad_input_naming_the_known_ones(tmp_path):
    """As a user runs it: round answers depend on the profile and the header names none, so
    there is nothing to judge them against (no default for a transcript, docs/dledger.md):
    one line naming the known profiles, exit 2 (it was one naming "None")."""
    lines = gzip.decompress(DLEDGER_0_4.read_bytes()).decode().splitlines()
    header = {k: v for k, v in json.loads(lines[0]).items() if k not in ("profile", "profiles")}
    f = tmp_path / "t.jsonl.gz"
    f.write_bytes(gzip.compress("\n".join([json.dumps(header), *lines[1:]]).encode()))
    done = subprocess.run([str(RMQHA), "transcript", "replay", str(f)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == (f"rmqha: error: {f}: the header names no dledger profile, which dledger.heartbeat_round "
                           "needs (known: dledger-0.1, dledger-0.2, dledger-0.4); name one with --profile\n")
    assert not done.stdout
    named = subprocess.run([str(RMQHA), "transcript", "replay", str(f), "--profile", "dledger-0.4"],
                           capture_output=True, text=True, timeout=120)
    assert named.returncode == 0 and "judged against dledger-0.4: 600 of 600" in named.stdout, named


@pytest.mark.parametrize("header,judged", [
    # calls that depend on no profile, under a header naming none: said so, never "None"
    ({"profile": None, "profiles": None, "implementation": None, "version": None},
     "(unnamed) judged against no profile (no recorded call depends on one): 3 of 3"),
    # controller calls are judged against the profile their family names, whatever "profile" says
    ({"profile": None}, "judged against rocketmq-5.1: 840 of 840"),
])
def test_replay_says_what_it_judged_against_never_none(tmp_path, header, judged):
    if "implementation" in header:
        f = _epoch_file_transcript(tmp_path, **header)
    else:  # the whole transcript, controller calls too
        lines = gzip.decompress(ROCKETMQ.read_bytes()).decode().splitlines()
        f = tmp_path / "t.jsonl.gz"
        f.write_bytes(gzip.compress("\n".join([json.dumps({**json.loads(lines[0]), **header}), *lines[1:]]).encode()))
    done = subprocess.run([str(RMQHA), "transcript", "replay", str(f)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and judged in done.stdout and "None" not in done.stdout, (done.stdout, done.stderr)
