"""What a controller-mode broker node is told when it is created (adapter protocol node
kind ``broker``, docs/adapter-protocol.md)."""
from __future__ import annotations

import attrs

from spec.broker.records import DEFAULT_HA_CONFIG, BrokerHAConfig

MAX_ELECTION_PRIORITY = 2**31 - 1  # Integer.MAX_VALUE: the lowest priority (upstream's default)


@attrs.frozen(slots=True)
class BrokerNodeConfig:
    """``BrokerConfig``/``MessageStoreConfig`` of one broker of a set in controller mode."""

    cluster_name: str
    broker_name: str
    controllers: tuple[str, ...]  # the controller nodes it registers with and heartbeats
    ha: BrokerHAConfig = DEFAULT_HA_CONFIG
    async_learner: bool = False
    election_priority: int = MAX_ELECTION_PRIORITY
