"""rmqha's DLedger node judged against dledger-0.1 livelocks where release-0.1 does
(spec.invariants.dledger.known_profile_difference: liveness): the report shows the
failure as a known difference of the profile and the verdict does not count it."""
import json

from cli.main import main


def test_release_0_1_livelock_is_a_known_difference_of_its_profile(tmp_path, capsys):
    # seed 50056, sampled: nodes with a shorter log keep pushing the up-to-date ones' vote
    # time back (tests/scenarios/dledger/livelock-0.1-stale-candidates-push-back-up-to-date-nodes.rmqha)
    code = main(["check", "--scenario", "dledger", "--profile", "dledger-0.1", "--runs", "1", "--seed", "50056",
                 "--no-search", "--no-shrink", "--no-spark", "--quiet", "--out", str(tmp_path / "r"),
                 "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "conformant (1 runs, no property violated but the known difference liveness)" in out
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    (cell,) = [m for m in summary["matrix"] if m["property"] == "liveness"]
    assert cell["cell"] == "fail" and cell["known_profile_difference"], cell
