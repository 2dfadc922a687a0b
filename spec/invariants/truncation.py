"""Invariants of the truncation scenario (broker replicas under failovers).

Pure predicates over replica views (``reference.broker_replica.ReplicaView``-shaped
records: duck-typed here so that spec/ does not import reference/).

| name | what must hold |
|---|---|
| prefix-agreement | after every handshake, the slave's log equals its master's below the consistent point |
| epoch-file-well-formed | epochs and start offsets strictly increase |
| positions-covered | every message below a replica's max offset lies in one of its epoch entries |
| acknowledged-not-lost | every message acknowledged by the whole set is in the current master's log, at its offset |
| handshake-progress | a handshake finds a consistent point whenever one exists: the slave's log is a prefix of its master's (existence); otherwise an operator must wipe the slave, which the scenario reports as the finding ``no_consistent_point`` |
| slave-catches-up | after a failover on a healthy set (every replica up, a clean network) that stays healthy, each slave's log is its master's once the master has written nothing new for the bound, unless its handshake with that master found no consistent point (the finding above) |
| write-acknowledged | on the same condition, once every slave holds the master's log, each write the master took since that failover has been acknowledged |
"""
from __future__ import annotations

import bisect
from typing import Iterable, Mapping

from spec.invariants import Violation
from spec.truncation.epoch_file import covered, well_formed

INVARIANTS: dict[str, str] = {
    "prefix-agreement": "after every handshake the slave's log equals the master's below the consistent point",
    "epoch-file-well-formed": "epochs and start offsets strictly increase",
    "positions-covered": "every position below the max offset maps to an epoch entry",
    "acknowledged-not-lost": "no message acknowledged by the whole set is lost",
    "handshake-progress": "a handshake finds a consistent point whenever the slave's log is a prefix of the master's",
    "slave-catches-up": "after a failover on a healthy set, each slave holds its master's log once the master is quiet",
    "write-acknowledged": "after a failover on a healthy set, once every slave holds the master's log, its writes are acknowledged",
}


def check_prefix_agreement(slave, master, point: int) -> Violation | None:
    """``slave`` just truncated to ``point`` against ``master``'s log."""
    mine = [(o, i) for o, _, i in slave.log if o < point]
    theirs = [(o, i) for o, _, i in master.log if o < point]
    if mine != theirs[: len(mine)]:
        at = next(o for (o, i), x in zip(mine, theirs) if (o, i) != x) if any(
            a != b for a, b in zip(mine, theirs)) else (mine[len(theirs)][0] if len(mine) > len(theirs) else point)
        return Violation("prefix-agreement",
                         f"{slave.node_id} kept a log that differs from master {master.node_id}'s at offset {at} "
                         f"(consistent point {point})", slave.node_id)
    return None


def check_epoch_file(view) -> Violation | None:
    if not well_formed(view.epoch_file):
        return Violation("epoch-file-well-formed", f"{view.node_id} epoch file {view.epoch_file.render()}",
                         view.node_id)
    return None


def check_positions_covered(view) -> Violation | None:
    ranges = covered(view.epoch_file)
    starts = [start for start, _ in ranges]
    for offset, _, _ in view.log:
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0 or offset >= ranges[i][1]:  # no entry covers it: find_entry_by_offset finds none
            return Violation("positions-covered",
                             f"{view.node_id} holds a message at {offset} that no epoch entry covers "
                             f"({view.epoch_file.render()})", view.node_id)
    return None


def check_acknowledged(master, acknowledged: Mapping[str, int]) -> Violation | None:
    """``acknowledged``: message id -> offset, for messages the whole set acknowledged."""
    have = {o: i for o, _, i in master.log}
    for message_id, offset in acknowledged.items():
        if have.get(offset) != message_id:
            return Violation("acknowledged-not-lost",
                             f"master {master.node_id} (epoch {master.epoch}) lacks acknowledged message "
                             f"{message_id} at {offset}", master.node_id)
    return None


def log_is_prefix(slave, master) -> bool:
    """The slave's log, message by message and offset by offset, begins the master's."""
    mine = [(o, i) for o, _, i in slave.log]
    theirs = [(o, i) for o, _, i in master.log]
    return mine == theirs[: len(mine)]


def check_handshake_progress(view, master) -> tuple[Violation | None, Violation | None]:
    """(violation, finding) for ``view``'s latest handshake against ``master``'s view.

    No consistent point although the slave's log is a prefix of the master's breaks
    existence: a violation. No consistent point otherwise (the master never held the
    slave's epochs, as after a failover to a replica that copied none of them) is what
    the note asks the suite to report, not hide: the slave cannot go on until an
    operator wipes it. That is a finding, not a violation.
    """
    if view.last_handshake is None or view.last_handshake[2] != "NO_CONSISTENT_POINT":
        return None, None
    what = (f"no consistent point against {view.last_handshake[0]} "
            f"({view.epoch_file.render()}, max {view.max_offset})")
    if log_is_prefix(view, master):
        return Violation("handshake-progress", f"{view.node_id} found {what}, although its log is a prefix of the "
                                               f"master's", view.node_id), None
    return None, Violation("no-consistent-point", f"{what}: the logs diverge, an operator must wipe it", view.node_id)


def holds_masters_log(view, master) -> bool:
    """The replica's log is its master's, message by message and offset by offset."""
    return view.max_offset == master.max_offset and log_is_prefix(view, master)


def check_slave_caught_up(view, master, quiet_ms: int) -> Violation | None:
    """Liveness, asked by the harness of each replica but the master when a failover was
    made on a healthy set (every replica up, a clean network), the set stayed healthy, and
    the master's log has not changed for ``quiet_ms``: the replica's log is the master's,
    message by message (``view`` None: down, not asked). Excused: a slave whose handshake
    with this master found no consistent point (``check_handshake_progress``'s finding:
    it waits for an operator). Without this, a slave that never hand-shakes or never
    appends breaks no other property of the scenario."""
    if view.last_handshake is not None and view.last_handshake[0] == master.node_id \
            and view.last_handshake[2] == "NO_CONSISTENT_POINT":
        return None
    if holds_masters_log(view, master):
        return None
    return Violation("slave-catches-up", f"{view.node_id} holds {view.max_offset} (role {view.role.name}), "
                                         f"master {master.node_id} {master.max_offset}, {quiet_ms} ms after the "
                                         f"master's last write on a healthy set", view.node_id)


def check_writes_acknowledged(master, written: Iterable[str], acknowledged: Mapping[str, int]) -> Violation | None:
    """Liveness, asked with ``check_slave_caught_up``'s condition once every slave holds the
    master's log: each write in ``written`` (those the master was sent since the failover)
    that its log holds has been acknowledged (``acknowledged``: id -> offset). Without this
    a master that never acknowledges breaks no other property."""
    held = {i for _, _, i in master.log}
    missing = sorted(i for i in written if i in held and i not in acknowledged)
    if not missing:
        return None
    return Violation("write-acknowledged", f"master {master.node_id} holds {', '.join(missing[:5])}"
                                           f"{' ...' if len(missing) > 5 else ''} on every replica, unacknowledged",
                     master.node_id)


def replica_checks(view) -> Iterable[Violation]:
    for check in (check_epoch_file, check_positions_covered):
        found = check(view)
        if found is not None:
            yield found
