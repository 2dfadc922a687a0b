"""The reports layer's own error: a report directory that cannot be used.

Reports import only ``results`` (a report is built where only the results are); the
CLI treats ``ReportError`` like every bad input: one line on stderr, exit status 2.
"""


class ReportError(Exception):
    """An unusable report directory (bad input: exit 2); the message is one line."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
