"""rmqha's DLedger node judged as a Raft node (the raft scenario's reference) breaks
Raft's commit-monotonic and follower-progress by DLedger's design: the report shows them
as known differences of what the implementation's hello declares ("profiles": {"raft":
"dledger-0.4"}), and the verdict does not count them; a generic Raft (PySyncObj) gets no
such allowance."""
import json

from cli.main import main
from conformance.fingerprint import describe_adapter, raft_known_differences
from spec.invariants.dledger import NOT_PROMISED_AS_RAFT


def test_the_raft_scenarios_reference_shows_commit_monotonic_as_a_known_difference(tmp_path, capsys):
    # seed 2, sampled: a compare matches below entries that agree, the TRUNCATE drops a
    # committed entry and the follower's commit index follows its log down
    code = main(["check", "--scenario", "raft", "--runs", "1", "--seed", "2", "--no-search", "--no-shrink",
                 "--no-spark", "--quiet", "--out", str(tmp_path / "r"), "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "conformant (1 runs, no property violated but the known difference commit-monotonic)" in out
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    (cell,) = [m for m in summary["matrix"] if m["property"] == "commit-monotonic"]
    assert cell["cell"] == "fail" and cell["known_profile_difference"], cell
    assert "FAIL 1/1" in (tmp_path / "rep" / "report.md").read_text()
    (manifest,) = (tmp_path / "r").glob("*/manifest.json")
    assert json.loads(manifest.read_text())["adapters"]["reference"]["known_differences"] == list(NOT_PROMISED_AS_RAFT)


def test_only_raft_nodes_declared_as_dledger_nodes_get_dledger_differences():
    assert describe_adapter("pysyncobj", "raft", None)["known_differences"] == []
    assert raft_known_differences({"dledger": "dledger-0.4"}) == []  # its raft nodes are not said to be DLedger's
    assert raft_known_differences({"raft": "dledger-0.4"}) == ["commit-monotonic", "follower-progress"]


def test_a_follower_re_truncated_by_a_duplicated_truncate_is_a_known_difference(tmp_path, capsys):
    # seed 60026, sampled: a duplicated TRUNCATE reaches n3 after it acknowledged later
    # entries, and its leader's progress for it goes back (DLedger's handleDoTruncate;
    # tests/scenarios/raft/dledger-duplicated-truncate-drops-acknowledged-entries.rmqha)
    code = main(["check", "--scenario", "raft", "--runs", "1", "--seed", "60026", "--no-search", "--no-shrink",
                 "--no-spark", "--quiet", "--out", str(tmp_path / "r"), "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no property violated but the known difference follower-progress" in out
