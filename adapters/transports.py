"""Drivers for the adapter protocol over each transport.

``ProtocolAdapter`` is the driver side: it performs the handshake, records what the
implementation declared (name, version, profiles, operations, node kinds), and sends
requests. Subclasses move JSON objects: ``InProcessAdapter`` (a Python object with
``handle(request) -> response``; requests still go through ``json`` so that only JSON
values cross), ``StdioAdapter`` (JSON lines to a subprocess), ``JvmAdapter`` (a Java
object's ``String handle(String)``, through JPype).

Anything wrong on the implementation's side — it crashed, did not answer within the
timeout, answered garbage or the wrong id, or answered an ``internal`` error — raises
``conformance.errors.AdapterError`` with the offending exchange; ``unsupported``
raises ``adapters.protocol.Unsupported`` (reported as not applicable). After a
timeout the adapter is *broken*: every later request fails at once (the implementation
may still be busy with the old one, so nothing it says can be trusted).
"""
from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable

import attrs

from adapters import codec, jvm, jvm_calls, placement
from adapters.errors import AdapterError, ImplementationFailed, UserError
from adapters.operations import OPERATIONS
from adapters.protocol import (ERROR_CODES, INTERNAL, PROTOCOL, UNSUPPORTED, Unsupported, compact_json, parse_json,
                               request, validate_hello)

DEFAULT_TIMEOUT_S = 10.0
TIMEOUT_ENV = "RMQHA_ADAPTER_TIMEOUT"  # seconds, overrides the default for every transport
STARTUP_ALLOWANCE_S = 20.0  # a stdio process's first answer may take this long (or the timeout, if longer)
# the longest answer line a stdio process may write: ``rmqha serve-stdio``'s longest was
# 26 kB (campaigns of 6 runs of the dledger, truncation, controller and classic scenarios),
# and reading on without a bound would hold whatever the process writes
MAX_ANSWER_BYTES = 16 * 1024 * 1024
EXIT_GRACE_S = 2.0  # how long a process that closed its stdin or stdout has to exit before it is stopped


MAX_TIMEOUT_S = 86_400.0  # a day: more is a typo (and past what a lock's wait accepts)


def default_timeout() -> float:
    """``RMQHA_ADAPTER_TIMEOUT`` when set, else ``DEFAULT_TIMEOUT_S``; a value that is no
    number of seconds in (0, a day] is bad input, not a silent default (nor, for a huge
    one, an OverflowError at the first call)."""
    text = os.environ.get(TIMEOUT_ENV)
    if text is None:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT_S:  # (NaN fails every comparison)
        raise UserError(f"{TIMEOUT_ENV}={text[:40]!r}: not a number of seconds above 0 and at most {MAX_TIMEOUT_S:,.0f}")
    return value


@attrs.frozen(slots=True)
class AdapterInfo:
    """What an implementation declared in its ``hello`` answer."""

    spec: str
    implementation: str
    version: str
    profiles: dict  # profile family ("dledger", "controller") -> profile name it claims
    operations: frozenset  # handler-level operations it answers
    nodes: frozenset  # node kinds it can run ("dledger", "raft")
    liveness_bound_ms: dict = attrs.Factory(dict)  # node kind -> its own liveness bound, if declared
    # where the profiles come from, for a target that tells (jvm:dledger): the profile the
    # user declared in the adapter spec, and the one the build's own version claims
    declared: dict = attrs.Factory(dict)
    claims: dict = attrs.Factory(dict)
    # node kinds whose nodes hold connections of their own and take LinkFault from "network"
    link_faults: frozenset = frozenset()
    # node kind -> "tcp" or "udp", what its messages travel over, if declared (raft only)
    transport: dict = attrs.Factory(dict)

    def judged_against(self, family: str) -> str:
        """One line: the profile ``family`` is judged against, and why."""
        judged, declared, claimed = self.profiles.get(family), self.declared.get(family), self.claims.get(family)
        if judged is None:
            return f"judged against no {family} profile (none declared or claimed; declare one in the adapter spec)"
        if declared:
            also = (f"; the build claims {claimed} (version {self.version})" if claimed and claimed != declared
                    else "")
            return f"judged against {judged} (declared in the adapter spec){also}"
        if claimed:
            return f"judged against {judged}, which the build claims (version {self.version})"
        return f"judged against {judged}, which the implementation claims in its handshake"

    def supports(self, operation: str) -> bool:
        return operation in self.operations


