"""Rendering collated report data (no Spark): the three outputs, the replay files, the
incomplete-campaign notice, and the report directory's atomic, careful replacement."""
import json
import shlex

import attrs
import pytest

from cli.commands.run import campaign_spec_from
from cli.main import build_parser
from conformance.spark_campaign import CampaignSpec

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
                             "trace_jsonl": TRACE, "original_steps": 30, "shrunk_steps": 4, "shrunk": True}],
        "totals": {"runs": 20, "fail": 2, "error": 0},
        "completeness": {"complete": True, "committed_chunks": 2, "planned_chunks": 2, "planned_runs": 20,
                         "resume": "rmqha run --resume --out results"},
    }


def test_report_md_html_summary_and_replay_files(data, tmp_path):
    out = render(data, tmp_path / "report")
    md = (out / "report.md").read_text()
    for text in ("## Implementation x property", "pass 0/10", "FAIL 2/10", "n/a", "Never hit: "
                 "`handle_vote:REJECT_TAKING_LEADERSHIP`", "| double-vote ", "killed",
                 "counterexamples/mutant-double-vote-election-safety-seed7.rmqha --adapter mutant:double-vote`"):
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


@pytest.mark.parametrize("idle,said", [(100.0, True), (50.1, True), (50.0, False), (0.0, False), (None, False)])
def test_a_report_says_when_an_implementation_is_ticked_every_10_ms(data, tmp_path, idle, said):
    """Nodes that mostly answer without a next_deadline are ticked every 10 ms: the report
    says what answering it buys; at or below half, or with no answers, it says nothing."""
    data["distributions"].append({"metric": "answers_without_deadline_percent", "title": "t", "unit": "%",
                                  "rows": [{"adapter": "reference", "n": 10, "mean": idle, "min": idle, "p50": idle,
                                            "p90": idle, "p99": idle, "max": idle}], "histogram": {}})
    md = (render(data, tmp_path / "report") / "report.md").read_text()
    assert ("answers give no `next_deadline`" in md) is said
    if said:
        assert f"`reference`: {idle:.0f}% of its nodes' answers give no `next_deadline`" in md


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


# ------------------------------------------------------------------ what a reader sees first


def _adapter(runs, fail=0, error=0):
    return {"runs": runs, "pass": runs - fail - error, "fail": fail, "error": error}


@pytest.mark.parametrize("adapters, cells, want", [
    ({"a": _adapter(10)}, [("a", "p", "pass", False)], "conformant"),
    ({"a": _adapter(10, fail=1)}, [("a", "p", "fail", False)], "not conformant"),
    # a violation the profile is known not to guarantee is a finding, not non-conformance
    ({"a": _adapter(10, fail=1)}, [("a", "p", "fail", True)], "conformant"),
    # "4 runs: 0 failed, 3 errors" is not a pass
    ({"a": _adapter(4, error=3)}, [("a", "p", "pass", False)], "errors"),
    ({"a": _adapter(3, error=3)}, [("a", "p", "error", False)], "errors"),
    ({"a": _adapter(10, fail=1, error=3)}, [("a", "p", "fail", False)], "not conformant"),
    ({"a": _adapter(10)}, [("a", "p", "not_applicable", False)], "not applicable"),
    # overall: the worst of the implementations
    ({"a": _adapter(10), "b": _adapter(10, error=1)}, [("a", "p", "pass", False), ("b", "p", "pass", False)],
     "errors"),
    ({"a": _adapter(10, fail=2), "b": _adapter(10, error=1)}, [("a", "p", "fail", False),
                                                                 ("b", "p", "pass", False)], "not conformant"),
])
def test_verdict(adapters, cells, want):
    from reports.build import verdict

    matrix = [{"adapter": a, "property": p, "cell": c, "known_profile_difference": k} for a, p, c, k in cells]
    got = verdict(adapters, matrix, {"complete": True})
    assert got["verdict"] == want


def test_the_verdict_comes_first_and_fail_cells_stand_out(data, tmp_path):
    from reports.build import verdict

    data["verdict"] = verdict(data["adapters"], data["matrix"], data["completeness"])
    out = render(data, tmp_path / "report")
    md = (out / "report.md").read_text()
    assert md.splitlines()[2].startswith("> **Verdict: NOT CONFORMANT**. `mutant:double-vote`: not conformant "
                                         "(violates election-safety); `reference`: conformant")
    html = (out / "report.html").read_text()
    assert html.index('class="verdict not-conformant"') < html.index("<table")
    assert '<td class="fail">FAIL 2/10' in html and '<td class="pass">pass 0/10' in html
    # a row per property (readable names whatever their number), a column per implementation
    assert "| property " in md and "| election-safety " in md
    assert json.loads((out / "summary.json").read_text())["verdict"]["verdict"] == "not conformant"


def test_errored_runs_are_counted_and_shown_with_their_messages(data, tmp_path):
    data["adapters"]["reference"].update(runs=10, error=7, **{"pass": 3})
    data["matrix"][0].update(runs=3, errors=7)
    data["errors"] = [{"adapter": "reference", "message": "stdio:x: the process exited (status 7) boom",
                       "runs": 7, "first_seed": 2}]
    out = render(data, tmp_path / "report")
    md = (out / "report.md").read_text()
    assert "pass 0/3 ≤30.00%, 7 errored" in md  # not a bare "pass 0/3"
    assert "### Errored runs" in md and "the process exited (status 7) boom" in md
    assert '<td class="error">pass 0/3' in (out / "report.html").read_text()
    assert "rmqha run --runs 1 --adapter reference --seed 2 --no-spark" in md  # runs the first erroring seed again


