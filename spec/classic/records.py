"""Records of classic HA: configuration, roles, statuses and what crosses the wire."""
from __future__ import annotations

import enum

import attrs


class BrokerRole(enum.Enum):
    SYNC_MASTER = "SYNC_MASTER"
    ASYNC_MASTER = "ASYNC_MASTER"
    SLAVE = "SLAVE"

    @property
    def is_master(self) -> bool:
        return self is not BrokerRole.SLAVE


class FlushDiskType(enum.Enum):
    SYNC_FLUSH = "SYNC_FLUSH"
    ASYNC_FLUSH = "ASYNC_FLUSH"


class PutMessageStatus(enum.Enum):
    """The ``PutMessageStatus`` values of the classic write path."""

    PUT_OK = "PUT_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"  # the broker is a slave


@attrs.frozen(slots=True)
class ClassicConfig:
    """The ``MessageStoreConfig`` options classic HA reads, with upstream's defaults.

    ``ha_max_gap_not_in_sync`` is 4.x's ``haSlaveFallbehindMax`` (renamed in 5.0).
    """

    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    ha_send_heartbeat_interval_ms: int = 5_000
    ha_housekeeping_interval_ms: int = 20_000
    ha_transfer_batch_size: int = 32 * 1024
    ha_max_gap_not_in_sync: int = 256 * 1024 * 1024
    sync_flush_timeout_ms: int = 5_000
    slave_timeout_ms: int = 3_000
    in_sync_replicas: int = 1  # 5.x
    flush_interval_commit_log_ms: int = 500
    flush_commit_log_least_pages: int = 4
    flush_commit_log_thorough_interval_ms: int = 10_000
    os_page_size: int = 4 * 1024  # MappedFile.OS_PAGE_SIZE


DEFAULT_CONFIG = ClassicConfig()


@attrs.frozen(slots=True)
class TransferHeader:
    """The 12-byte header before each batch (``masterPhyOffset`` 8 bytes, ``bodySize`` 4).

    A header with ``body_size`` 0 is a heartbeat frame."""

    master_phy_offset: int
    body_size: int

    @property
    def is_heartbeat(self) -> bool:
        return self.body_size == 0


@attrs.frozen(slots=True)
class SlaveReport:
    """The slave's 8 bytes: its max offset. The first one on a connection is its
    request offset; every one is its ack."""

    offset: int
