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
raises ``adapters.protocol.Unsupported`` (reported as not applicable).
"""
from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import time
from typing import Any

import attrs

from adapters.protocol import PROTOCOL, UNSUPPORTED, Unsupported, request
from adapters.errors import AdapterError

DEFAULT_TIMEOUT_S = 10.0


@attrs.frozen(slots=True)
class AdapterInfo:
    spec: str
    implementation: str
    version: str
    profiles: dict
    operations: frozenset
    nodes: frozenset


class ProtocolAdapter:
    def __init__(self, spec: str, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.spec = spec
        self.timeout_s = timeout_s
        self._next_id = 0
        self.info: AdapterInfo | None = None

    # ------------------------------------------------------------------ transport

    def _exchange(self, req: dict) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        pass

    def alive(self) -> bool:
        """Whether the implementation can still answer (a dead subprocess cannot)."""
        return True

    # ------------------------------------------------------------------ protocol

    def request(self, op: str, args: dict) -> Any:
        self._next_id += 1
        req = request(self._next_id, op, args)
        resp = self._exchange(req)
        exchange = f"sent {_short(req)}; got {_short(resp)}"
        if not isinstance(resp, dict) or resp.get("id") != req["id"] or not isinstance(resp.get("ok"), bool):
            raise AdapterError(f"{self.spec}: malformed response to {op}", exchange)
        if resp["ok"]:
            if "result" not in resp:
                raise AdapterError(f"{self.spec}: response to {op} has no result", exchange)
            return resp["result"]
        err = resp.get("error") or {}
        if err.get("code") == UNSUPPORTED:
            raise Unsupported(err.get("message") or op)
        raise AdapterError(f"{self.spec}: {op} failed: {err.get('code')}: {err.get('message')}", exchange)

    def hello(self) -> AdapterInfo:
        r = self.request("hello", {"protocol": PROTOCOL})
        try:
            if r["protocol"] != PROTOCOL:
                raise AdapterError(f"{self.spec}: speaks {r['protocol']!r}, rmqha speaks {PROTOCOL!r}")
            self.info = AdapterInfo(self.spec, str(r["implementation"]), str(r.get("version", "?")),
                                    dict(r.get("profiles") or {}), frozenset(r.get("operations") or ()),
                                    frozenset(r.get("nodes") or ()))
        except (KeyError, TypeError) as exc:
            raise AdapterError(f"{self.spec}: malformed hello answer ({exc!r})", _short(r)) from None
        return self.info

    def call(self, operation: str, args: dict) -> Any:
        if self.info is not None and operation not in self.info.operations:
            raise Unsupported(f"{self.spec} does not implement {operation}")
        return self.request("call", {"operation": operation, "args": args})


def _short(x: Any, limit: int = 600) -> str:
    text = json.dumps(x, separators=(",", ":"), default=str) if not isinstance(x, str) else x
    return text if len(text) <= limit else text[: limit - 3] + "..."


class InProcessAdapter(ProtocolAdapter):
    def __init__(self, spec: str, server: Any):
        super().__init__(spec)
        self.server = server

    def _exchange(self, req: dict) -> dict:
        try:
            resp = self.server.handle(json.loads(json.dumps(req)))
            return json.loads(json.dumps(resp))
        except (TypeError, ValueError) as exc:
            raise AdapterError(f"{self.spec}: answered a value that is not JSON ({exc})", _short(req)) from None
        except AdapterError:
            raise
        except Exception as exc:  # the Python implementation raised
            raise AdapterError(f"{self.spec}: raised {type(exc).__name__}: {exc}", _short(req)) from None


class StdioAdapter(ProtocolAdapter):
    """A subprocess answering one JSON line per request line."""

    def __init__(self, spec: str, command: str, timeout_s: float = DEFAULT_TIMEOUT_S):
        super().__init__(spec, timeout_s)
        self.command = command
        try:
            self.proc = subprocess.Popen(
                shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, bufsize=1, env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        except OSError as exc:
            raise AdapterError(f"{spec}: cannot start {command!r}: {exc.strerror}") from None
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._buffer = ""

    def _stderr_tail(self) -> str:
        try:
            if self.proc.poll() is not None and self.proc.stderr:
                return self.proc.stderr.read()[-400:].strip().replace("\n", " | ")
        except (OSError, ValueError):
            pass
        return ""

    def _readline(self, deadline: float) -> str:
        fd = self.proc.stdout.fileno()
        while "\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return ""
            if not self._selector.select(timeout=remaining):
                continue
            chunk = os.read(fd, 65536).decode("utf-8", errors="replace")
            if not chunk:
                return None  # end of output: the process died or closed stdout
            self._buffer += chunk
        line, self._buffer = self._buffer.split("\n", 1)
        return line

    def _exchange(self, req: dict) -> dict:
        line = json.dumps(req, separators=(",", ":"))
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise AdapterError(f"{self.spec}: the process exited (status {self.proc.poll()}) "
                               f"{self._stderr_tail()}".strip(), f"sent {_short(line)}") from None
        answer = self._readline(time.monotonic() + self.timeout_s)
        if answer is None:
            self.proc.wait(timeout=2)
            raise AdapterError(f"{self.spec}: the process exited (status {self.proc.returncode}) "
                               f"{self._stderr_tail()}".strip(), f"sent {_short(line)}")
        if answer == "":
            self.close()
            raise AdapterError(f"{self.spec}: no answer within {self.timeout_s:g} s (killed)", f"sent {_short(line)}")
        try:
            return json.loads(answer)
        except json.JSONDecodeError:
            raise AdapterError(f"{self.spec}: answered something that is not a JSON object",
                               f"sent {_short(line)}; got {_short(answer)}") from None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class JvmAdapter(ProtocolAdapter):
    """A Java object with ``String handle(String requestJson)``, loaded through JPype."""

    def __init__(self, spec: str, classpath: list[str], class_name: str):
        super().__init__(spec)
        try:
            import jpype
        except ImportError:
            raise AdapterError(f"{spec}: JPype is not installed") from None
        if not jpype.isJVMStarted():
            jpype.startJVM(classpath=classpath, convertStrings=True)
        else:
            for entry in classpath:
                jpype.addClassPath(entry)
        try:
            cls = jpype.JClass(class_name)
            self.obj = cls()
        except Exception as exc:
            raise AdapterError(f"{spec}: cannot load class {class_name} "
                               f"(classpath {os.pathsep.join(classpath)}): {exc}") from None

    def _exchange(self, req: dict) -> dict:
        try:
            answer = str(self.obj.handle(json.dumps(req)))
        except Exception as exc:
            raise AdapterError(f"{self.spec}: threw {exc}", _short(req)) from None
        try:
            return json.loads(answer)
        except json.JSONDecodeError:
            raise AdapterError(f"{self.spec}: answered something that is not JSON",
                               f"sent {_short(req)}; got {_short(answer)}") from None