def _short(x: Any, limit: int = 600) -> str:
    text = json.dumps(x, separators=(",", ":"), default=str) if not isinstance(x, str) else x
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ProtocolAdapter:
    def __init__(self, spec: str, timeout_s: float | None = None):
        self.spec = spec
        self.timeout_s = default_timeout() if timeout_s is None else timeout_s
        self._next_id = 0
        self.info: AdapterInfo | None = None
        self._last: tuple = ()  # (request,) or (request, response) of the latest exchange
        self.broken: str | None = None  # why the adapter can no longer be used

    # ------------------------------------------------------------------ transport

    def _exchange(self, req: dict) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        pass

    @property
    def last_exchange(self) -> str | None:
        """The latest exchange, for error messages (rendered only when asked: it is on the hot path)."""
        if not self._last:
            return None
        text = f"sent {_short(self._last[0])}"
        return text + (f"; got {_short(self._last[1])}" if len(self._last) > 1 else "")

    def alive(self) -> bool:
        """Whether the implementation can still answer (not after a timeout or a crash)."""
        return self.broken is None

    def _break(self, why: str, exchange: str) -> AdapterError:
        self.broken = why
        return AdapterError(f"{self.spec}: {why}", exchange)

    # ------------------------------------------------------------------ protocol

    def request(self, op: str, args: dict) -> Any:
        if self.broken:
            raise AdapterError(f"{self.spec}: unusable after an earlier failure ({self.broken})", self.last_exchange)
        self._next_id += 1
        req = request(self._next_id, op, args)
        self._last = (req,)
        resp = self._exchange(req)
        self._last = (req, resp)
        if not isinstance(resp, dict) or resp.get("id") != req["id"] or not isinstance(resp.get("ok"), bool):
            # an answer to another request, or none: the conversation is out of step, so
            # nothing later can be trusted either (the next run starts the adapter again)
            raise self._break(f"malformed response to {op} (want an object with the request's "
                              f"id and a boolean ok)", self.last_exchange)
        if resp["ok"]:
            if "result" not in resp:
                raise AdapterError(f"{self.spec}: response to {op} has no result", self.last_exchange)
            return resp["result"]
        exchange = self.last_exchange
        err = resp.get("error")
        if not isinstance(err, dict) or err.get("code") not in ERROR_CODES:
            raise AdapterError(f"{self.spec}: malformed error answer to {op} (want error.code in "
                               f"{', '.join(ERROR_CODES)})", exchange)
        if err["code"] == UNSUPPORTED:
            raise Unsupported(str(err.get("message") or op))
        failure = ImplementationFailed if err["code"] == INTERNAL else AdapterError
        raise failure(f"{self.spec}: {op} failed: {err['code']}: {err.get('message')}", exchange)

    def hello(self) -> AdapterInfo:
        r = self.request("hello", {"protocol": PROTOCOL})
        problem = validate_hello(r)
        if problem:
            raise AdapterError(f"{self.spec}: malformed hello answer: {problem}", self.last_exchange)
        if r["protocol"] != PROTOCOL:
            raise AdapterError(f"{self.spec}: speaks {r['protocol']!r}, rmqha speaks {PROTOCOL!r}", self.last_exchange)
        self.info = AdapterInfo(self.spec, r["implementation"], r.get("version", "?"), dict(r.get("profiles", {})),
                                frozenset(r.get("operations", ())), frozenset(r.get("nodes", ())),
                                dict(r.get("liveness_bound_ms", {})), dict(r.get("declared", {})),
                                dict(r.get("claims", {})), frozenset(r.get("link_faults", ())),
                                dict(r.get("transport", {})))
        return self.info

    def call(self, operation: str, args: dict) -> Any:
        """One handler-level call with JSON arguments; the JSON result."""
        if self.info is not None and operation not in self.info.operations:
            raise Unsupported(f"{self.spec} does not implement {operation}")
        return self.request("call", {"operation": operation, "args": args})

    def invoke(self, operation: str, args: dict) -> Any:
        """One handler-level call with spec records in and out (``adapters.operations``)."""
        return self.decode_result(operation, self.call(operation, {k: codec.encode(v) for k, v in args.items()}))

    def decode_result(self, operation: str, raw: Any) -> Any:
        """The JSON result of ``operation`` as its spec record. Every caller that keeps the
        JSON too (a transcript records it) decodes here, so that a result of the wrong
        shape is always this implementation's error (exit 3), never a ``CodecError``."""
        op = OPERATIONS[operation]
        try:
            return codec.decode(raw, op.result, codec.registry(op.namespace), "result")
        except codec.CodecError as exc:
            raise AdapterError(f"{self.spec}: answered {operation} with a value that is not a "
                               f"{getattr(op.result, '__name__', op.result)}: {exc}", self.last_exchange) from None


