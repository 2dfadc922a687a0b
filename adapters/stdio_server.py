"""Serve an in-process implementation over the stdio adapter protocol.

``python -m adapters.stdio_server [--mutant NAME] [--profile P] [--implementation reference|pysyncobj]``
reads one request per line on stdin and answers one line on stdout until ``bye`` or
the end of input (docs/adapter-protocol.md). rmqha uses it to test the stdio
transport end to end (``--adapter "stdio:python -m adapters.stdio_server"`` must
behave exactly like the in-process reference); it is also a working example for
authors of shims in other languages. ``rmqha serve-stdio`` is the same as a command.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

from adapters.protocol import BAD_REQUEST, compact_json, error, parse_json
from adapters.reference_server import ReferenceServer
from spec.dledger.profiles import PROFILES


def serve(server: Any, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer JSON-line requests with ``server.handle`` until ``bye`` or end of input: on
    the process's own stdin and stdout (raw file descriptors: one read per batch of
    lines, one write per answer), or on the text streams given. However it ends (a client
    that leaves without ``bye`` too), the server's ``close`` (if it has one) releases
    what its nodes hold outside the process (PySyncObj's journal directories)."""
    try:
        if stdin is None and stdout is None:
            return _serve_fds(server, sys.stdin.fileno(), sys.stdout.fileno())
        stdin = stdin or sys.stdin
        stdout = stdout or sys.stdout
        for line in stdin:
            answer, bye = _answer(server, line)
            if answer is not None:
                stdout.write(answer + "\n")
                stdout.flush()
            if bye:
                break
        return 0
    finally:
        close = getattr(server, "close", None)
        if close is not None:
            close()


def _serve_fds(server: Any, fd_in: int, fd_out: int) -> int:
    pending = b""
    while True:
        chunk = os.read(fd_in, 1 << 16)
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop() if chunk else b""  # (at the end of input: a last line without its newline)
        for line in lines:
            answer, bye = _answer(server, line)
            if answer is not None:
                data = answer.encode() + b"\n"
                while data:
                    data = data[os.write(fd_out, data):]
            if bye:
                return 0
        if not chunk:
            return 0


def _answer(server: Any, line: str | bytes) -> tuple[str | None, bool]:
    """The answer line to one request line (None for a blank line), and whether it said ``bye``."""
    line = line.strip()
    if not line:
        return None, False
    try:
        req = parse_json(line if isinstance(line, str) else line.decode())
    except json.JSONDecodeError as exc:
        return compact_json(error(None, BAD_REQUEST, f"not JSON: {exc.msg}")), False
    except UnicodeDecodeError:
        return compact_json(error(None, BAD_REQUEST, "not JSON: not UTF-8 text")), False
    return compact_json(server.handle(req)), isinstance(req, dict) and req.get("op") == "bye"


def make_server(implementation: str = "reference", mutant: str | None = None, profile: str = "dledger-0.4",
                links: str = "fifo", journal: str = "file") -> Any:
    if implementation == "pysyncobj":
        from adapters.pysyncobj_server import PySyncObjServer

        return PySyncObjServer(links=links, journal=journal)

    return ReferenceServer(mutant=mutant, dledger_profile=profile)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--implementation", choices=("reference", "pysyncobj"), default="reference",
                   help="what to serve (default: %(default)s)")
    p.add_argument("--mutant", default=None,
                   help="serve the reference with this known bug (a DLedger, controller or truncation mutant: "
                        "then only the node kinds of its family; default: none)")
    # checked where it is read: an unknown one was the bare KeyError "rmqha: error: 'bogus'"
    p.add_argument("--profile", default="dledger-0.4", choices=tuple(PROFILES),
                   help="DLedger profile of the reference (default: %(default)s)")
    p.add_argument("--links", choices=("fifo", "datagram", "tcp"), default="fifo",
                   help="pysyncobj only: link semantics; tcp: its own TCP transport over simulated sockets (default: %(default)s)")
    p.add_argument("--journal", choices=("file", "memory"), default="file",
                   help="pysyncobj only: its FileJournal, or its default in-memory journal (default: %(default)s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m adapters.stdio_server", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        server = make_server(args.implementation, args.mutant, args.profile, args.links, args.journal)
    except KeyError as exc:
        print(f"stdio_server: {str(exc).strip(chr(34))}", file=sys.stderr)
        return 2
    return serve(server)


if __name__ == "__main__":
    sys.exit(main())
