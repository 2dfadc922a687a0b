"""Errors that reach the user as one line and a non-zero exit status."""
from typing import Any

QUOTED_LIMIT = 200  # characters of a value an error quotes back (a file's token, a field)
LINE_LIMIT = 2_000  # characters of a whole error line, whatever it quotes


def quoted(value: Any, limit: int = QUOTED_LIMIT) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters with '…' and
    the full length: a message echoes what it refuses, and that can be megabytes (a
    100 MB field, a 5 MB token on one line of a script)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def one_line(message: Any) -> str:
    """``message`` on one line, no longer than ``LINE_LIMIT``: the head and the tail kept
    (the tail often says what was wanted), the middle cut. A safety net for values quoted
    without ``quoted``."""
    text = str(message)
    if len(text) > 4 * LINE_LIMIT:  # before splitting: the words of 100 MB cost seconds
        text = text[:LINE_LIMIT] + " … " + text[-LINE_LIMIT:]
    text = " ".join(text.split())
    if len(text) > LINE_LIMIT:
        text = text[:LINE_LIMIT * 3 // 4] + " … " + text[-LINE_LIMIT // 4:]
    return text


class UserError(Exception):
    """Bad input from the user: a malformed file, a missing directory, a bad flag.

    The CLI prints ``rmqha: error: <message>`` and exits with ``exit_code`` (2).
    The message must fit on one line and name the offending thing (file, case, field).
    """

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(one_line(message))


class AdapterError(Exception):
    """An implementation under test crashed, hung or answered garbage.

    Campaigns record it as an ``error`` verdict with the offending exchange; the CLI
    turns an unhandled one into a one-line error and exit status 3.
    """

    exit_code = 3

    def __init__(self, message: str, exchange: str | None = None):
        super().__init__(one_line(message))
        self.exchange = exchange


class NotApplicable(UserError):
    """The implementation does not offer what a scenario or test needs (a node kind, an
    operation): nothing can be judged. Reported as *not applicable* with the reason, never
    as a pass and never by running something else in its place."""

    def __init__(self, reason: str):
        super().__init__(f"not applicable: {reason}")
        self.reason = one_line(reason)


class ImplementationFailed(AdapterError):
    """The implementation answered a call with an ``internal`` error: its code threw.

    Still an implementation error; the differential may recognise it as a known
    departure (upstream throws where the spec answers, ``conformance/departures.py``).
    """
