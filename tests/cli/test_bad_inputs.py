"""Every bad input is one line on stderr and exit status 2: never a traceback, a hang,
a pass, or a run that starts (docs: README "Exit status everywhere").

One table: each row writes the files it needs into a fresh directory, runs the command
as a user types it (``{dir}`` is that directory), and names a fragment of the message.
The fuzz test below throws generated file contents at every command that reads a file.
"""
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli.main import main

REPO = Path(__file__).parents[2]
SCRIPT = "scenario dledger\nnodes n1 n2 n3\nrun 100\n"
CASE = {"name": "c", "master": {"epochs": [[1, 0]], "max_offset": 10}, "slave": {"epochs": [[1, 0]], "max_offset": 5},
        "expect": {"consistent_point": 5}}


def case_file(**side):
    case = json.loads(json.dumps(CASE))
    case["master"].update(side)
    return json.dumps({"cases": [case]})


RANDOM_BYTES = bytes([0x9b, 0x13, 0xc4, 0x00, 0x81]) + bytes(range(128, 256))  # not UTF-8, no BOM
UTF16 = "\ufeffscenario dledger\nnodes n1 n2 n3\n".encode("utf-16")

# (name, {file: content}, argv, message fragment)
BAD_INPUTS = [
    # scenario scripts (rmqha replay)
    ("script: random bytes", {"s.rmqha": RANDOM_BYTES}, "replay {dir}/s.rmqha", "is not UTF-8 text"),
    ("script: UTF-16 with BOM", {"s.rmqha": UTF16}, "replay {dir}/s.rmqha", "is UTF-16 text; save it as UTF-8"),
    ("script: NUL bytes", {"s.rmqha": b"scenario dledger\x00\n"}, "replay {dir}/s.rmqha", "not text (a NUL"),
    ("script: missing", {}, "replay {dir}/none.rmqha", "no such file"),
    ("script: a directory", {"d/x": ""}, "replay {dir}/d", "is a directory"),
    ("script: run 99999999999999999999 (would never end)", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\n"
     "run 99999999999999999999\n"}, "replay {dir}/s.rmqha", "'99999999999999999999' is not a whole number from 0"),
    ("script: run -5", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nrun -5\n"}, "replay {dir}/s.rmqha",
     "'-5' is not a whole number from 0"),
    ("script: run 1e45", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nrun 1e45\n"}, "replay {dir}/s.rmqha",
     "'1e45' is not a whole number"),
    ("script: await-leader past an hour", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nawait-leader 3600001\n"},
     "replay {dir}/s.rmqha", "not a whole number from 0 to 3,600,000"),
    ("script: two scenario lines", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nscenario classic\nrun 10\n"},
     "replay {dir}/s.rmqha", "s.rmqha:3: a second 'scenario' line (each header line is given once)"),
    ("script: duplicate node ids", {"s.rmqha": "scenario dledger\nnodes n1 n2 n1\nrun 10\n"}, "replay {dir}/s.rmqha",
     "node 'n1' is listed twice"),
    ("script: seed 1e45", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nseed 1e45\n"}, "replay {dir}/s.rmqha",
     "seed: '1e45' is not a whole number"),
    ("script: huge seed", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nseed " + "9" * 60 + "\n"},
     "replay {dir}/s.rmqha", "seed: '999999999999999999999..."),
    ("script: write size=1e45", {"s.rmqha": "scenario controller\nnodes c1 c2 c3 b1 b2\nwrite 1 size=1e45\n"},
     "replay {dir}/s.rmqha", "write size=: '1e45' is not a whole number from 1"),
    ("script: clean with a stray word", {"s.rmqha": "scenario controller\nnodes c1 c2 c3 b1 b2\nclean now\n"},
     "replay {dir}/s.rmqha", "clean: want 'clean' or 'clean living'"),
    ("script: replace a controller", {"s.rmqha": "scenario controller\nnodes c1 c2 c3 b1 b2\nreplace c2\n"},
     "replay {dir}/s.rmqha", "replace: 'c2' is not a broker"),
    ("script: a huge write burst", {"s.rmqha": "scenario truncation\nnodes b1 b2\nwrite 99999999999\n"},
     "replay {dir}/s.rmqha", "'write': '99999999999' is not a whole number from 1 to 10,000"),
    ("script: epoch offset 1e45", {"s.rmqha": "scenario truncation\nnodes b1 b2\nrun 10\nexpect epochs b1 1@1e45\n"},
     "replay {dir}/s.rmqha", "'1e45' is not a whole number"),
    ("script: net delay past an hour", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nnet 1..99999999999\n"},
     "replay {dir}/s.rmqha", "bad net spec"),
    ("script: net drop=nan", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nnet 1..20 drop=nan\n"},
     "replay {dir}/s.rmqha", "probabilities from 0 to 1"),
    ("script: expect violation of no such property", {"s.rmqha": SCRIPT + "expect violation no-such-property\n"},
     "replay {dir}/s.rmqha", "'no-such-property': no such property of scenario dledger"),
    ("script: a 2 MB token on one line (splitting it took minutes)", {"s.rmqha": SCRIPT + "run " + "9" * 2_000_000
     + "\n"}, "replay {dir}/s.rmqha", "{dir}/s.rmqha:4: a line of 2,000,004 characters (at most 65,536)"),
    ("script: unclosed quote", {"s.rmqha": "scenario dledger\nnodes 'n1 n2\n"}, "replay {dir}/s.rmqha",
     "cannot parse"),
    ("script: a step naming an unknown node (named by file and line, as parse errors are)",
     {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\ncrash n9\n"}, "replay {dir}/s.rmqha",
     "{dir}/s.rmqha:3: unknown node 'n9' (nodes: n1 n2 n3)"),
    ("script: a bad run step, by file and line", {"s.rmqha": "scenario dledger\nnodes n1 n2 n3\nrun 5\nrun abc\n"},
     "replay {dir}/s.rmqha", "{dir}/s.rmqha:4: 'run': 'abc' is not a whole number"),
    ("script: unknown scenario", {"s.rmqha": "scenario nope\nnodes n1\n"}, "replay {dir}/s.rmqha",
     "unknown scenario 'nope'"),
    ("adapter: unclosed quote in stdio:", {"s.rmqha": SCRIPT}, ["replay", "{dir}/s.rmqha", "--adapter",
                                                                'stdio:python -c "print(1)'],
     "cannot split the command: no closing quotation"),
    # truncation case files (rmqha prove cases)
    ("cases: random bytes", {"c.json": RANDOM_BYTES}, "prove cases {dir}/c.json", "is not UTF-8 text"),
    ("cases: UTF-16 with BOM", {"c.json": case_file().encode("utf-16")}, "prove cases {dir}/c.json",
     "is UTF-16 text"),
    ("cases: deeply nested JSON", {"c.json": '{"cases": ' + "[" * 100_000 + "]" * 100_000 + "}"},
     "prove cases {dir}/c.json", "nested too deeply"),
    ("cases: offset 1e45", {"c.json": case_file(max_offset=1e45)}, "prove cases {dir}/c.json",
     "field master.max_offset: 1e+45 is greater than the maximum"),
    ("cases: offset 2^63", {"c.json": case_file(max_offset=2**63)}, "prove cases {dir}/c.json",
     "field master.max_offset: 9223372036854775808 is greater than the maximum"),
    ("cases: a 46-digit offset", {"c.json": case_file(max_offset=10**45)}, "prove cases {dir}/c.json",
     "has 46 digits"),
    ("cases: epoch past a Java int", {"c.json": case_file(epochs=[[2**31, 0]])}, "prove cases {dir}/c.json",
     "field master.epochs[0][0]: 2147483648 is greater than the maximum"),
    ("cases: NaN", {"c.json": case_file().replace("10", "NaN", 1)}, "prove cases {dir}/c.json",
     "NaN is not a JSON number"),
    ("cases: not JSON", {"c.json": "{"}, "prove cases {dir}/c.json", "not JSON"),
    # a script names a process: replay starts nothing a file names (no PWNED file appears)
    ("replay: a script whose adapter line starts a process", {"s.rmqha": "scenario dledger\n"
     "adapter 'stdio:touch {dir}/PWNED'\nnodes n1 n2 n3\nrun 10\n"}, "replay {dir}/s.rmqha",
     "which would start a process or load code"),
    ("replay: a script whose adapter line starts a process for one role", {"s.rmqha": "scenario controller\n"
     "adapter 'broker=stdio:touch {dir}/PWNED + controller=reference'\nnodes c1 c2 c3 b1 b2\nrun 10\n"},
     "replay {dir}/s.rmqha", "which would start a process or load code"),
    ("replay: a script whose adapter line imports a module", {"s.rmqha": "scenario dledger\n"
     "adapter python:os:getcwd\nnodes n1 n2 n3\nrun 10\n"}, "replay {dir}/s.rmqha",
     "pass it yourself: --adapter python:os:getcwd"),
    # flags: checked before anything starts (Spark, a process) or is created
    ("fingerprint --samples -5", {}, "fingerprint --samples -5", "argument --samples: '-5' is not a whole number"),
    ("fingerprint --samples 0 (zero samples judge nothing)", {}, "fingerprint --samples 0",
     "argument --samples: '0' is not a whole number"),
    # every sample is drawn before the first is asked: a typo of 10^14 grew memory for ever, silently
    ("fingerprint --samples 99999999999999", {}, "fingerprint --samples 99999999999999",
     "argument --samples: '99999999999999' is not a whole number from 1 to 1,000,000"),
    ("transcript record --samples 99999999999999", {},
     "transcript record --adapter reference --samples 99999999999999 --out {dir}/t.jsonl.gz",
     "argument --samples: '99999999999999' is not a whole number from 1 to 1,000,000"),
    ("fingerprint: no operation in common", {},
     "fingerprint --quiet --adapter python:tests.fixtures.spec_handlers:NoCommonOperation",
     "no handler-level operation in common with rmqha"),
    ("fingerprint: unsupported for every input (zero samples judged)", {},
     "fingerprint --quiet --samples 5 --adapter python:tests.fixtures.spec_handlers:UnsupportedEverywhere",
     "no sample judged, nothing to fingerprint"),
    # a campaign name is a directory under --out: one plain name, never a path out of it
    ("check --campaign ../../x", {}, "check --campaign ../../x --out {dir}/r --report {dir}/rep",
     "argument --campaign: '../../x' is not a plain name"),
    ("check --campaign /abs/path", {}, "check --campaign {dir}/abs --out {dir}/r --report {dir}/rep",
     "argument --campaign: '{dir}/abs' is not a plain name"),
    ("run --campaign ..", {}, "run --campaign .. --out {dir}/r", "argument --campaign: '..' is not a plain name"),
    # the report directory is replaced whole: refused before the campaign runs, not after
    ("check --out D --report D", {}, "check --out {dir}/r --report {dir}/r", "--report {dir}/r and --out {dir}/r overlap"),
    ("check --report holding --out", {}, "check --out {dir}/rep/r --report {dir}/rep", "overlap"),
    ("check --report inside the campaign's results", {}, "check --campaign x --out {dir}/r --report {dir}/r/x/rep",
     "overlap"),
    ("run --chunk-size 0", {}, "run --chunk-size 0 --out {dir}/r", "argument --chunk-size: '0' is not"),
    ("run --runs 0", {}, "run --runs 0 --out {dir}/r", "argument --runs: '0' is not"),
    ("run: more chunks than a campaign holds (a plan of 100M chunks never started)", {},
     "run --runs 100000000 --chunk-size 1 --out {dir}/r",
     "is 100,000,000 chunks per adapter; at most 100,000 (each is a part file per table): give --chunk-size 1000"),
    ("run --seed -1", {}, "run --seed -1 --out {dir}/r", "argument --seed: '-1' is not a seed"),
    ("run --duration -5", {}, "run --duration -5 --out {dir}/r", "argument --duration: '-5' is not"),
    ("run --group-size x", {}, "run --group-size x --out {dir}/r", "argument --group-size: 'x' is not"),
    # generating a run's fault phase of 31 years never ended (a campaign that hung)
    ("run --duration past an hour", {}, "run --duration 999999999999 --out {dir}/r",
     "argument --duration: '999999999999' is not a whole number from 0 to 3,600,000"),
    ("check --duration past an hour", {}, "check --duration 3600001 --out {dir}/r --report {dir}/rep",
     "argument --duration: '3600001' is not a whole number from 0 to 3,600,000"),
    ("mutants --duration-ms past an hour", {}, "mutants --scenario dledger --duration-ms 999999999999",
     "argument --duration-ms/--duration: '999999999999' is not a whole number from 0 to 3,600,000"),
    ("check with an unknown --profile", {}, "check --profile nope --out {dir}/r --report {dir}/rep",
     "profile 'nope' (known: dledger-0.1, dledger-0.2, dledger-0.4)"),
    ("check --scenario controller with a DLedger profile", {},
     "check --scenario controller --profile dledger-0.4 --out {dir}/r --report {dir}/rep",
     "unknown profile 'dledger-0.4' for scenario controller"),
    ("run --scenario truncation with an unknown profile", {}, "run --scenario truncation --profile x --out {dir}/r",
     "unknown profile 'x' for scenario truncation"),
    ("mutants with an unknown --profile", {}, "mutants --scenario dledger --profile nope", "unknown profile 'nope'"),
    ("prove truncation --max-epochs 0", {}, "prove truncation --max-epochs 0", "argument --max-epochs: '0'"),
    ("prove truncation --max-epochs past what z3 finishes (a MemoryError once)", {},
     "prove truncation --max-epochs 999999999999", "argument --max-epochs: '999999999999' is not a whole number from 1 to 4"),
    ("prove truncation --messages past what z3 finishes", {}, "prove truncation --messages 999999999999",
     "argument --messages: '999999999999' is not a whole number from 1 to"),
    ("prove truncation --timeout 0", {}, "prove truncation --timeout 0",
     "argument --timeout: '0' is not a whole number from 1 to 86,400"),
    ("prove truncation --timeout past what z3 holds (wrapped round to 704 ms)", {},
     "prove truncation --timeout 4294968", "argument --timeout: '4294968' is not a whole number from 1 to 86,400"),
    ("an unknown flag", {}, "run --frobnicate", "unrecognized arguments: --frobnicate"),
    # was the bare KeyError: "rmqha: error: 'bogus'"
    ("serve-stdio --profile unknown", {}, "serve-stdio --profile bogus",
     "argument --profile: invalid choice: 'bogus' (choose from 'dledger-0.1', 'dledger-0.2', 'dledger-0.4')"),
    # building the RocketMQ classes (rmqha build-classpath)
    ("build-classpath: no such source", {}, "build-classpath {dir}/none --out {dir}/out", "not a directory"),
    ("build-classpath: not a RocketMQ tree", {"x.txt": ""}, "build-classpath {dir} --out {dir}/out",
     "not a RocketMQ 5.1+ source tree"),
    ("jvm:rocketmq with an unknown profile", {}, "fingerprint --adapter jvm:rocketmq=nope:{dir}",
     "unknown controller profile 'nope'"),
    # where output goes: refused before any work, not at the first write minutes later
    ("run --out under a file", {"f": "x"}, "run --out {dir}/f/r", "argument --out: '{dir}/f/r': '{dir}/f' is not a directory"),
    ("run --out where nothing may be written", {}, "run --out /proc/rmqha-results",
     "argument --out: '/proc/rmqha-results': cannot write in '/proc'"),
    ("check --out under a file", {"f": "x"}, "check --out {dir}/f/r --report {dir}/rep", "argument --out: '{dir}/f/r'"),
    ("check --report where nothing may be written", {}, "check --out {dir}/r --report /proc/rmqha-report",
     "argument --report: '/proc/rmqha-report': cannot write in '/proc'"),
    ("report --out under a file", {"f": "x"}, "report {dir} --out {dir}/f/rep", "argument --out: '{dir}/f/rep'"),
    ("replay --step-trace under a file", {"s.rmqha": SCRIPT, "f": "x"}, "replay {dir}/s.rmqha --step-trace {dir}/f/t",
     "argument --step-trace: '{dir}/f/t': '{dir}/f' is not a directory"),
    ("mutants --out a directory", {}, "mutants --scenario truncation --out {dir}",
     "argument --out: '{dir}' is a directory, not a file name"),
    ("mutants --replay-dir a file", {"f": "x"}, "mutants --scenario truncation --replay-dir {dir}/f",
     "argument --replay-dir: '{dir}/f' exists and is not a directory"),
    ("transcript record --out under a file", {"f": "x"}, "transcript record --adapter reference --out {dir}/f/t.jsonl.gz",
     "argument --out: '{dir}/f/t.jsonl.gz'"),
    ("build-classpath --out where nothing may be written", {}, "build-classpath {dir} --out /proc/rmqha-classes",
     "argument --out: '/proc/rmqha-classes': cannot write in '/proc'"),
]


