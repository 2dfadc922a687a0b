"""The outcome of a handler-level answer, as a short label to count.

The differential tests print, per operation, how many generated inputs ended in each
outcome (pytest's terminal summary), so a generator that never reaches an outcome is
visible. A decision's outcome is its named result (``outcome``, ``result``, ``code``,
``kind``), refined by the table row that decided where the spec names one (``row``,
``check``); answers that are plain values are classified by what they did to their input
(an epoch file changed or not, a commit index advanced or not, a lookup found or not).
"""
from __future__ import annotations

import enum
from typing import Any

from spec.truncation.epoch_file import EpochFile

_NAMED = ("outcome", "result", "code", "kind")
_ROWS = ("row", "check")


def _label(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _same_or_changed(before: Any, after: Any) -> str:
    return "unchanged" if after == before else "changed"


def _classified(name: str, args: dict, answer: Any) -> str | None:
    """Outcomes of operations whose answer is a plain value."""
    if name == "dledger.leader_commit_index":
        return "advanced" if answer > args["committed_index"] else "unchanged"
    if name == "truncation.find_consistent_point":
        return "none" if answer < 0 else "found"
    if name == "truncation.append":
        _, how = answer
        return _label(how)
    if isinstance(answer, EpochFile):
        return _same_or_changed(args["epoch_file"], answer)
    if name in ("truncation.find_entry_by_offset", "truncation.find_entry_by_epoch", "truncation.next_entry"):
        return "none" if answer is None else "found"
    if name == "controller.apply_event":
        return f"{type(args['event']).__name__}:{_same_or_changed(args['metadata'], answer)}"
    if name == "controller.on_broker_heartbeat":
        return "new_entry" if len(answer.entries) > len(args["table"].entries) else "updated"
    if name == "controller.scan_not_active_broker":
        return "expired" if answer[1] else "none_expired"
    if name == "controller.handle":
        return f"{type(args['request']).__name__}:{answer.response.code.name}" + (
            f"/{answer.check}" if answer.check else "")
    if name == "broker.maybe_shrink":
        return "/".join(sorted({why for _, why in answer.removed})) or "unchanged"
    if name == "classic.on_connect":
        return "connected"
    if name.startswith("dledger.") and name.endswith("_round") and hasattr(answer, "role_changes"):
        head = _label(getattr(answer, "outcome", None) or getattr(answer, "action", None) or "no_round")
        return head + ("/role_change" if answer.role_changes else "")
    return None


def outcome(name: str, args: dict, answer: Any) -> str:
    """The label ``answer`` to ``name(**args)`` is counted under."""
    found = _classified(name, args, answer)
    if found is not None:
        return found
    if isinstance(answer, enum.Enum) or isinstance(answer, bool):
        return _label(answer)
    head = next((getattr(answer, f) for f in _NAMED if getattr(answer, f, None) is not None), None)
    if head is None and hasattr(answer, "response"):
        head = getattr(answer.response, "code", None)
    row = next((getattr(answer, f) for f in _ROWS if getattr(answer, f, "")), "")
    if head is None:
        return row or type(answer).__name__
    return _label(head) + (f"/{row}" if row and row != _label(head) else "")

