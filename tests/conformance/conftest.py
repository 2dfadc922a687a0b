"""Fixtures of the conformance suite: the implementation under test (``--adapter``), and
the rule that every test here judges the implementation it names (tests/conformance/honesty.py)."""
from collections import Counter
from pathlib import Path

import pytest

from adapters import resolve
from conformance.errors import NotApplicable
from conformance.targets import check_applicable, split_roles
from tests.conformance.honesty import judge_the_adapter_it_names, skip_self_tests

HERE = Path(__file__).parent


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from judge_the_adapter_it_names(item))


def pytest_collection_modifyitems(config, items):
    skip_self_tests(config, items, HERE)


@pytest.fixture(scope="session")
def implementation(adapter):
    """The connected adapter for ``--adapter`` (handshake done, capabilities known)."""
    roles = split_roles(adapter)
    specs = set(roles.values()) if roles is not None else {adapter}
    if len(specs) != 1:
        pytest.skip(f"not applicable: handler-level tests judge one implementation, not {adapter!r}")
    return resolve(specs.pop())


@pytest.fixture(scope="session")
def node_kinds(implementation) -> frozenset:
    """The node kinds the implementation runs (``dledger``, ``raft``, ``replica``, ``broker``, ``controller``)."""
    return implementation.info.nodes


def require_scenario(adapter: str, scenario: str) -> None:
    """Skip, reported as not applicable (with the reason), when ``adapter`` cannot run ``scenario``."""
    try:
        check_applicable(scenario, adapter)
    except NotApplicable as exc:
        pytest.skip(str(exc))


def require_nodes(node_kinds: frozenset, kind: str, implementation) -> None:
    """Skip, reported as not applicable, when the implementation has no ``kind`` nodes."""
    if kind not in node_kinds:
        pytest.skip(f"not applicable: {implementation.info.implementation} runs no {kind} nodes")


class KnownDepartures:
    """Disagreements explained by a known upstream departure, counted per adapter and operation."""

    def __init__(self):
        self.seen: dict[tuple[str, str, str], int] = {}
        self.example: dict[tuple[str, str, str], str] = {}

    def record(self, adapter: str, operation: str, disagreement) -> None:
        key = (adapter, operation, disagreement.departure.label())
        self.seen[key] = self.seen.get(key, 0) + 1
        self.example.setdefault(key, disagreement.render())

    def lines(self) -> list[str]:
        return [f"{adapter}: {operation}: {n} answer(s) reproduce {label}"
                for (adapter, operation, label), n in sorted(self.seen.items())]


_DEPARTURES = KnownDepartures()


@pytest.fixture(scope="session")
def known_departures() -> KnownDepartures:
    return _DEPARTURES


class OutcomeCounts:
    """Per handler-level operation, how many judged inputs ended in each outcome of the spec."""

    def __init__(self):
        self.seen: dict[str, Counter] = {}

    def record(self, operation: str, label: str) -> None:
        self.seen.setdefault(operation, Counter())[label] += 1

    def lines(self) -> list[str]:
        return [f"{operation}: " + ", ".join(f"{label} {n}" for label, n in sorted(counts.items()))
                for operation, counts in sorted(self.seen.items())]


_OUTCOMES = OutcomeCounts()


@pytest.fixture(scope="session")
def outcome_counts() -> OutcomeCounts:
    return _OUTCOMES


def pytest_terminal_summary(terminalreporter):
    if _DEPARTURES.seen:
        terminalreporter.section("known upstream departures (conformance/departures.py)")
        for line in _DEPARTURES.lines():
            terminalreporter.write_line(line)
    if _OUTCOMES.seen:
        terminalreporter.section("handler-level outcomes reached, per operation (conformance/outcomes.py)")
        for line in _OUTCOMES.lines():
            terminalreporter.write_line(line)
