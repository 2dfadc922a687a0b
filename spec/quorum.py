"""Majority quorum, as DLedger's ``MemberState.isQuorum`` and Raft count it."""


def quorum_size(peer_size: int) -> int:
    """Smallest majority of ``peer_size`` peers (self included): 1→1, 2→2, 3→2, 4→3, 5→3."""
    return peer_size // 2 + 1


def is_quorum(count: int, peer_size: int) -> bool:
    return count >= peer_size // 2 + 1
