"""Errors that reach the user as one line and a non-zero exit status.

Defined in ``adapters.errors`` (the lowest layer that raises them) and re-exported here
for the conformance layer.
"""
from adapters.errors import AdapterError, NotApplicable, UserError, quoted

__all__ = ["AdapterError", "NotApplicable", "UserError", "quoted"]
