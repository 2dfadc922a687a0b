"""Errors that reach the user as one line and a non-zero exit status."""


class UserError(Exception):
    """Bad input from the user: a malformed file, a missing directory, a bad flag.

    The CLI prints ``rmqha: error: <message>`` and exits with ``exit_code`` (2).
    The message must fit on one line and name the offending thing (file, case, field).
    """

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class AdapterError(Exception):
    """An implementation under test crashed, hung or answered garbage.

    Campaigns record it as an ``error`` verdict with the offending exchange; the CLI
    turns an unhandled one into a one-line error and exit status 3.
    """

    exit_code = 3

    def __init__(self, message: str, exchange: str | None = None):
        super().__init__(" ".join(str(message).split()))
        self.exchange = exchange


class NotApplicable(UserError):
    """The implementation does not offer what a scenario or test needs (a node kind, an
    operation): nothing can be judged. Reported as *not applicable* with the reason, never
    as a pass and never by running something else in its place."""

    def __init__(self, reason: str):
        super().__init__(f"not applicable: {reason}")
        self.reason = " ".join(str(reason).split())


class ImplementationFailed(AdapterError):
    """The implementation answered a call with an ``internal`` error: its code threw.

    Still an implementation error; the differential may recognise it as a known
    departure (upstream throws where the spec answers, ``conformance/departures.py``).
    """
