"""The ``rmqha`` command line.

Each sub-command lives in its own module under ``cli/commands/`` and
exposes ``register(subparsers)``; the parser is assembled from every module found
there, so adding a command never touches this file.

Exit status: 0 success, 1 a property was violated / a case disagreed / a proof
failed, 2 bad input (one-line error) or nothing to judge (not applicable: the
implementation lacks what the scenario needs), 3 the implementation under test failed.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys

from adapters.errors import AdapterError, NotApplicable, UserError
from cli import commands
from cli.args import Parser
from reports.errors import ReportError
from results.errors import ResultsError

# bad input, whichever layer found it: one line, exit 2
BAD_INPUT = (UserError, ResultsError, ReportError)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("rmqha")
    except Exception:  # running from a source tree that was never installed
        return "0+source"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rmqha",
        description="Conformance kit for RocketMQ's high-availability protocols.",
    )
    parser.add_argument("--version", action="version", version=f"rmqha {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # bad usage (one line, 2), --help or --version (0): a status like any other
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return int(args.func(args) or 0)
    except NotApplicable as exc:  # nothing could be judged: said so, never a pass
        print(f"rmqha: {exc}", file=sys.stderr)
        return exc.exit_code
    except BAD_INPUT as exc:
        print(f"rmqha: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except AdapterError as exc:
        print(f"rmqha: adapter error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # a reader that stopped early (| head): quiet, as a process the pipe's signal ends
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        except (OSError, ValueError):  # stdout is no file (captured, replaced): nothing to quieten
            pass
        return 141
    except OSError as exc:  # the file system refused after the flags' checks (a full disk, a path gone since)
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"rmqha: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rmqha: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # python -m cli.main
    sys.exit(main())
