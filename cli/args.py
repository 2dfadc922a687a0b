"""Argument types and the parser class every ``rmqha`` command shares.

A flag's value is checked where argparse reads it, so a bad one is the same one line
and exit status 2 as any other bad input, before anything starts (Spark, a process,
a directory).
"""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

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


def stream_name(text: str) -> str:
    """An argparse ``type``: a name of the search's random stream (letters, digits, ``-``,
    ``_``; up to 32)."""
    if not text or len(text) > 32 or not all(c.isascii() and (c.isalnum() or c in "-_") for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a stream name (1 to 32 letters, digits, '-' or '_')")
    return text


class Named(argparse.Action):
    """Store the value and note that the user named it (``<dest>_named``): a default and
    the same value given on the command line can mean different things."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_named", True)


def plain_name(text: str) -> str:
    """An argparse ``type``: a name that is one path component (a campaign's directory
    under ``--out``): no separator, not ``.`` or ``..``, no control character; up to 100."""
    if (not text or len(text) > 100 or text in (".", "..") or not text.isprintable()
            or any(sep in text for sep in ("/", os.sep, os.altsep) if sep)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a plain name (one path component, no '/' or '..', "
                                         f"up to 100 characters)")
    return text


POSITIVE = whole(1)
# inputs drawn per operation (fingerprint, transcript record): the recorded transcripts drew
# 20,000; every sample is drawn and held before the first is asked, so a typo of 10^14 grew
# memory for ever with nothing to show
MAX_SAMPLES = 1_000_000
SAMPLES = whole(1, MAX_SAMPLES)
NON_NEGATIVE = whole(0)
SEED = whole(0, MAX_SEED, "a seed")


def _takes_new_entries(path: Path, text: str) -> None:
    """Refuse ``text`` unless the nearest directory that exists on ``path``'s way can take a
    new entry: tried with an empty directory made and removed at once (permission bits
    alone do not say it: root may write under them, /proc and read-only mounts refuse
    anyone), so a campaign does not run for minutes to fail at its first write."""
    while not path.exists() and path != path.parent:
        path = path.parent
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {str(path)!r} is not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".rmqha-probe-", dir=path))
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: cannot write in {str(path)!r} ({exc.strerror or exc})") from None


def output_dir(text: str) -> str:
    """An argparse ``type``: a directory rmqha may create or write into."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
    _takes_new_entries(path, text)
    return text


def output_file(text: str) -> str:
    """An argparse ``type``: a file rmqha may create (its directory too) or replace."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file name")
    if path.exists() and os.access(path, os.W_OK):
        return text  # replaced, or written through (/dev/stdout): its directory need not take entries
    _takes_new_entries(path.parent, text)
    return text
