"""Abstract protocol states of a group of broker replicas (the epoch file, the HA
handshake and transfer): what the search's coverage counts in the ``truncation``
scenario (conformance/search.py).

An abstract state forgets replica names, offsets and message ids, and keeps what
``change_to_master``, ``slave_handshake``, ``on_transfer_header`` and the master's
acknowledgement decide on. Per live replica:

| component | values |
|---|---|
| role | ``M`` master, ``S`` slave, ``N`` none (restarted, not yet told a role) |
| flush | ``d`` everything written is flushed, ``u`` a tail is not (a crash loses it) |
| link | a master: ``none`` (no slave reported), ``lag`` (a slave's ack is below its end), ``acked``; a slave: ``-`` (no connection state), ``r`` (ready to handshake), ``h`` (handshake sent), ``t`` (transferring); none: ``-`` |
| epoch | its role's epoch against the group's current one (the last failover's): ``cur``, ``old`` |
| epochs | its epoch file against the reference's, entry by entry (epoch, start offset): ``0`` (its file is empty), ``same``, ``behind`` (a prefix of the reference's), ``ahead`` (the reference's is a prefix of it), ``fork`` (they part after a common entry), ``none`` (no first entry in common); all but ``0`` and ``same`` with how many entries of the longer file lie past the common ones, ``1`` or ``2+`` (``none1``: each file holds a single, different entry): how far back ``slave_handshake`` must look for a consistent point |
| log | its log against the reference log, entry by entry (offset, epoch, message): ``same``, ``prefix``, ``longer``, ``fork`` (another entry at a position both hold) |

The reference log is the current master's when it is live and acts as master of the
current epoch, else the longest live log. A step's state adds what the replica handled,
how many live replicas act as masters (0, 1, 2+: an old master beside a new one) and the
network (``clean``, ``cut``, ``lossy``), e.g. ``Su/t/cur/behind1/prefix|TransferBatch|masters=1|lossy``.
"""
from __future__ import annotations

from typing import Mapping, Optional

from spec.truncation.messages import ReplicaRole, ReplicaView, SlaveState

ROLES = {ReplicaRole.MASTER: "M", ReplicaRole.SLAVE: "S", ReplicaRole.NONE: "N"}
FLUSH = ("d", "u")
MASTER_LINKS = ("none", "lag", "acked")
SLAVE_LINKS = ("-", "r", "h", "t")
SLAVE_STATES = {None: "-", SlaveState.READY: "r", SlaveState.HANDSHAKE: "h", SlaveState.TRANSFER: "t"}
EPOCHS = ("cur", "old")
EPOCH_FILE_RELATIONS = ("0", "same") + tuple(f"{r}{d}" for r in ("behind", "ahead", "fork", "none") for d in ("1", "2+"))
LOG_RELATIONS = ("same", "prefix", "longer", "fork")


def log_relation(log: ReplicaView, reference: ReplicaView) -> str:
    """How ``log``'s entries stand to ``reference``'s: equal, one a prefix of the other, or
    another entry at a position both hold."""
    mine, theirs = log.log, reference.log
    common = min(len(mine), len(theirs))
    if mine[:common] != theirs[:common]:
        return "fork"
    if len(mine) == len(theirs):
        return "same"
    return "prefix" if len(mine) < len(theirs) else "longer"


def epoch_file_relation(view: ReplicaView, reference: ReplicaView) -> str:
    """``view``'s epoch file against the reference's (see the module's docstring)."""
    mine, theirs = view.epoch_file.entries, reference.epoch_file.entries
    if not mine:
        return "0"
    common = 0
    while common < min(len(mine), len(theirs)) and mine[common] == theirs[common]:
        common += 1
    if common == len(mine) == len(theirs):
        return "same"
    past = max(len(mine), len(theirs)) - common
    distance = "1" if past == 1 else "2+"
    if common == len(mine):
        return "behind" + distance
    if common == len(theirs):
        return ("ahead" if common else "none") + distance  # (an empty reference file: no entry in common)
    return ("fork" if common else "none") + distance


def link(view: ReplicaView) -> str:
    """A master's slaves (by their acks), or a slave's connection state."""
    if view.role is ReplicaRole.MASTER:
        if not view.acks:
            return "none"
        return "acked" if all(ack >= view.max_offset for _, ack in view.acks) else "lag"
    if view.role is ReplicaRole.SLAVE:
        return SLAVE_STATES[view.slave_state]
    return "-"


def replica_state(view: ReplicaView, reference: ReplicaView, current_epoch: int) -> str:
    """One live replica's abstract state, e.g. ``Md/acked/cur/same/same`` or ``Su/h/old/fork1/fork``."""
    flush = "d" if view.flushed >= view.max_offset else "u"
    epoch = "cur" if view.epoch >= current_epoch else "old"
    return (f"{ROLES[view.role]}{flush}/{link(view)}/{epoch}/{epoch_file_relation(view, reference)}/"
            f"{log_relation(view, reference)}")


def reference_of(views: Mapping[str, Optional[ReplicaView]], master: Optional[str],
                 current_epoch: int) -> Optional[ReplicaView]:
    """The log the others are related to (see the module's docstring); None: none is live."""
    own = views.get(master) if master is not None else None
    if own is not None and own.role is ReplicaRole.MASTER and own.epoch == current_epoch:
        return own
    live = [v for v in views.values() if v is not None]
    if not live:
        return None
    return max(live, key=lambda v: (v.max_offset, v.node_id))


def group_state(views: Mapping[str, Optional[ReplicaView]], master: Optional[str],
                current_epoch: int) -> Mapping[str, Optional[str]]:
    """Every replica's own state (None: down), the part of a step's state that only the
    replicas' views decide: the same for every step until a view changes."""
    reference = reference_of(views, master, current_epoch)
    if reference is None:
        return {n: None for n in views}
    return {n: None if v is None else replica_state(v, reference, current_epoch) for n, v in views.items()}


def state_of_step(own: Optional[str], event: str, masters: int, network: str) -> Optional[str]:
    """The abstract state a replica's step reached (None: the replica is down)."""
    if own is None:
        return None
    return f"{own}|{event}|masters={min(2, masters)}|{network}"


def every_replica_state() -> tuple[str, ...]:
    """Every replica state ``replica_state`` can produce (the universe the report checks reached)."""
    links = {"M": MASTER_LINKS, "S": SLAVE_LINKS, "N": ("-",)}
    return tuple(f"{role}{f}/{k}/{e}/{ef}/{log}"
                 for role in ROLES.values() for f in FLUSH for k in links[role] for e in EPOCHS
                 for ef in EPOCH_FILE_RELATIONS for log in LOG_RELATIONS)