def test_settings_are_shown_as_the_command_that_runs_them(data, tmp_path):
    data["manifest"]["spec"] = {"campaign": "c1", "scenario": "controller", "adapters": ["reference", "stdio:java -cp b S"],
                                "runs": 200, "first_seed": 0, "profile": None, "group_sizes": [3, 2],
                                "fault_mixes": ["mixed", "none"], "duration_ms": 30000, "chunk_size": 25}
    md = (render(data, tmp_path / "report") / "report.md").read_text()
    block = md.split("Settings:\n\n```sh\n", 1)[1].split("\n```", 1)[0]
    assert all(len(line) <= 90 for line in block.splitlines())  # wrapped to fit a page, one shell command
    assert shlex.split(block.replace("\\\n", " ")) == shlex.split(
        "rmqha run --scenario controller --adapter reference --adapter 'stdio:java -cp b S' --runs 200 "
        "--seed 0 --group-size 3 --group-size 2 --fault-mix mixed --fault-mix none --duration 30000 "
        "--chunk-size 25")
    assert "{'" not in md and "['" not in md  # no Python reprs anywhere


def test_a_replay_command_works_from_any_directory(data, tmp_path):
    x = data["counterexamples"][0]
    x["adapter"] = "stdio:python shim.py --mutant 'a b'"
    data["manifest"]["working_directory"] = "/home/u/my impl"
    out = render(data, tmp_path / "report")
    summary = json.loads((out / "summary.json").read_text())
    (command,) = [c["replay"] for c in summary["counterexamples"]]
    name = next((out / "counterexamples").iterdir())
    assert command == (f"cd '/home/u/my impl' && rmqha replay {out.resolve() / 'counterexamples' / name.name} "
                       f"--adapter 'stdio:python shim.py --mutant '\"'\"'a b'\"'\"''")
    assert command in (out / "report.md").read_text()


@pytest.mark.parametrize("adapter, cd", [
    ("broker=stdio:node tests/fixtures/js/broker_node.js + controller=reference", True),
    ("broker=reference + controller=jvm:build:Rip44Shim", True),
    ("broker=mutant:all-ack-ignored + controller=reference", False),
])
def test_a_replay_command_of_a_mixed_adapter_works_from_any_directory(data, tmp_path, adapter, cd):
    # a role's stdio: command names paths relative to where the campaign ran, as a plain one does
    x = data["counterexamples"][0]
    x["adapter"] = adapter
    data["manifest"]["working_directory"] = "/home/u/impl"
    out = render(data, tmp_path / "report")
    (command,) = [c["replay"] for c in json.loads((out / "summary.json").read_text())["counterexamples"]]
    assert command.startswith("cd /home/u/impl && rmqha replay ") == cd
    assert command.endswith(f"--adapter {shlex.quote(adapter)}")


def test_the_report_says_how_long_a_failing_run_was_judged(data, tmp_path):
    md = (render(data, tmp_path / "old") / "report.md").read_text()
    assert "after its first violation" not in md  # a manifest that does not say: nothing claimed
    data["manifest"]["halt_after_violation_ms"] = 2000
    md = (render(data, tmp_path / "new") / "report.md").read_text()
    assert "A run stops 2 simulated seconds after its first violation" in md


@pytest.mark.parametrize("settings", [{}, {"search": False}, {"shrink_replays": 0, "shrink_seconds": 0.0},
                                      {"shrink_replays": 7, "shrink_seconds": 2.5}, {"search_waves": 1},
                                      {"search_stream": "b"},
                                      {"profile": "dledger-0.2", "first_seed": 40}])
def test_the_commands_a_report_prints_are_the_campaigns_own(settings):
    spec = CampaignSpec("c", "dledger", ("reference",), runs=10, chunk_size=5, **settings)
    command = render_module.settings_command(spec.to_json())
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[:2] == ["rmqha", "run"]
    rebuilt = campaign_spec_from(build_parser().parse_args(argv[1:]))
    assert attrs.evolve(rebuilt, campaign="c") == spec  # the same campaign, setting for setting
    rerun = render_module.rerun_command(spec.to_json(), "reference", 3, {"working_directory": None})
    args = build_parser().parse_args(shlex.split(rerun[rerun.index("rmqha run"):])[1:])
    assert (args.runs, args.seed, args.no_spark) == (1, 3, True)


@pytest.mark.parametrize("preceded, want", [
    (set(), "violates a, b, c"),
    # a property whose counterexample violates another first is named last, as possibly its consequence
    ({"a"}, "violates b, c; and, each after another violation in its counterexample, a"),
    ({"a", "c"}, "violates b; and, each after another violation in its counterexample, a, c"),
    # every one after another (their counterexamples are different scripts): no order to tell
    ({"a", "b", "c"}, "violates a, b, c"),
])
def test_the_verdict_names_violations_after_another_last(preceded, want):
    from reports.build import verdict

    matrix = [{"adapter": "x", "property": p, "cell": "fail", "known_profile_difference": False} for p in "abc"]
    examples = [{"adapter": "x", "property": p, "preceded_by": "q" if p in preceded else None} for p in "abc"]
    # another implementation's counterexamples do not count
    examples.append({"adapter": "y", "property": "b", "preceded_by": "a"})
    got = verdict({"x": _adapter(10, fail=3)}, matrix, {"complete": True}, examples)
    assert got["adapters"]["x"]["why"] == want
