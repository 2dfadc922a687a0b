"""confirmOffset: the end of what consumers may see.

Consumers see only messages below confirmOffset, so a message that a later failover
may truncate is never delivered.

* Master: ``min(maxOffset, acks of the members of local | proposed)``. If some member
  (other than the master) has no connection, or a connection that has not reported an
  ack yet (-1), the value stays where it was: its replica may lack what the others
  acked (#6662, #6728). An ack of 0 (a member whose log is empty) counts.

  Decision (docs/controller.md, "confirmOffset"): the note, like upstream
  ``AutoSwitchHAService.computeConfirmOffset``, *skips* acks <= 0 instead; the
  controller stack showed that this moves confirmOffset past the log of an in-sync
  member that has just (re)connected or whose log is empty, breaking the note's own
  invariant, so consumers may read what a failover to that member loses. That rule is
  the mutant ``confirm-offset-skips-unacked-member``.
* Slave: ``min(confirmOffset from the master's transfer header, own maxOffset)``, the
  rule the slave applies to each transfer header (one definition:
  ``spec.truncation.replication.slave_confirm_offset``, re-exported here).
"""
from __future__ import annotations

import enum
from typing import Mapping

import attrs

from spec.truncation import replication as _replication


class ConfirmOutcome(enum.Enum):
    COMPUTED = "COMPUTED"
    MEMBER_NOT_CONNECTED = "MEMBER_NOT_CONNECTED"  # kept where it was


@attrs.frozen(slots=True)
class ConfirmDecision:
    outcome: ConfirmOutcome
    confirm_offset: int
    unconnected: tuple[int, ...] = ()


def compute_master_confirm_offset(
    max_offset: int,
    sync_state_set: frozenset[int],
    master_id: int,
    acks: Mapping[int, int],
    current_confirm_offset: int,
) -> ConfirmDecision:
    """``computeConfirmOffset``; ``sync_state_set`` is local | proposed, ``acks`` the ack
    offset of every open connection by slave id."""
    unconnected = tuple(sorted(m for m in sync_state_set if m != master_id and acks.get(m, -1) < 0))
    if unconnected:
        return ConfirmDecision(ConfirmOutcome.MEMBER_NOT_CONNECTED, current_confirm_offset, unconnected)
    confirm = max_offset
    for slave_id, ack in acks.items():
        if slave_id in sync_state_set:
            confirm = min(confirm, ack)
    return ConfirmDecision(ConfirmOutcome.COMPUTED, confirm)


slave_confirm_offset = _replication.slave_confirm_offset  # the slave's rule has one definition


def dispatch_end(confirm_offset: int, max_offset: int) -> int:
    """How far the consume queue may be built: up to confirmOffset, never past the log."""
    return min(confirm_offset, max_offset)


def recovered_dispatch_end(confirm_offset: int, max_offset: int) -> int:
    """After a restart the consume queue is rebuilt up to the recovered confirmOffset
    too, not to the end of the log (building past it was #6609)."""
    return dispatch_end(confirm_offset, max_offset)
