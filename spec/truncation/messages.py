"""The messages and the observation of a broker replica (adapter protocol node kind
``replica``; docs/adapter-protocol.md): the HA connection between the replicas of a set
(``AutoSwitchHAClient`` / ``AutoSwitchHAConnection``), the roles the harness assigns in
the truncation scenario, a client's writes and their acknowledgements.

The ``broker`` node kind (controller mode) speaks the same HA messages between its
replicas, with a ``MessageTag`` as each message's id.
"""
from __future__ import annotations

import enum
from typing import Any, Optional

import attrs

from spec.truncation.epoch_file import EpochEntry, EpochFile
from spec.truncation.replication import Message as LogMessage
from spec.truncation.replication import TransferHeader

MESSAGE_SIZE = 10  # bytes of commitlog a message takes, unless said otherwise (the model's unit)

# ------------------------------------------------------------------ roles and writes (from the harness)


@attrs.frozen(slots=True)
class BecomeMaster:
    """``changeToMaster(epoch)``: the harness (the controller's part) names this replica master."""

    epoch: int


@attrs.frozen(slots=True)
class BecomeSlave:
    """``changeToSlave(master, epoch)``."""

    master: str
    epoch: int


@attrs.frozen(slots=True)
class ClientWrite:
    """A client write; it is acknowledged once every replica of the set holds it
    (allAckInSyncStateSet over the whole set: the truncation scenario's setting)."""

    id: str  # unique message id


@attrs.frozen(slots=True)
class WriteAcknowledged:
    """The reply to a ``ClientWrite`` (to ``client``) once every replica of the set holds it."""

    id: str


# ------------------------------------------------------------------ the HA connection


@attrs.frozen(slots=True)
class HandshakeRequest:
    epoch: int
    # Controller mode: who the slave is (the master maps connections to SyncStateSet ids).
    broker_id: Optional[int] = None
    async_learner: bool = False


@attrs.frozen(slots=True)
class HandshakeResponse:
    epoch: int
    max_offset: int
    entries: tuple[EpochEntry, ...]

    @classmethod
    def of_master(cls, epoch: int, max_offset: int, epoch_file: EpochFile) -> "HandshakeResponse":
        """A master's answer to a slave's handshake of its epoch: its max offset and every epoch entry."""
        return cls(epoch, max_offset, epoch_file.entries)


@attrs.frozen(slots=True)
class SlaveReport:
    """The slave's max offset (its ack), sent after the handshake and after each batch."""

    epoch: int
    max_offset: int


@attrs.frozen(slots=True)
class TransferBatch:
    epoch: int  # the master's epoch (connection identity)
    header: TransferHeader
    messages: tuple[LogMessage, ...]
    ids: tuple[Any, ...]  # each message's id: a string, or a broker's MessageTag


# What a master sends on the HA connection a slave opens with its HandshakeRequest (the
# master never connects to a slave): its answer and batches reach only the slave's life
# that opened it. A master that writes to a slave restarted since writes to a dead
# connection (reference.simulator's ``on_receivers_connection``); else the slave's new life,
# still empty, took the old connection's next batch wherever it started, as an empty
# slave takes a first batch (``on_transfer_header``), and held a log with a hole.
# (The slave's reports are not bound likewise: a slave whose master restarted would
# notice only by upstream's housekeeping timeout, which the model leaves out; a report
# that reaches the master's next life is taken as on a new connection.)
ON_SLAVES_CONNECTION = frozenset({HandshakeResponse, TransferBatch})

# A slave's reports are a stream of offsets the master reads from the connection in order
# (upstream's AutoSwitchHAConnection takes the latest as the slave's ack): the network
# neither duplicates nor reorders them (reference.simulator's ``in_order``). Over TCP a
# report cannot come late; a late copy taken as the ack would lower confirmOffset.
IN_ORDER_ON_SLAVES_CONNECTION = frozenset({SlaveReport})


# ------------------------------------------------------------------ what the monitor observes


class ReplicaRole(enum.Enum):
    NONE = "NONE"
    MASTER = "MASTER"
    SLAVE = "SLAVE"


class SlaveState(enum.Enum):
    READY = "READY"
    HANDSHAKE = "HANDSHAKE"
    TRANSFER = "TRANSFER"


@attrs.frozen(slots=True)
class ReplicaView:
    node_id: str
    role: ReplicaRole
    epoch: int
    max_offset: int
    flushed: int
    epoch_file: EpochFile
    log: tuple[tuple[int, int, str], ...]  # (offset, epoch, id)
    confirm_offset: int
    slave_state: Optional[SlaveState]
    acks: tuple[tuple[str, int], ...]  # master: slave -> acked offset
    # (master, transfer_from, outcome, master_max) of the latest handshake decision
    last_handshake: Optional[tuple[str, int, str, int]]
