"""Fidelity in time: the recorded answers of real DLedger builds, replayed against the spec.

``tests/transcripts/dledger/rounds-<version>.jsonl.gz`` were recorded by running the real
``DLedgerLeaderElector`` of each release on a virtual clock (``rmqha transcript record
--adapter jvm:dledger:<build>``, docs/dledger.md "Timing"): one leader heartbeat round or
one candidate round per call, the peers' replies given with the times they arrive. No jar
is needed here: every recorded decision, timestamp and random range must be what the
spec computes under the release's profile, so a change to a rule or to the timing model
(the rounds in ``spec/dledger/rounds.py`` and the waits in ``Profile.timing``) that
breaks fidelity fails here.
"""
from pathlib import Path

import pytest

from conformance.transcript import load, replay
from spec.dledger.candidate import CandidateAction
from spec.dledger.heartbeat import HeartbeatRoundOutcome
from spec.dledger.profiles import PROFILES
from spec.dledger.records import ParseResult

TRANSCRIPTS = sorted((Path(__file__).parents[1] / "transcripts" / "dledger").glob("rounds-*.jsonl.gz"))
ROUNDS = ("dledger.heartbeat_round", "dledger.candidate_round")


def test_every_profile_has_a_recorded_release():
    profiles = {load(p)[0]["profile"] for p in TRANSCRIPTS}
    assert profiles == set(PROFILES)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_the_real_rounds_are_the_specs(path):
    r = replay(path)
    assert set(r.calls) == set(ROUNDS) and all(n >= 100 for n in r.calls.values())
    assert r.agreed, "\n".join(m.render() for m in r.mismatches[:3])
    # the recording itself compared every sampled call: all of them agreed
    for op, a in r.header["agreement"].items():
        assert a["agreed"] == a["asked"] >= 10_000, op


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_the_transcript_reaches_every_outcome_and_timing_path(path):
    paths = replay(path).paths
    heartbeat = " ".join(paths["dledger.heartbeat_round"])
    for outcome in HeartbeatRoundOutcome:
        assert outcome.value in heartbeat, outcome
    for how in ("not sent", "one-node", "latch opened", "timed out"):
        assert how in heartbeat, how
    campaign = " ".join(paths["dledger.candidate_round"])
    for action in CandidateAction:
        assert action.value in campaign, action
    for result in ParseResult:
        assert result.value in campaign, result
    for how in ("one-node", "latch opened", "timed out"):
        assert how in campaign, how


def _transcript(version: str) -> Path:
    return next(p for p in TRANSCRIPTS if p.name == f"rounds-{version}.jsonl.gz")


def _returns_at(op: str, canonical) -> int:
    return canonical[1] if op == "dledger.heartbeat_round" else canonical[0]


@pytest.mark.parametrize("version,other", [("0.2.7", "dledger-0.4"), ("0.4.0", "dledger-0.2"),
                                           ("0.1", "dledger-0.2"), ("0.2.7", "dledger-0.1")])
def test_another_releases_timing_is_caught(version, other):
    """The replay can fail: judged against another release's profile, the recorded rounds end at other times."""
    r = replay(_transcript(version), other)
    assert any(_returns_at(m.op, m.got) != _returns_at(m.op, m.expected) for m in r.mismatches)


def test_0_2_and_0_4_differ_in_time_alone():
    """Heartbeat rounds with no higher term in sight (H-A and H-B agree on the rows) still tell
    0.2 from 0.4: 0.4 waits 10 ms less on its latch, then sleeps 10 ms counting what arrives."""
    from adapters.operations import OPERATIONS

    op = OPERATIONS["dledger.heartbeat_round"]
    differ = 0
    for e in load(_transcript("0.2.7"))[1]:
        if e.op != op.name or any(r.response is not None and r.response.term > e.args["member"].curr_term
                                  for r in e.args["replies"]):
            continue
        as_02, as_04 = op.spec("dledger-0.2", **e.args), op.spec("dledger-0.4", **e.args)
        assert op.canonical(e.answer) == op.canonical(as_02)
        if as_02.returns_at != as_04.returns_at:
            differ += 1
            # 10 ms later (the sleep after the latch), or less when 0.4's shorter latch times out first
            assert 0 < as_04.returns_at - as_02.returns_at <= PROFILES["dledger-0.4"].timing.heartbeat_result_wait_ms
    assert differ >= 20