def _argv(argv, d) -> list[str]:
    words = argv.split() if isinstance(argv, str) else argv
    return [w.replace("{dir}", str(d)) for w in words]


def _write(d: Path, files: dict) -> None:
    for name, content in files.items():
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.mark.parametrize("name,files,argv,message", BAD_INPUTS, ids=[row[0] for row in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, name, files, argv, message):
    _write(tmp_path, {k: v.replace("{dir}", str(tmp_path)) if isinstance(v, str) else v for k, v in files.items()})
    before = set(os.listdir(tmp_path))

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark started for bad input")

    monkeypatch.setattr("results.spark.spark_session", no_spark)
    started = time.monotonic()
    code = main(_argv(argv, tmp_path))
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("rmqha"), err
    assert message.replace("{dir}", str(tmp_path)) in err, err
    assert time.monotonic() - started < 30  # refused, not run
    assert set(os.listdir(tmp_path)) == before  # nothing created


# ------------------------------------------------------------------ fuzzing the file inputs

SEEDS = [SCRIPT, "scenario truncation\nnodes b1 b2\nwrite 2\nrun 100\nexpect max b1 2\n",
         "scenario controller\nnodes c1 c2 c3 b1 b2\nwrite 1 size=10\nrun 100\n", case_file()]
HOSTILE = ["", "-1", "1e45", "99999999999999999999", "NaN", "'", '"', "\\", "#", "|", "n1", "\x00", "\ufeff",
           "é", "0x10", "[" * 50, "{}", "expect", "violation", "nodes", "seed", "adapter", "reference"]


@st.composite
def mutated(draw):
    """A seed file with a few tokens or lines replaced, dropped or repeated, or raw bytes."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=200))
    text = draw(st.sampled_from(SEEDS))
    words = text.replace("\n", " \n ").split(" ")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(words) - 1))
        how = draw(st.sampled_from(("replace", "drop", "repeat", "text")))
        if how == "replace":
            words[i] = draw(st.sampled_from(HOSTILE))
        elif how == "drop":
            del words[i]
        elif how == "repeat":
            words.insert(i, words[i])
        else:
            words[i] = draw(st.text(max_size=8))
        if not words:
            words = [""]
    encoding = draw(st.sampled_from(("utf-8", "utf-8", "utf-8", "utf-16", "latin-1")))
    return " ".join(words).replace(" \n ", "\n").encode(encoding, errors="replace")


@given(content=mutated(), command=st.sampled_from(("replay", "prove cases")))
def test_fuzzed_files_never_raise(tmp_path_factory, content, command):
    d = tmp_path_factory.mktemp("fuzz")
    path = d / "input"
    path.write_bytes(content)
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(command.split() + [str(path)])  # an uncaught exception fails the test
    if code == 2:
        assert err.getvalue().count("\n") == 1, err.getvalue()
    else:  # a mutation that is still a valid script: judged, not refused
        assert command == "replay" and code in (0, 1), (code, err.getvalue())


# ------------------------------------------------------------------ the file system refusing later

def test_a_write_refused_mid_command_is_one_line(tmp_path, capsys, monkeypatch):
    """A disk that fills after the flags were checked: one line naming the file, exit 2."""
    def full(path, *args, **kwargs):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("results.io.write_manifest", full)
    # in this process: a campaign on Spark starts its session (and says so) before it writes
    code = main(["run", "--runs", "1", "--no-spark", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err == f"rmqha: error: {tmp_path / 'r'}: No space left on device\n"


@pytest.mark.parametrize("error, code, message", [
    (OSError(28, "No space left on device", "trace.jsonl"), 2, "rmqha: error: trace.jsonl: No space left on device\n"),
    (BrokenPipeError(32, "Broken pipe"), 141, ""),
])
def test_a_step_trace_that_cannot_be_written_is_not_the_implementations_failure(tmp_path, capsys, monkeypatch,
                                                                                  error, code, message):
    """The step trace's file or pipe failing mid-run: the file system's error (one line,
    exit 2) or a closed pipe (quiet, 141), never "the implementation failed" (exit 3)."""
    def refused(self, event):
        raise error

    monkeypatch.setattr("cli.commands.replay.TraceWriter.write", refused)
    script = REPO / "tests/scenarios/dledger/figure8-g1-loses-committed-entry.rmqha"
    assert main(["replay", str(script), "--step-trace", str(tmp_path / "trace.jsonl")]) == code
    assert capsys.readouterr().err == message


def test_a_reader_that_stops_early_gets_no_traceback():
    """``rmqha replay ... --step-trace /dev/stdout | head -1`` (a step trace of 330 kB, so the
    pipe breaks for sure): the command ends quietly, as a process the pipe's signal ends."""
    import subprocess
    import sys

    script = REPO / "tests/scenarios/dledger/figure8-g1-loses-committed-entry.rmqha"
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m cli.main replay {script} "
                           f"--step-trace /dev/stdout | head -1"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1, done.stdout
    assert done.stderr == "", done.stderr
    assert done.returncode == 141


# ------------------------------------------------------------------ errors that quote a huge value

@pytest.mark.parametrize("name,content,argv,message", [
    # (a step just under a script's longest line, 65,536 characters: a longer one is refused as such)
    ("replay: a 60,000-character unknown step", SCRIPT + "x" * 60_000 + " 5\n", "replay {path}",
     "unknown step 'xxxx"),
    ("validate: a 1 MB trace kind", json.dumps({"trace": "rmqha-trace/1", "kind": "k" * 1_000_000, "nodes": ["n1"]})
     + "\n", "validate {path}", "kind 'kkkk"),
])
def test_an_error_quotes_a_huge_value_cut_short(tmp_path, capsys, name, content, argv, message):
    """The value an error echoes is cut (about 200 characters, '…' and its length): one
    line a reader can read, not megabytes of it."""
    path = tmp_path / "input"
    path.write_text(content, encoding="utf-8")
    assert main(argv.replace("{path}", str(path)).split()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "characters)" in err, err[:500]
    assert len(err) < 600, len(err)


def test_any_error_line_is_bounded():
    """The safety net under every one-line error: a message that quotes a value without
    cutting it is still one line of bounded length, its head and tail kept."""
    from adapters.errors import LINE_LIMIT, AdapterError, UserError

    for error in (UserError, AdapterError):
        text = str(error("field f: " + "v" * 10_000_000 + "\n is not a number"))
        assert len(text) <= LINE_LIMIT + 3 and text.startswith("field f: vvv") and text.endswith("is not a number")
