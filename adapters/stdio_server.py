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
import sys
from typing import Any, TextIO

from adapters.protocol import BAD_REQUEST, error
from adapters.reference_server import ReferenceServer


def serve(server: Any, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer JSON-line requests with ``server.handle`` until ``bye`` or end of input."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    for line in stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as exc:
            response = error(None, BAD_REQUEST, f"not JSON: {exc.msg}")
            req = None
        else:
            response = server.handle(req)
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()
        if isinstance(req, dict) and req.get("op") == "bye":
            break
    return 0


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
    p.add_argument("--profile", default="dledger-0.4", help="DLedger profile of the reference (default: %(default)s)")
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
