"""Rendering collated report data (no Spark): the three outputs, the replay files, the
incomplete-campaign notice, and the report directory's atomic, careful replacement."""
import json

import pytest

from reports import render as render_module
from reports.errors import ReportError
from reports.render import check_out_dir, render

TRACE = "".join(json.dumps(e) + "\n" for e in [
    {"kind": "send", "time": 0, "src": "n1", "dst": "n2", "msg": "VoteRequest"},
    {"kind": "deliver", "time": 3, "src": "n1", "dst": "n2", "msg": "VoteRequest"},
    {"kind": "crash", "time": 4, "node": "n2"},
])


def cell(adapter, prop, kind, runs=10, violations=0):
    return {"adapter": adapter, "implementation": "impl", "property": prop, "cell": kind, "runs": runs,
            "violations": violations, "errors": 0, "not_applicable": 0, "rate": violations / runs,
            "upper95": 0.3, "known_profile_difference": False}


@pytest.fixture()
def data():
    adapters = {a: {"adapter": a, "implementation": "impl", "implementation_version": "1", "profile": "dledger-0.4",
                    "scenario": "dledger", "runs": 10, "pass": 10 - f, "fail": f, "error": 0}
                for a, f in (("reference", 0), ("mutant:double-vote", 2))}
    return {
        "manifest": {"campaign": "c1", "rmqha_version": "0.1.0", "schema_version": 1, "created": "now",
                     "spec": {"runs": 10, "adapters": list(adapters)},
                     "adapters": {a: {"fingerprint_text": "handle_vote: dledger-0.4", "fingerprint": {}}
                                  for a in adapters}},
        "adapters": adapters,
        "matrix": [cell("reference", "election-safety", "pass"), cell("reference", "liveness", "not_applicable"),
                   cell("mutant:double-vote", "election-safety", "fail", violations=2),
                   cell("mutant:double-vote", "liveness", "not_applicable")],
        "scenarios": [{"adapter": "reference", "scenario": "dledger", "profile": "dledger-0.4", "fault_mix": "crash",
                       "group_size": 3, "runs": 10, "fail": 0, "error": 0, "mean_steps": 100.0,
                       "mean_simulated_s": 40.0, "mean_elections": 1.5, "mean_leader_changes": 0.5, "max_term": 3,
                       "mean_wall_ms": 50.0}],
        "distributions": [{"metric": "failover_ms", "title": "failover time", "unit": "ms",
                           "rows": [{"adapter": "reference", "n": 9, "mean": 300.0, "min": 100.0, "p50": 280.0,
                                     "p90": 500.0, "p99": 600.0, "max": 610.0}],
                           "histogram": {"reference": ([100.0, 200.0, 300.0], [2, 5, 2])}}],
        "coverage": [{"adapter": "reference", "procedure": "handle_vote", "outcome": "ACCEPT", "count": 12},
                     {"adapter": "reference", "procedure": "handle_vote", "outcome": "REJECT_TAKING_LEADERSHIP",
                      "count": 0}],
        "mutants": [{"mutant": "double-vote", "runs": 10, "failed_runs": 2, "killed": True,
                     "by": ["election-safety"]}],
        "counterexamples": [{"adapter": "mutant:double-vote", "seed": 7, "property": "election-safety",
                             "message": "two leaders in term 2", "script": "scenario dledger\nnodes n1 n2 n3\n",
                             "trace_jsonl": TRACE, "original_steps": 30, "shrunk_steps": 4}],
        "totals": {"runs": 20, "fail": 2, "error": 0},
        "completeness": {"complete": True, "committed_chunks": 2, "planned_chunks": 2, "planned_runs": 20,
                         "resume": "rmqha run --resume --out results"},
    }


