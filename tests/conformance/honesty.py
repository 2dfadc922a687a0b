"""A conformance test judges the implementation it names, or it does not run.

With ``pytest tests/conformance --adapter SPEC`` naming an implementation other than
rmqha's own (``reference``, ``mutant:NAME``):

* a test that does not take the implementation (the ``adapter``, ``implementation`` or
  ``node_kinds`` fixture) checks rmqha itself (a mutant is caught, a command works):
  it is skipped with that reason, so no pass is credited to the implementation;
* a test that does take it must not run rmqha's reference nodes in place of the
  implementation: every reference node built in this process during the test (DLedger,
  broker replica, controller-mode broker, controller, classic broker) is counted, and one of a role
  the adapter gives to an implementation under test fails the test. (Roles the adapter
  leaves to the reference, as in ``--adapter broker=stdio:...``, may run it.) To judge
  the reference through the protocol, use ``stdio:rmqha serve-stdio``: it runs in its
  own process.

tests/conformance/conftest.py and tests/fixtures/dishonest/conftest.py install these
hooks; tests/conformance/test_honesty.py proves they catch a test that cheats.
"""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from conformance.targets import ROLES, is_reference, split_roles
from reference.broker_replica import BrokerReplica
from reference.classic_broker import ClassicBroker
from reference.controller_broker import ControllerModeBroker
from reference.controller_node import ControllerNode
from reference.dledger_node import DLedgerNode

ADAPTER_FIXTURES = frozenset({"adapter", "implementation", "node_kinds"})
# reference node class -> the roles it plays (a class built inside another is not counted)
REFERENCE_NODES = {
    DLedgerNode: ("dledger", "raft"),
    BrokerReplica: ("broker",),
    ControllerModeBroker: ("broker",),
    ControllerNode: ("controller",),
    ClassicBroker: ("broker",),
}
SELF_TEST = ("checks rmqha itself, not the implementation under test (it takes no --adapter): "
             "not run for a foreign --adapter")


def roles_under_test(spec: str) -> frozenset[str]:
    """The roles ``--adapter SPEC`` gives to an implementation other than rmqha's reference."""
    roles = split_roles(spec)
    if roles is None:
        return frozenset() if is_reference(spec) else frozenset(ROLES)
    return frozenset(r for r, s in roles.items() if not is_reference(s))


def skip_self_tests(config, items, under: Path) -> None:
    """``pytest_collection_modifyitems``: skip the tests under ``under`` that take no adapter."""
    if not roles_under_test(config.getoption("--adapter")):
        return
    for item in items:
        if Path(str(item.fspath)).is_relative_to(under) and not ADAPTER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.skip(reason=SELF_TEST))


class _Counter:
    """Counts the outermost reference nodes built while installed (nested ones are parts)."""

    def __init__(self):
        self.built: list[type] = []
        self._depth = threading.local()

    def wrap(self, cls):
        original = cls.__init__
        counter = self

        def __init__(node, *args, **kwargs):
            depth = getattr(counter._depth, "n", 0)
            if depth == 0:
                counter.built.append(cls)
            counter._depth.n = depth + 1
            try:
                original(node, *args, **kwargs)
            finally:
                counter._depth.n = depth

        return __init__


def judge_the_adapter_it_names(item):
    """``pytest_runtest_call`` wrapper: fail a test that takes the implementation but runs
    the reference in its place (the test's call fails, so it is never counted a pass)."""
    spec = item.config.getoption("--adapter")
    under_test = roles_under_test(spec)
    if not under_test or not ADAPTER_FIXTURES & set(item.fixturenames):
        return (yield)
    counter = _Counter()
    originals = {cls: cls.__init__ for cls in REFERENCE_NODES}
    for cls in REFERENCE_NODES:
        cls.__init__ = counter.wrap(cls)
    try:
        result = yield
    finally:
        for cls, original in originals.items():
            cls.__init__ = original
    cheated = sorted({cls.__name__ for cls in counter.built if set(REFERENCE_NODES[cls]) & under_test})
    if cheated:
        pytest.fail(f"{item.nodeid} ran rmqha's reference ({', '.join(cheated)}) in place of "
                    f"--adapter {spec!r}: a conformance test must judge the implementation it names",
                    pytrace=False)
    return result
