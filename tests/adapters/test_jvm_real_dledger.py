"""The real openmessaging DLedger elector, at handler level, through JPype.

Runs only when ``RMQHA_DLEDGER_JAR`` points at a DLedger jar and its dependencies
(``io.openmessaging.storage:dledger`` from Maven Central plus slf4j-api; see
docs/adapters.md). ``RMQHA_DLEDGER_PROFILE`` names the profile the jar is expected to
match (default ``dledger-0.4``: DLedger 0.4.0, RocketMQ 5.x). CI has no such jar: the
JPype transport itself is tested with shims compiled by javac (test_other_languages.py).
"""
import os

import pytest
from hypothesis import HealthCheck, given, settings

from adapters import resolve
from conformance.differential import compare
from conformance.fingerprint import fingerprint
from conformance.strategies import ARGUMENTS

JAR = os.environ.get("RMQHA_DLEDGER_JAR")
PROFILE = os.environ.get("RMQHA_DLEDGER_PROFILE", "dledger-0.4")
pytestmark = [pytest.mark.jvm, pytest.mark.skipif(not JAR, reason="RMQHA_DLEDGER_JAR is not set")]


@pytest.fixture(scope="module")
def dledger():
    return resolve(f"jvm:dledger={PROFILE}")


def test_hello_declares_the_handlers_it_drives(dledger):
    assert dledger.info.implementation == "openmessaging-dledger"
    assert dledger.info.operations == frozenset({"dledger.handle_vote", "dledger.handle_heartbeat"})


@pytest.mark.parametrize("operation", ["dledger.handle_vote", "dledger.handle_heartbeat"])
def test_the_real_elector_agrees_with_the_spec(dledger, operation):
    @settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
    @given(ARGUMENTS[operation])
    def agrees(args):
        found = compare(dledger, operation, args)
        assert found is None, found.render()

    agrees()


def test_the_fingerprint_names_the_expected_profile(dledger):
    matches = fingerprint(dledger, 300)
    assert PROFILE in matches["dledger.handle_vote"] and PROFILE in matches["dledger.handle_heartbeat"]