class Watchdog:
    """Runs calls on one worker thread and gives up on a call after a timeout.

    Python cannot stop a thread, so a call that times out is abandoned (the worker is
    a daemon) and the adapter is marked broken by the caller. The hand-over is two raw
    locks (the cheapest wake-up Python has: a call is on the hot path of every JPype
    and ``python:`` exchange); after a timeout the next call gets a fresh worker.
    """

    def __init__(self, name: str):
        self._name = name
        self._start()

    def _start(self) -> None:
        go, done = threading.Lock(), threading.Lock()
        go.acquire()
        done.acquire()
        slot: list = [None, None]  # the call to run, then its outcome
        worker: list = [None]  # its native thread id
        self._go, self._done, self._slot, self._worker = go, done, slot, worker

        def loop() -> None:
            worker[0] = placement.adopt_thread()  # beside the caller (adapters.placement)
            while True:
                go.acquire()
                try:
                    slot[1] = (True, slot[0]())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    slot[1] = (False, exc)
                done.release()

        threading.Thread(target=loop, name=self._name, daemon=True).start()

    def run(self, fn: Callable[[], Any], timeout_s: float) -> tuple[bool, Any]:
        """``(finished, (ok, value_or_exception))``; ``finished`` False on a timeout."""
        slot = self._slot
        slot[0] = fn
        self._go.release()
        if not self._done.acquire(True, timeout_s):
            if self._worker[0] is not None:
                placement.disown_thread(self._worker[0])
            self._start()  # the old worker is still in the call: abandon it
            return False, None
        outcome, slot[0], slot[1] = slot[1], None, None
        return True, outcome


class InProcessAdapter(ProtocolAdapter):
    """A Python object with ``handle(request) -> response``.

    rmqha's own servers (``reference``, ``mutant:``, ``pysyncobj``) are called directly;
    a user's ``python:`` implementation runs under a watchdog so that a hang becomes an
    error after the timeout instead of a hung test run.
    """

    def __init__(self, spec: str, server: Any, watchdog: bool | Watchdog = False, timeout_s: float | None = None):
        super().__init__(spec, timeout_s)
        self.server = server
        # a Watchdog given is the one that built ``server`` (a ``python:`` factory runs on it too)
        self._watchdog = (watchdog if isinstance(watchdog, Watchdog)
                          else Watchdog(f"rmqha-adapter {spec}") if watchdog else None)

    def _call(self, req: dict) -> Any:
        resp = self.server.handle(json.loads(json.dumps(req)))
        try:
            return json.loads(json.dumps(resp))
        except (TypeError, ValueError) as exc:
            raise _NotJson(exc) from None

    def close(self) -> None:
        """Say goodbye, so that the server releases what it holds (a JVM target its store directory)."""
        if not self.broken:
            try:
                self.request("bye", {})
            except AdapterError:
                pass

    def _exchange(self, req: dict) -> Any:
        if self._watchdog is None:
            finished, (ok, value) = True, _capture(lambda: self._call(req))
        else:
            finished, outcome = self._watchdog.run(lambda: self._call(req), self.timeout_s)
            if not finished:
                raise self._break(f"no answer within {self.timeout_s:g} s", f"sent {_short(req)}")
            ok, value = outcome
        if ok:
            return value
        if isinstance(value, _NotJson):
            raise AdapterError(f"{self.spec}: answered a value that is not JSON ({value.args[0]})", f"sent {_short(req)}")
        if isinstance(value, AdapterError):
            raise value
        raise AdapterError(f"{self.spec}: raised {type(value).__name__}: {value}", f"sent {_short(req)}")


