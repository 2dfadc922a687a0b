"""Argument types and the parser class every ``rmqha`` command shares.

A flag's value is checked where argparse reads it, so a bad one is the same one line
and exit status 2 as any other bad input, before anything starts (Spark, a process,
a directory).
"""
from __future__ import annotations

import argparse

MAX_SEED = 2**63 - 1  # seeds are int64 in the results tables


class Parser(argparse.ArgumentParser):
    """argparse, with bad usage reported in one line (the usage is one ``--help`` away)."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        tool = self.prog.split()[0]
        self.exit(2, f"{tool}: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


def whole(lo: int, hi: int | None = None, what: str = "a whole number"):
    """An argparse ``type``: an int from ``lo`` (to ``hi``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < lo or (hi is not None and value > hi):
            bound = f"from {lo:,} to {hi:,}" if hi is not None else f"of at least {lo:,}"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} {bound}")
        return value

    parse.__name__ = what  # argparse names the type in some messages
    return parse


POSITIVE = whole(1)
NON_NEGATIVE = whole(0)
SEED = whole(0, MAX_SEED, "a seed")
