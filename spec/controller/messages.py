"""What a controller node is told when it is created (adapter protocol node kind
``controller``, docs/adapter-protocol.md)."""
from __future__ import annotations

import attrs

from spec.controller.records import DEFAULT_CONFIG, ControllerConfig


@attrs.frozen(slots=True)
class ControllerNodeConfig:
    """The profile a controller node is judged under and its ``ControllerConfig``."""

    profile: str = "rocketmq-5.1"
    config: ControllerConfig = DEFAULT_CONFIG