class _NotJson(Exception):
    pass


def _capture(fn: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as exc:  # noqa: BLE001 - classified by the caller
        return False, exc


_TIMEOUT = object()
_TOO_LONG = object()


def split_command(spec: str, command: str) -> list[str]:
    """A ``stdio:`` command's argv, split as a POSIX shell would (never run through one)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # e.g. "No closing quotation"
        raise UserError(f"adapter {spec!r}: cannot split the command: {str(exc)[:1].lower()}{str(exc)[1:]}") from None
    if not argv:
        raise UserError(f"adapter {spec!r}: use stdio:COMMAND")
    return argv


# how far back the tail of a process's stderr may reach for the start of the line it begins in
LINE_START_REACH = 200


def stderr_tail(text: str, limit: int = 400) -> str:
    """The last ``limit`` characters of ``text`` as one line (``|`` between its lines), begun
    at the start of the line the cut falls in when that is at most ``LINE_START_REACH``
    characters further back: a runtime's error line comes before its stack (Node prints
    ``Error: Cannot find module ...`` and then the frames), and a tail cut inside it read
    ``find module ...``."""
    text = text.rstrip()
    start = max(0, len(text) - limit)
    line_start = text.rfind("\n", 0, start) + 1 if start else 0
    if start - line_start <= LINE_START_REACH:
        start = line_start
    # a line still cut (longer than the reach) is marked: the kept part is not its start
    return ("…" if start > line_start else "") + " | ".join(text[start:].strip().splitlines())


class StdioAdapter(ProtocolAdapter):
    """A subprocess answering one JSON line per request line.

    The process runs in its own session so that a timeout kills it and every child it
    started; its stderr goes to a temporary file (never a pipe nobody reads, which
    would block a chatty implementation) whose tail is quoted when it fails.
    """

    def __init__(self, spec: str, command: str, timeout_s: float | None = None):
        super().__init__(spec, timeout_s)
        self.command = command
        argv = split_command(spec, command)
        self._stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True,
            )
        except OSError as exc:
            raise AdapterError(f"{spec}: cannot start {command!r}: {exc.strerror}") from None
        placement.adopt_process(self.proc.pid)  # on rmqha's CPU (adapters.placement)
        self._poll = select.poll()
        self._poll.register(self.proc.stdout, select.POLLIN)
        self._buffer = bytearray()

    def stderr_tail(self, limit: int = 400) -> str:
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""
        return stderr_tail(text, limit)

    def _readline(self, deadline: float) -> Any:
        """One line (without the newline); None at end of output; ``_TIMEOUT`` if the deadline
        passed; ``_TOO_LONG`` once the line is longer than ``MAX_ANSWER_BYTES``. Each chunk is
        searched for the newline once, and appended in place: reading a long line is linear."""
        fd = self.proc.stdout.fileno()
        buffer = self._buffer
        end = buffer.find(b"\n")
        while end < 0:
            if len(buffer) > MAX_ANSWER_BYTES:
                return _TOO_LONG
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _TIMEOUT
            if not self._poll.poll(remaining * 1000):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            found = chunk.find(b"\n")
            if found >= 0:
                end = len(buffer) + found
            buffer += chunk
        if end > MAX_ANSWER_BYTES:
            return _TOO_LONG
        line = buffer[:end]
        del buffer[:end + 1]
        return line

    def _write(self, data: bytes) -> None:
        """The whole of ``data`` to the process's stdin, unbuffered (one system call as a rule)."""
        fd = self.proc.stdin.fileno()  # ValueError once closed
        while data:
            data = data[os.write(fd, data):]

    def _ended(self, stream: str, sent: str) -> AdapterError:
        """The process closed its ``stream`` (stdin: a write failed; stdout: end of output):
        it exited (its status), or it is still running and is stopped, as after a timeout."""
        try:
            what = f"the process exited (status {self.proc.wait(timeout=EXIT_GRACE_S)})"
        except subprocess.TimeoutExpired:
            self._kill()
            what = f"the process closed its {stream} but was still running {EXIT_GRACE_S:g} s later (stopped)"
        tail = self.stderr_tail()
        return self._break(what + (f" {tail}" if tail else ""), sent)

    def _exchange(self, req: dict) -> Any:
        line = compact_json(req)
        try:
            self._write(line.encode() + b"\n")
        except (BrokenPipeError, OSError, ValueError):
            raise self._ended("stdin", f"sent {_short(line)}") from None
        # the first answer also waits for the process to start (an interpreter, a JVM)
        limit = self.timeout_s if req.get("id") != 1 else max(self.timeout_s, STARTUP_ALLOWANCE_S)
        answer = self._readline(time.monotonic() + limit)
        if answer is None:
            raise self._ended("stdout", f"sent {_short(line)}")
        if answer is _TIMEOUT:
            self._kill()
            raise self._break(f"no answer within {limit:g} s (killed)", f"sent {_short(line)}")
        if answer is _TOO_LONG:  # the stream is out of step: stopped, as after a timeout
            self._kill()
            head = bytes(self._buffer[:600]).decode("utf-8", errors="replace")
            self._buffer.clear()
            raise self._break(f"answer longer than {MAX_ANSWER_BYTES:,} bytes (stopped)",
                              f"sent {_short(line)}; got {_short(head)}")
        text = answer.decode("utf-8", errors="replace")
        try:
            return parse_json(text)
        except json.JSONDecodeError as exc:
            # a stray line (a log message on stdout, a half-written answer): the real
            # answer may still follow it, so the stream is out of step; the process is
            # stopped and the next run starts it again, as after a timeout
            self._kill()
            raise self._break(f"answered something that is not a JSON object ({exc.msg})",
                              f"sent {_short(line)}; got {_short(text)}") from None

    def alive(self) -> bool:
        return self.broken is None and self.proc.poll() is None

    def _kill(self) -> None:
        placement.forget_process(self.proc.pid)
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None and not self.broken:
            try:  # a polite goodbye; whatever it answers, the process is stopped next
                self.proc.stdin.write(json.dumps(request(self._next_id + 1, "bye", {})).encode() + b"\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self._kill()
        for stream in (self.proc.stdout, self._stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass


class JvmAdapter(ProtocolAdapter):
    """A Java object with ``String handle(String requestJson)``, loaded through JPype.

    Calls run on the calling thread; a Java method that never returns is stopped after
    the timeout and becomes an error (``adapters/jvm_calls.py``). Where the JVM cannot
    stop a thread, or with ``RMQHA_JVM_WATCHDOG=thread``, calls run on a watchdog thread
    (JPype attaches it to the JVM) that is abandoned after the timeout instead.
    """

    def __init__(self, spec: str, classpath: list[str], class_name: str, timeout_s: float | None = None):
        super().__init__(spec, timeout_s)

        self.obj = jvm.instantiate(spec, classpath, class_name)
        try:
            self._handle = self.obj.handle  # once: JPype builds the bound method on every lookup
        except AttributeError:
            raise AdapterError(f"{spec}: class {class_name} has no method handle(String)") from None
        self._guard = jvm_calls.CallGuard(spec, self.timeout_s) if jvm_calls.direct_calls() else None
        self._watchdog = None if self._guard is not None else Watchdog(f"rmqha-jvm {spec}")

    def _exchange(self, req: dict) -> Any:
        text = compact_json(req)
        if self._guard is not None:
            outcome = self._guard.call(self._handle, text)
        else:
            finished, outcome = self._watchdog.run(lambda: self._handle(text), self.timeout_s)
            if not finished:
                outcome = None
        if outcome is None:
            raise self._break(f"no answer within {self.timeout_s:g} s", f"sent {_short(text)}")
        ok, value = outcome
        if not ok:
            raise AdapterError(f"{self.spec}: threw {value}", f"sent {_short(text)}")
        answer = None if value is None else str(value)
        try:
            return parse_json(answer) if answer is not None else None
        except json.JSONDecodeError as exc:
            raise AdapterError(f"{self.spec}: answered something that is not JSON ({exc.msg})",
                               f"sent {_short(text)}; got {_short(answer)}") from None
