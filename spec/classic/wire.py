"""What crosses the wire in a classic group: the HA connection, producers, the operator.

These are the messages of the adapter protocol's ``classic`` node kind
(docs/adapter-protocol.md), so the scenario reads an implementation's frames and
reports exactly as it reads the reference's. A connection is TCP: ``HAOpen`` (the
slave connects), ``HAAccept``, then an ordered stream of ``HAStream`` segments (each
carrying a ``SlaveReport`` one way or a ``TransferFrame`` the other, numbered from 0 per
direction), and ``HAReset`` when either side closes it or receives a segment for a
connection it does not know.
"""
from __future__ import annotations

from typing import Union

import attrs

from spec.classic.records import DEFAULT_CONFIG, BrokerRole, ClassicConfig, PutMessageStatus, SlaveReport, TransferHeader


@attrs.frozen(slots=True)
class ClassicNodeConfig:
    """What a broker is created with: the operator's configuration file."""

    role: BrokerRole
    master: str | None = None  # haMasterAddress, for a slave
    config: ClassicConfig = DEFAULT_CONFIG  # broker_role is overridden by ``role``
    profile: str = "rocketmq-4.9.3"


@attrs.frozen(slots=True)
class Put:
    """A producer's message of ``size`` bytes (src ``client``)."""

    msg_id: str
    size: int = 64
    wait_store_msg_ok: bool = True


@attrs.frozen(slots=True)
class PutResult:
    """The answer to a producer (dst ``client``): where the message went and its status."""

    msg_id: str
    status: PutMessageStatus
    start: int = -1
    end: int = -1


@attrs.frozen(slots=True)
class Reconfigure:
    """The operator edits the broker's role (and master address) and restarts it
    gracefully: everything is flushed, connections close, in-memory HA state resets."""

    role: BrokerRole
    master: str | None = None


@attrs.frozen(slots=True)
class CleanFiles:
    """The commitlog cleaner deletes every file but the last ``keep``."""

    keep: int


@attrs.frozen(slots=True)
class TransferFrame:
    header: TransferHeader
    body: bytes = b""


@attrs.frozen(slots=True)
class HAOpen:
    conn: str


@attrs.frozen(slots=True)
class HAAccept:
    conn: str


@attrs.frozen(slots=True)
class HAStream:
    conn: str
    seq: int
    payload: Union[SlaveReport, TransferFrame]


@attrs.frozen(slots=True)
class HAReset:
    conn: str


@attrs.frozen(slots=True)
class MasterConnectionView:
    """One slave's connection on the master's side."""

    conn: str
    slave: str
    slave_request_offset: int
    slave_ack_offset: int
    next_transfer_from_where: int


@attrs.frozen(slots=True)
class ClientConnectionView:
    """The slave's connection to its master (``connected``: past the TCP handshake)."""

    conn: str
    connected: bool
    current_reported_offset: int


@attrs.frozen(slots=True)
class ClassicView:
    """What the scenario observes of a broker after every activation."""

    node_id: str
    role: BrokerRole
    master: str | None
    min_offset: int
    max_offset: int
    flushed: int
    data: bytes  # the commitlog bytes from min_offset
    push2_slave_max_offset: int
    connections: tuple[MasterConnectionView, ...] = ()
    client: ClientConnectionView | None = None
