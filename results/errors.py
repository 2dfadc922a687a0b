"""The results layer's own error: a campaign directory that cannot be read or written.

``results`` imports no other rmqha package (campaigns write it, reports read it), so
it cannot share ``adapters.errors.UserError``; the CLI treats ``ResultsError`` the same
way: one line on stderr, exit status 2.
"""


class ResultsError(Exception):
    """A missing, corrupt or mismatched campaign directory (bad input: exit 2).

    The message fits on one line and names the offending file, chunk or field.
    """

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
