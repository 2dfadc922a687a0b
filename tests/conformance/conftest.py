"""Fixtures of the conformance suite: the implementation under test (``--adapter``)."""
import pytest

from adapters import resolve


@pytest.fixture(scope="session")
def implementation(adapter):
    """The connected adapter for ``--adapter`` (handshake done, capabilities known)."""
    return resolve(adapter)


@pytest.fixture(scope="session")
def node_kinds(implementation) -> frozenset:
    """The node kinds the implementation runs (``dledger``, ``raft``)."""
    return implementation.info.nodes


def require_nodes(node_kinds: frozenset, kind: str, implementation) -> None:
    """Skip, reported as not applicable, when the implementation has no ``kind`` nodes."""
    if kind not in node_kinds:
        pytest.skip(f"not applicable: {implementation.info.implementation} runs no {kind} nodes")