def test_report_md_html_summary_and_replay_files(data, tmp_path):
    out = render(data, tmp_path / "report")
    md = (out / "report.md").read_text()
    for text in ("## Implementation x property", "pass 0/10", "FAIL 2/10", "n/a", "Never hit: "
                 "`handle_vote:REJECT_TAKING_LEADERSHIP`", "| double-vote ", "killed",
                 "Replay: `rmqha replay counterexamples/mutant-double-vote-election-safety-seed7.rmqha`"):
        assert text in md
    assert "Incomplete campaign" not in md
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and 'src="img/' not in html  # self-contained
    assert "<table>" in html
    summary = json.loads((out / "summary.json").read_text())
    assert summary["never_hit"] == ["reference handle_vote:REJECT_TAKING_LEADERSHIP"]
    assert summary["completeness"]["complete"] is True
    assert [m["cell"] for m in summary["matrix"]] == ["pass", "not_applicable", "fail", "not_applicable"]
    replay = out / "counterexamples" / "mutant-double-vote-election-safety-seed7.rmqha"
    assert replay.read_text().startswith("scenario dledger")
    assert sorted(p.name for p in (out / "img").iterdir()) == [
        "failover_ms.png", "mutant-double-vote-election-safety-seed7.rmqha.png"]


def test_a_report_of_an_incomplete_campaign_says_how_to_finish_it(data, tmp_path):
    data["completeness"].update(complete=False, committed_chunks=1)
    md = (render(data, tmp_path / "report") / "report.md").read_text()
    assert "**Incomplete campaign**: 1 of 2 planned chunks committed (20 of 20 runs)" in md
    assert "`rmqha run --resume --out results`" in md


def test_a_new_report_replaces_the_previous_one(data, tmp_path):
    out = render(data, tmp_path / "report")
    (out / "img" / "stale.png").write_bytes(b"old")
    data["counterexamples"] = []
    render(data, out)
    assert not (out / "img" / "stale.png").exists()
    assert list((out / "counterexamples").iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no temporary or old copy left


def test_a_failed_build_leaves_the_previous_report_untouched(data, tmp_path, monkeypatch):
    out = render(data, tmp_path / "report")
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def broken_dump(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(render_module.json, "dumps", broken_dump)  # fails after md, html and images
    with pytest.raises(OSError):
        render(data, out)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


@pytest.mark.parametrize(
    "setup, accepted",
    [
        ("missing", True),
        ("empty", True),
        ("previous-report", True),
        ("foreign-files", False),
        ("report-plus-foreign", False),
        ("only-images", False),  # not recognisably a report: no report.md and summary.json
        ("a-file", False),
    ],
)
def test_which_report_directories_may_be_replaced(tmp_path, setup, accepted):
    out = tmp_path / "out"
    if setup == "a-file":
        out.write_text("x")
    elif setup != "missing":
        out.mkdir()
    if setup in ("previous-report", "report-plus-foreign"):
        for name in ("report.md", "report.html", "summary.json"):
            (out / name).write_text("x")
        (out / "img").mkdir()
    if setup in ("foreign-files", "report-plus-foreign"):
        (out / "thesis.tex").write_text("x")
    if setup == "only-images":
        (out / "img").mkdir()
    if accepted:
        assert check_out_dir(out) == out.resolve()
    else:
        with pytest.raises(ReportError):
            check_out_dir(out)


@pytest.mark.parametrize(
    "rate, text",
    [(None, "–"), (0.0, "0.00%"), (0.2305, "23.05%"), (0.001, "0.10%"), (1.2e-5, "0.0012%"), (3.4567e-7, "0.000035%")],
)
def test_percentages_keep_their_significant_digits(rate, text):
    assert render_module._pct(rate) == text


def test_a_cell_over_a_million_runs_shows_its_tiny_bound(data, tmp_path):
    data["matrix"][0].update(runs=1_000_000, upper95=3.84e-6)
    md = (render(data, tmp_path / "report") / "report.md").read_text()
    assert "pass 0/1,000,000 ≤0.00038%" in md
