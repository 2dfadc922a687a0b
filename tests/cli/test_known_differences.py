"""Known differences are reported, not counted in the verdict.

rmqha's DLedger node judged as a Raft node (the raft scenario's reference) breaks Raft's
commit-monotonic and follower-progress by DLedger's design: the report shows them as known
differences of what the implementation's hello declares ("profiles": {"raft":
"dledger-0.4"}); a generic Raft (PySyncObj) gets no such allowance. And rmqha's DLedger
node judged against dledger-0.1 livelocks where release-0.1 does, and against dledger-0.2 a
candidate stays stuck where 0.2.3 .. 0.3.1.2 leave it (dledger #247)
(spec.invariants.dledger.known_profile_difference: liveness); under dledger-0.4 the same
run is judged in full."""
import json

from cli.main import main
from conformance.fingerprint import describe_adapter, raft_known_differences
from spec.invariants.dledger import NOT_PROMISED_AS_RAFT


def _check_one_sampled_run(tmp_path, capsys, *args) -> tuple[str, dict]:
    """``rmqha check`` of one sampled run, which must pass: its output and its report's summary."""
    code = main(["check", "--runs", "1", "--no-search", "--no-shrink", "--no-spark", "--quiet",
                 "--out", str(tmp_path / "r"), "--report", str(tmp_path / "rep"), *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return out, json.loads((tmp_path / "rep" / "summary.json").read_text())


def _known_failure(summary: dict, prop: str) -> bool:
    (cell,) = [m for m in summary["matrix"] if m["property"] == prop]
    return cell["cell"] == "fail" and cell["known_profile_difference"]


def test_the_raft_scenarios_reference_shows_commit_monotonic_as_a_known_difference(tmp_path, capsys):
    # seed 2, sampled: a compare matches below entries that agree, the TRUNCATE drops a
    # committed entry and the follower's commit index follows its log down
    out, summary = _check_one_sampled_run(tmp_path, capsys, "--scenario", "raft", "--seed", "2")
    assert "conformant (1 runs, no property violated but the known difference commit-monotonic)" in out
    assert _known_failure(summary, "commit-monotonic")
    assert "FAIL 1/1" in (tmp_path / "rep" / "report.md").read_text()
    (manifest,) = (tmp_path / "r").glob("*/manifest.json")
    assert json.loads(manifest.read_text())["adapters"]["reference"]["known_differences"] == list(NOT_PROMISED_AS_RAFT)


def test_only_raft_nodes_declared_as_dledger_nodes_get_dledger_differences():
    assert describe_adapter("pysyncobj", "raft", None)["known_differences"] == []
    assert raft_known_differences({"dledger": "dledger-0.4"}) == []  # its raft nodes are not said to be DLedger's
    assert raft_known_differences({"raft": "dledger-0.4"}) == ["commit-monotonic", "follower-progress"]


def test_a_follower_re_truncated_by_a_duplicated_truncate_is_a_known_difference(tmp_path, capsys):
    # seed 60204, sampled: a duplicated TRUNCATE reaches n2 after it acknowledged later
    # entries, and its leader's progress for it goes back (DLedger's handleDoTruncate;
    # tests/scenarios/raft/dledger-duplicated-truncate-drops-acknowledged-entries.rmqha)
    out, summary = _check_one_sampled_run(tmp_path, capsys, "--scenario", "raft", "--seed", "60204")
    assert "no property violated but the known difference follower-progress" in out
    assert _known_failure(summary, "follower-progress")


def test_release_0_1_livelock_is_a_known_difference_of_its_profile(tmp_path, capsys):
    # seed 50056, sampled: nodes with a shorter log keep pushing the up-to-date ones' vote time
    # back (tests/scenarios/dledger/livelock-0.1-stale-candidates-push-back-up-to-date-nodes.rmqha)
    out, summary = _check_one_sampled_run(tmp_path, capsys, "--scenario", "dledger", "--profile", "dledger-0.1",
                                          "--seed", "50056")
    assert "conformant (1 runs, no property violated but the known difference liveness)" in out
    assert _known_failure(summary, "liveness")


def test_release_0_2_stuck_candidate_is_a_known_difference_of_its_profile(tmp_path, capsys):
    # seed 108066, sampled: before 0.3.2 a leader with a heartbeat quorum ignores a higher term
    # (dledger #247), so a node in it stays a candidate (liveness) while the others keep the
    # leader (tests/scenarios/dledger/stuck-candidate-0.2-leader-with-quorum-ignores-its-higher-term.rmqha)
    out, summary = _check_one_sampled_run(tmp_path, capsys, "--scenario", "dledger", "--profile", "dledger-0.2",
                                          "--seed", "108066")
    assert "no property violated but the known difference" in out and "liveness" in out
    assert _known_failure(summary, "liveness")


def test_the_same_run_under_the_current_profile_is_no_known_difference(tmp_path, capsys):
    # the allowance is the profile's: under dledger-0.4 the same seed's run is judged in full, and passes
    code = main(["check", "--runs", "1", "--no-search", "--no-shrink", "--no-spark", "--quiet", "--scenario", "dledger",
          "--profile", "dledger-0.4", "--seed", "108066", "--out", str(tmp_path / "r"), "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "known difference" not in out and "conformant (1 runs, no property violated)" in out
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert not any(m["known_profile_difference"] for m in summary["matrix"])
