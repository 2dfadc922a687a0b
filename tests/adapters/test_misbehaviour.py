"""An implementation that crashes, hangs or answers garbage is an error, never a hang or a pass.

Each row is one way to misbehave (tests/fixtures/misbehaving_adapter.py), over the
stdio transport (a subprocess) and, where it makes sense, in process (``python:``);
the error must be an ``AdapterError`` that names what went wrong and carries the
offending exchange, within a bounded time. (test_transports.py covers the common
cases end to end, through campaigns too.)
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters import resolve
from adapters.errors import AdapterError, UserError
from adapters.protocol import Unsupported
from spec.dledger.member_state import MemberView
from spec.dledger.records import HeartBeatRequest

SHIM = Path(__file__).parents[1] / "fixtures" / "misbehaving_adapter.py"
ARGS = {"member": MemberView("n1", frozenset({"n1", "n2", "n3"}), 2, None, None),
        "request": HeartBeatRequest(2, "n2")}


def stdio(mode: str) -> str:
    return f"stdio:{sys.executable} {SHIM} {mode}"


@pytest.fixture(autouse=True)
def short_timeout(monkeypatch):
    monkeypatch.setenv("RMQHA_ADAPTER_TIMEOUT", "1.5")


@pytest.mark.parametrize("mode,message,in_exchange", [
    ("exit", r"process exited \(status 7\) fatal: simulated crash", "dledger.handle_heartbeat"),
    ("silent-exit", r"process exited \(status 0\)", "dledger.handle_heartbeat"),
    ("huge-answer", r"answer longer than 16,777,216 bytes \(stopped\)", '"result":"xxxxxxxx'),
    ("close-stdout", r"the process closed its stdout but was still running 2 s later \(stopped\) closing stdout",
     "dledger.handle_heartbeat"),
    ("hang", r"no answer within 1.5 s \(killed\)", "dledger.handle_heartbeat"),
    ("garbage", "answered something that is not a JSON object", "<html>oops</html>"),
    ("huge-number", r"answered something that is not a JSON object \(a number of more than 4300 digits\)", "9999"),
    ("not-object", "malformed response to call", "[1,2,3]"),
    ("wrong-id", "malformed response to call", '"id":'),
    ("bad-error-code", "malformed error answer to call", "oops"),
    ("internal", "call failed: internal: NullPointerException", "NullPointerException"),
    ("wrong-result", "answered dledger.handle_heartbeat with a value that is not a HeartbeatDecision",
     "HeartbeatDecision"),
])
def test_stdio_misbehaviour_is_an_adapter_error(mode, message, in_exchange):
    adapter = resolve(stdio(mode), fresh=True)
    started = time.monotonic()
    try:
        with pytest.raises(AdapterError, match=message) as failure:
            adapter.invoke("dledger.handle_heartbeat", ARGS)
    finally:
        adapter.close()
    assert time.monotonic() - started < 5  # never a hang
    assert failure.value.exchange is not None and in_exchange in failure.value.exchange


@pytest.mark.parametrize("mode,message", [
    ("bad-hello", "malformed hello answer: (answer): 'implementation' is a required property"),
    ("old-protocol", "speaks 'rmqha-adapter/0', rmqha speaks 'rmqha-adapter/1'"),
    ("bad-transport", "malformed hello answer: transport/raft: 'quic' is not one of ['tcp', 'udp']"),
])
def test_a_bad_handshake_is_an_adapter_error(mode, message):
    with pytest.raises(AdapterError) as failure:
        resolve(stdio(mode), fresh=True)
    assert message in str(failure.value)


def test_a_process_that_closes_its_stdout_and_runs_on_is_stopped_and_said_so_in_one_line():
    """As a user runs it: it was reported as "exited (status -9)", the status of rmqha's own kill."""
    rmqha = Path(sys.executable).parent / "rmqha"
    done = subprocess.run([str(rmqha), "fingerprint", "--quiet", "--adapter", stdio("close-stdout")],
                          env=dict(os.environ, RMQHA_ADAPTER_TIMEOUT="5"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "status -9" not in done.stderr, done.stderr
    assert ("the process closed its stdout but was still running 2 s later (stopped) closing stdout"
            in done.stderr), done.stderr
    adapter = resolve(stdio("close-stdout"), fresh=True)
    with pytest.raises(AdapterError, match="closed its stdout"):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    assert adapter.proc.poll() is not None  # stopped, not left behind
    adapter.close()


def test_a_50_mb_answer_line_is_refused_promptly_in_one_line_and_exit_3():
    """As a user runs it: a 50 MB line was read slowly (each chunk searched the whole buffer
    again) and ended as "no answer within the timeout"; now the line's bound is the error."""
    rmqha = Path(sys.executable).parent / "rmqha"
    started = time.monotonic()
    done = subprocess.run([str(rmqha), "fingerprint", "--quiet", "--adapter", stdio("huge-answer")],
                          env=dict(os.environ, RMQHA_ADAPTER_TIMEOUT="30"), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "answer longer than 16,777,216 bytes (stopped)" in done.stderr, done.stderr
    assert time.monotonic() - started < 20


def test_after_a_timeout_the_adapter_is_unusable():
    adapter = resolve(stdio("hang"), fresh=True)
    with pytest.raises(AdapterError, match="no answer"):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    with pytest.raises(AdapterError, match="unusable after an earlier failure"):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    assert adapter.proc.poll() is not None  # killed, not left behind
    adapter.close()


def test_a_chatty_stderr_does_not_block_the_implementation():
    adapter = resolve(stdio("stderr-flood"), fresh=True)
    with pytest.raises(Unsupported, match="no"):  # answered, although it wrote 1 MiB to stderr first
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    tail = adapter.stderr_tail()
    assert tail.endswith("last words")
    assert tail.startswith("…")  # only the tail of 1 MiB: marked as cut, since it may start inside a line
    adapter.close()


def test_unsupported_is_not_applicable_not_a_failure():
    adapter = resolve(stdio("unsupported"), fresh=True)
    with pytest.raises(Unsupported):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    with pytest.raises(Unsupported, match="does not implement dledger.handle_push"):  # undeclared: never sent
        adapter.call("dledger.handle_push", {})
    adapter.close()


@pytest.mark.parametrize("factory,message", [
    ("hang", "no answer within 1.5 s"),
    ("raising", "raised RuntimeError: the implementation blew up"),
    ("not_json", "answered a value that is not JSON"),
    ("wrong_result", "not a HeartbeatDecision"),
])
def test_python_misbehaviour_is_an_adapter_error(factory, message):
    adapter = resolve(f"python:tests.fixtures.misbehaving_adapter:{factory}", fresh=True)
    started = time.monotonic()
    with pytest.raises(AdapterError, match=message):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("spec,message", [
    ("nonsense", "unknown adapter 'nonsense'"),
    ("mutant:no-such-bug", "unknown mutant 'no-such-bug'"),
    ("python:os", "use python:MODULE:FACTORY"),
    ("python:no.such.module:make", "No module named 'no'"),
    ("python:os:getcwd", "returned an object without handle(request)"),
    ("stdio:", "use stdio:COMMAND"),
    # a path or a relative name was exit 3, as if the implementation had failed to start
    ("python:./my_adapter.py:make", "'./my_adapter.py' is not a module name"),
    ("python:.my_adapter:make", "'.my_adapter' is not a module name"),
    ("python:a..b:make", "'a..b' is not a module name"),
    ('stdio:python -c "print(1)', "cannot split the command: no closing quotation"),
    ("pysyncobj:udp", "use pysyncobj[:datagram|:tcp][:memory]"),
    ("jvm:Foo", "use jvm:CLASSPATH:CLASS"),
])
def test_bad_adapter_specs_are_user_errors(spec, message):
    with pytest.raises(UserError, match=re.escape(message)):
        resolve(spec, fresh=True)


# python: adapters whose code fails as it loads, a module written per row (MODULE:FACTORY)
PYTHON_MODULES = {
    "factory_raises": "def make():\n    raise ValueError('no cluster configured')\n",
    "import_raises": "raise RuntimeError('cannot reach the config server')\n",
    "syntax_error": "def make(:\n",
    "import_missing": "import rmqha_no_such_dependency\n",
    "import_exits": "import sys\nsys.exit(4)\n",
    "not_callable": "make = 5\n",
}


@pytest.mark.parametrize("module,error,message", [
    ("factory_raises", AdapterError, "its factory make() raised ValueError: no cluster configured"),
    ("import_raises", AdapterError, "importing import_raises raised RuntimeError: cannot reach the config server"),
    ("syntax_error", AdapterError, "importing syntax_error raised SyntaxError"),
    ("import_missing", AdapterError, "raised ModuleNotFoundError: No module named 'rmqha_no_such_dependency'"),
    ("import_exits", AdapterError, "importing import_exits raised SystemExit: 4"),
    ("not_callable", UserError, "not_callable.make is not callable (type int)"),
])
def test_a_python_adapter_that_fails_as_it_loads_is_one_error(tmp_path, monkeypatch, module, error, message):
    """Not a traceback: code that raises as it loads is the implementation failing to
    start (exit 3, as a stdio process that dies before hello); a name that cannot be
    called is a bad spec (exit 2)."""
    (tmp_path / f"{module}.py").write_text(PYTHON_MODULES[module])
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(error) as failure:
        resolve(f"python:{module}:make", fresh=True)
    assert type(failure.value) is error and message in str(failure.value), failure.value


# python: adapters that fail as a user starts them, each a module of its own: the line rmqha prints
PYTHON_STARTS = {
    "factory_hangs": ("import time\n\ndef make():\n    time.sleep(3600)\n",
                      "its factory make() did not return within 1 s"),
    "import_sleeps": ("import time\ntime.sleep(1e9)\n", "importing import_sleeps did not finish within 1 s"),
    "import_spins": ("while True:\n    pass\n", "importing import_spins did not finish within 1 s"),
    "import_fails": ("raise RuntimeError('no config')\n", "importing import_fails raised RuntimeError: no config"),
    "import_quits": ("import sys\nsys.exit()\n", "importing import_quits raised SystemExit"),
}


@pytest.mark.parametrize("module", sorted(PYTHON_STARTS))
def test_a_python_adapter_that_hangs_or_fails_as_it_starts_is_one_line_and_exit_3(tmp_path, module):
    """As a user runs it: the module's import and the factory run under the adapter
    timeout, as the calls do, so code that never returns as it loads (an import that
    sleeps or spins once was a hung rmqha) ends rmqha with one line and exit 3, as code
    that raises or exits as it loads does."""
    source, message = PYTHON_STARTS[module]
    (tmp_path / f"{module}.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), RMQHA_ADAPTER_TIMEOUT="1")
    rmqha = Path(sys.executable).parent / "rmqha"
    started = time.monotonic()
    done = subprocess.run([str(rmqha), "fingerprint", "--quiet", "--adapter", f"python:{module}:make"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stderr == f"rmqha: adapter error: python:{module}:make: {message}\n", done.stderr
    assert time.monotonic() - started < 30


def test_a_command_that_cannot_start_is_an_adapter_error():
    with pytest.raises(AdapterError, match="cannot start"):
        resolve("stdio:/nonexistent/rmqha-shim --serve", fresh=True)


@pytest.mark.parametrize("mode", ["garbage", "hang"])
def test_a_one_time_misbehaviour_costs_one_run_of_a_campaign(tmp_path, mode, monkeypatch):
    """The adapter is started again for the next run (docs/adapter-protocol.md): a stray
    line on stdout, like a hang, errors the run that met it and no other."""
    from cli.main import main
    from results import io

    monkeypatch.setenv("RMQHA_ADAPTER_TIMEOUT", "1")
    spec = f"stdio:{sys.executable} {SHIM.parent / 'flaky_stdio.py'} {mode} {tmp_path / 'marker'}"
    code = main(["run", "--no-spark", "--adapter", spec, "--runs", "3", "--group-size", "3", "--duration", "3000",
                 "--out", str(tmp_path / "r"), "--quiet"])
    runs = sorted(io.read_table(tmp_path / "r", "runs").to_pylist(), key=lambda r: r["seed"])
    assert [r["verdict"] for r in runs] == ["error", "pass", "pass"]
    assert ("not a JSON object" if mode == "garbage" else "no answer within 1 s") in runs[0]["error"]
    assert code != 0


NODE_MISSING_SCRIPT = """node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module '/home/u/work/tests/fixtures/js/broker_node.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2
"""


def test_the_stderr_tail_begins_at_a_line_start():
    # Node's error line comes before its stack: a tail cut inside it read "find module '...'"
    from adapters.transports import stderr_tail

    tail = stderr_tail(NODE_MISSING_SCRIPT)
    assert tail.startswith("Error: Cannot find module '/home/u/work/tests/fixtures/js/broker_node.js' | "), tail
    assert tail.endswith("| Node.js v20.20.2")
    assert stderr_tail("short\nlast words\n") == "short | last words"
    # no line start near: the cut inside the line is marked
    assert stderr_tail("x" * 5000 + "\nlast words", limit=100) == "…" + "x" * 89 + " | last words"


@pytest.mark.parametrize("value", ["abc", "-1", "0", "nan", "1e10"])
def test_a_timeout_setting_that_is_no_number_of_seconds_is_bad_input(value):
    # was: "abc" silently 10 s, "1e10" an OverflowError at the first call
    done = subprocess.run([sys.executable, "-m", "cli.main", "fingerprint", "--adapter",
                           f"stdio:{sys.executable} -m cli serve-stdio", "--samples", "5", "--quiet"],
                          env=dict(os.environ, RMQHA_ADAPTER_TIMEOUT=value), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"rmqha: error: RMQHA_ADAPTER_TIMEOUT={value!r}: not a number of seconds above 0 and at most 86,400"]
