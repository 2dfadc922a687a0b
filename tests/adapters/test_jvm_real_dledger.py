"""The real openmessaging DLedger elector, at handler level and in time, through JPype.

Runs when a real build is given, the same way as to every command: ``pytest
tests/adapters/test_jvm_real_dledger.py --adapter jvm:dledger[=PROFILE]:CLASSPATH`` (or
``$RMQHA_DLEDGER_JAR`` with ``--adapter jvm:dledger``, or alone). The profile it is judged
against is the declared one, else the one its version claims (docs/adapters.md). CI has
no such build: the recorded transcripts of real builds are replayed instead
(tests/dledger/test_timing_transcript.py).
"""
import os

import pytest
from hypothesis import given

from adapters import resolve
from adapters.jvm_dledger import DLEDGER_ENV, MAINTAINER_BEAT_CASES
from conformance.differential import compare
from conformance.fingerprint import TIME_ONLY_HEARTBEAT, fingerprint
from conformance.strategies import ARGUMENTS
from spec.dledger.profiles import PROFILES
from tests.reference.test_node_timing import _acts

OPERATIONS = ("dledger.handle_vote", "dledger.handle_heartbeat", "dledger.heartbeat_round", "dledger.candidate_round")


def _spec(config) -> str | None:
    given_spec = config.getoption("--adapter")
    if given_spec.startswith("jvm:dledger"):
        return given_spec
    return "jvm:dledger" if os.environ.get(DLEDGER_ENV) else None


pytestmark = pytest.mark.jvm


@pytest.fixture(scope="module")
def dledger(request):
    spec = _spec(request.config)
    if spec is None:
        pytest.skip(f"no real DLedger build: give --adapter jvm:dledger[=PROFILE]:CLASSPATH or ${DLEDGER_ENV}")
    adapter = resolve(spec)
    if "dledger" not in adapter.info.profiles:
        pytest.skip(f"{spec}: version {adapter.info.version} claims no profile; declare one (jvm:dledger=PROFILE:...)")
    return adapter


def test_hello_declares_the_handlers_and_rounds_it_drives(dledger):
    assert dledger.info.implementation == "openmessaging-dledger"
    assert dledger.info.operations == frozenset(OPERATIONS)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_the_real_elector_agrees_with_the_spec(dledger, operation):
    @given(ARGUMENTS[operation])
    def agrees(args):
        found = compare(dledger, operation, args)
        assert found is None, found.render()

    agrees()


def test_the_fingerprint_names_the_judged_profile_in_time_too(dledger):
    profile = dledger.info.profiles["dledger"]
    matches = fingerprint(dledger, 300)
    for probe in ("dledger.handle_vote", "dledger.handle_heartbeat", "dledger.heartbeat_round",
                  TIME_ONLY_HEARTBEAT, "dledger.candidate_round"):
        assert profile in matches[probe], (probe, matches[probe])


def test_the_reference_node_keeps_the_real_maintainers_beat(dledger):
    """The build's own StateMaintainer, looping on the virtual clock, starts rounds, times
    out and campaigns at the instants a reference node of the judged profile does
    (tests/transcripts/dledger/maintainer-beat.json holds these answers for CI)."""
    profile = PROFILES[dledger.info.profiles["dledger"]]
    for case in MAINTAINER_BEAT_CASES:
        assert dledger.server.maintainer_acts(case) == _acts(profile, case), case
