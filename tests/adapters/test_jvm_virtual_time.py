"""rmqha's virtual clock for real DLedger builds (adapters/java/VirtualTime.java), checked in CI.

CI has no DLedger build, so this drives the harness with a stand-in of DLedger's shape
(tests/fixtures/java/fake_dledger/, rmqha's own code, deliberately simple decisions),
compiled here with javac: the clock only moves while the elector waits, a latch wait
ends at the reply that opens it or at its timeout, a sleep counts every reply due by its
end, random values are the call's and their bounds are reported, the RPC service is
never reached, the server is built without its constructor, the version comes from
pom.properties, and no store directory is left behind. The real releases are checked
against the spec by the recorded transcripts (tests/dledger/test_timing_transcript.py).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from adapters import resolve
from adapters.jvm_dledger import MAINTAINER_BEAT_CASES, build_version
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import PROFILES
from spec.dledger.records import HeartBeatResponse, ParseResult, ResponseCode, Role, VoteRequest, VoteResponse, VoteResult
from spec.dledger.rounds import CandidateState, DrawUse, HeartbeatReply, LeaderTimes, RoundDraws, VoteReply
from tests.reference.test_node_timing import _acts

FAKE = Path(__file__).parents[1] / "fixtures" / "java" / "fake_dledger"
NOW = 1_000_000
pytestmark = [pytest.mark.jvm,
              pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")]


def _build(root: Path, version: str) -> Path:
    out = root / f"fake-{version}"
    subprocess.run(["javac", "-d", str(out), *map(str, FAKE.rglob("*.java"))], check=True, capture_output=True)
    pom = out / "META-INF" / "maven" / "io.openmessaging.storage" / "dledger"
    pom.mkdir(parents=True)
    (pom / "pom.properties").write_text(f"groupId=io.openmessaging.storage\nartifactId=dledger\nversion={version}\n")
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("fake-dledger")
    return {v: _build(root, v) for v in ("0.4.0", "0.2.7")}


@pytest.fixture(scope="module")
def fake(builds):
    return resolve(f"jvm:dledger:{builds['0.4.0']}")


def leader(n=3):
    return MemberView("n1", frozenset(f"n{i}" for i in range(1, n + 1)), 5, "n1", "n1", Role.LEADER)


OK = HeartBeatResponse(-1, ResponseCode.SUCCESS)


def test_the_version_comes_from_pom_properties_and_claims_a_profile(builds, fake):
    assert build_version([str(builds["0.4.0"])]) == "0.4.0"
    assert (fake.info.version, fake.info.profiles, fake.info.claims, fake.info.declared) == (
        "0.4.0", {"dledger": "dledger-0.4"}, {"dledger": "dledger-0.4"}, {})
    assert fake.info.judged_against("dledger") == "judged against dledger-0.4, which the build claims (version 0.4.0)"


def test_a_declared_profile_is_the_one_judged_against(builds):
    other = resolve(f"jvm:dledger=dledger-0.2:{builds['0.4.0']}")
    assert other.info.profiles == {"dledger": "dledger-0.2"}
    assert other.info.judged_against("dledger") == ("judged against dledger-0.2 (declared in the adapter spec); "
                                                    "the build claims dledger-0.4 (version 0.4.0)")


def test_two_builds_in_one_process_keep_their_own_classes(builds, fake):
    older = resolve(f"jvm:dledger:{builds['0.2.7']}")
    assert (older.info.version, fake.info.version) == ("0.2.7", "0.4.0")


NEVER_ = -1


def _heartbeat(fake, replies, n=3):
    return fake.invoke("dledger.heartbeat_round", {"member": leader(n), "now": NOW, "times": LeaderTimes(NEVER_, NEVER_),
                                                   "replies": tuple(replies)})


def test_a_latch_wait_ends_at_the_reply_that_opens_it_then_the_sleep_passes(fake):
    r = _heartbeat(fake, [HeartbeatReply("n3", 700, OK), HeartbeatReply("n2", 30, OK)])
    assert (r.sent, r.returns_at, r.times) == (True, NOW + 40, LeaderTimes(NOW, NOW + 40))


def test_a_latch_wait_times_out_and_a_reply_during_the_sleep_still_arrives(fake):
    r = _heartbeat(fake, [HeartbeatReply("n2", 1995, OK)])
    assert (r.returns_at, r.times.last_succ_heartbeat_time) == (NOW + 2000, NOW + 2000)
    r = _heartbeat(fake, [HeartbeatReply("n2", 2001, OK)])
    assert (r.returns_at, r.times.last_succ_heartbeat_time) == (NOW + 2000, NEVER_)


def test_failed_and_missing_replies(fake):
    r = _heartbeat(fake, [HeartbeatReply("n2", 5, None)])
    assert r.returns_at == NOW + 2000 and r.times.last_succ_heartbeat_time == NEVER_


def _campaign(fake, replies, draws):
    member = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, None, None, Role.CANDIDATE)
    return fake.invoke("dledger.candidate_round", {"member": member, "now": NOW, "state": CandidateState(),
                                                   "replies": tuple(replies), "draws": draws})


def test_random_values_are_the_calls_and_their_bounds_are_reported(fake):
    r = _campaign(fake, [], RoundDraws(vote_wait=123, vote_interval=45))
    assert r.returns_at == NOW + 2000 + 123
    assert r.draws == (DrawUse("vote_wait", 1000), DrawUse("vote_interval", 700))
    assert (r.state.last_vote_cost, r.state.last_parse_result) == (2123, ParseResult.WAIT_TO_REVOTE)
    assert r.state.next_time_to_request_vote == NOW + 2123 + 300 + 45
    r = _campaign(fake, [VoteReply("n2", 250, VoteResponse(5, VoteResult.ACCEPT))], RoundDraws(0, 0))
    assert (r.returns_at, r.state.last_parse_result, r.draws) == (NOW + 250, ParseResult.PASSED,
                                                                  (DrawUse("vote_wait", 1000),))


def test_a_value_outside_the_releases_range_is_an_error_naming_it(fake):
    from adapters.errors import AdapterError

    with pytest.raises(AdapterError, match=r"outside the release's range \[0, 700\)"):
        _campaign(fake, [], RoundDraws(vote_wait=0, vote_interval=700))


def test_the_server_is_asked_without_its_constructor(fake):
    member = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5)
    d = fake.invoke("dledger.handle_vote", {"member": member, "request": VoteRequest(7, "n2", 3, 3, group="other"),
                                            "self_vote": False})
    assert (d.result, d.reply_term, d.code) == (VoteResult.UNKNOWN, 7, ResponseCode.UNKNOWN_GROUP)


def _store_dirs() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("rmqha-dledger-")}


def test_no_store_directory_is_left_behind(builds):
    before = _store_dirs()
    adapter = resolve(f"jvm:dledger:{builds['0.4.0']}", fresh=True)
    assert len(_store_dirs() - before) == 1
    adapter.close()  # says bye
    assert _store_dirs() - before == set()
    # never closed, in a process of its own: removed when that process exits
    code = ("from adapters import resolve; import sys; "
            f"a = resolve({'jvm:dledger:' + str(builds['0.4.0'])!r}, fresh=True); print(a.server.dir)")
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert Path(made).name.startswith("rmqha-dledger-") and not Path(made).exists()
    assert _store_dirs() - before == set()


def test_the_maintainer_beat_recorder_as_docs_run_it(builds):
    """docs/dledger.md's command that records maintainer-beat.json, from a fresh shell, on
    the stand-in (whose StateMaintainer runs as DLedger's: maintainState, then sleep(10)):
    one record of every case, answered at the stand-in's beat, as a dledger-0.4 node acts."""
    code = ("import json, sys; from adapters.jvm_dledger import record_maintainer_beat as r; "
            "print(json.dumps(r(sys.argv[2:], sys.argv[1]), indent=1))")
    out = subprocess.run([sys.executable, "-c", code, "the stand-in", f"jvm:dledger:{builds['0.4.0']}"],
                         capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]).stdout
    record = json.loads(out)
    assert record["source"] == "the stand-in" and [b["version"] for b in record["builds"]] == ["0.4.0"]
    cases = record["builds"][0]["cases"]
    assert [{k: v for k, v in c.items() if k != "acts_at"} for c in cases] == list(MAINTAINER_BEAT_CASES)
    acts = {(c["role"], c.get("reply_at", c.get("since"))): c["acts_at"] for c in cases}
    assert acts[("LEADER", 30)] == [0, 2010, 4020, 6030, 8040]  # returned at 40, runs 50 + 10 k, elapsed > 2000
    assert acts[("FOLLOWER", 1234)] == [4770] and acts[("CANDIDATE", 1235)] == [1240]
    for c in cases:
        assert c["acts_at"] == _acts(PROFILES["dledger-0.4"], c), c
