"""Campaign directories: atomic chunks, resume without loss or duplicates, one-line errors."""
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli.main import main
from conformance.errors import UserError
from results import io
from results.schema import SCHEMA_VERSION
from conformance.scenarios.registry import get_scenario
from conformance.spark_campaign import CampaignSpec, execute_and_commit, plan_chunks, prepare, run_campaign

SPEC = CampaignSpec("t", "dledger", ("reference", "mutant:vote-not-durable"), runs=12, chunk_size=4,
                    group_sizes=(3,), fault_mixes=("crash",), duration_ms=8000)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign") / "results"
    summary = run_campaign(out, SPEC, master=None, progress=False)
    assert summary["runs"] == 24
    return out


@pytest.fixture()
def campaign(pristine, tmp_path):
    """A fresh copy of one finished campaign, for a test to damage."""
    copy = tmp_path / "results"
    shutil.copytree(pristine, copy)
    return copy


def runs_of(out):
    return io.read_table(out, "runs").to_pylist()


def test_campaign_commits_every_run_once(campaign):
    rows = runs_of(campaign)
    assert sorted((r["adapter"], r["seed"]) for r in rows) == sorted(
        (a, s) for a in SPEC.adapters for s in range(12))
    committed = io.committed_chunks(campaign)
    planned = {c.id for c in plan_chunks(SPEC)}
    assert {c for c in committed if c in planned} == planned and len(planned) == 6
    # the failures of a chunk are shrunk after its verdicts are committed, into <chunk>.shrunk
    shrunk = {c for c in committed if c not in planned}
    assert shrunk and all(io.planned_chunk_of(c) in planned and committed[c]["summary"]["runs"] == 0
                          for c in shrunk)
    cx = io.read_table(campaign, "counterexamples").to_pylist()
    for c in shrunk:
        seeds = {r["seed"] for r in cx if r["shrunk"]}
        assert seeds
    # every failing run has an unshrunk counterexample per violated property, written with its verdict
    failing = {(r["adapter"], r["seed"]): set(r["failed_properties"]) for r in rows if r["verdict"] == "fail"}
    unshrunk = {}
    for r in cx:
        if not r["shrunk"]:
            unshrunk.setdefault((r["adapter"], r["seed"]), set()).add(r["property"])
    assert failing and unshrunk == failing
    props = io.read_table(campaign, "properties")
    assert props.num_rows == 24 * len(get_scenario("dledger").properties)
    manifest = io.read_manifest(campaign)
    assert manifest["adapters"]["mutant:vote-not-durable"]["implementation"].endswith("vote-not-durable")
    assert "handle_vote" in manifest["outcomes"]["dledger"]


def test_same_seeds_same_results_except_wall_time(campaign, tmp_path):
    again = tmp_path / "again"
    run_campaign(again, SPEC, master=None, progress=False)
    strip = lambda rows: sorted(({k: v for k, v in r.items() if k != "wall_ms"} for r in rows),
                                key=lambda r: (r["adapter"], r["seed"]))
    assert strip(runs_of(campaign)) == strip(runs_of(again))


def test_killed_campaign_resumes_without_loss_or_duplicates(tmp_path):
    out = tmp_path / "killed"
    spec, chunks = prepare(out, SPEC, resume=False)
    execute_and_commit(str(out), spec, chunks[0])
    execute_and_commit(str(out), spec, chunks[3])
    # a kill in the middle of a chunk: parts staged, one part even moved, no marker
    (out / io.STAGING / "x-123").mkdir(parents=True)
    (out / io.STAGING / "x-123" / "runs.parquet").write_bytes(b"PAR1 partial")
    pq.write_table(pa.table({"x": [1]}), out / "runs" / f"{chunks[1].id}.parquet")
    assert len(runs_of(out)) == 8  # only committed chunks are visible
    summary = run_campaign(out, None, master=None, resume=True, progress=False)
    assert summary["runs"] == 16
    rows = runs_of(out)
    keys = [(r["adapter"], r["seed"]) for r in rows]
    assert len(keys) == len(set(keys)) == 24
    assert not (out / io.STAGING).exists()


def test_resume_refuses_different_settings(campaign):
    with pytest.raises(UserError, match="different campaign settings"):
        prepare(campaign, CampaignSpec("other", "dledger", ("reference",), runs=3), resume=True)


def test_new_campaign_refuses_non_empty_directory(campaign):
    with pytest.raises(UserError, match="already exists"):
        prepare(campaign, SPEC, resume=False)


# ------------------------------------------------------------------ bad input


def report_error(capsys, path) -> str:
    code = main(["report", str(path), "--out", str(Path(path).parent / "report")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and err.startswith("rmqha: error: ")
    assert not (Path(path).parent / "report").exists()  # nothing partially written
    return err


def test_missing_directory(capsys, tmp_path):
    assert "no such directory" in report_error(capsys, tmp_path / "nope")


def test_empty_directory(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    assert "empty directory" in report_error(capsys, tmp_path / "empty")


def test_corrupt_parquet(capsys, campaign):
    part = next((campaign / "metrics").glob("*.parquet"))
    part.write_bytes(b"this is not parquet at all")
    assert "corrupt or truncated Parquet" in report_error(capsys, campaign)


def test_truncated_parquet(capsys, campaign):
    part = next((campaign / "runs").glob("*.parquet"))
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    assert "corrupt or truncated Parquet" in report_error(capsys, campaign)


def test_missing_part_of_committed_chunk(capsys, campaign):
    next((campaign / "coverage").glob("*.parquet")).unlink()
    assert "missing part file" in report_error(capsys, campaign)


def test_mixed_schema_versions(capsys, campaign):
    part = next((campaign / "runs").glob("*.parquet"))
    table = pq.read_table(part)
    meta = dict(table.schema.metadata)
    meta[b"rmqha.schema_version"] = b"0"
    pq.write_table(table.replace_schema_metadata(meta), part)
    assert "mixed schema versions" in report_error(capsys, campaign)


def test_manifest_of_another_schema_version(capsys, campaign):
    manifest = json.loads((campaign / "manifest.json").read_text())
    manifest["schema_version"] = SCHEMA_VERSION + 1
    (campaign / "manifest.json").write_text(json.dumps(manifest))
    assert "schema version" in report_error(capsys, campaign)


def test_manifest_that_does_not_match_the_data(capsys, campaign):
    manifest = json.loads((campaign / "manifest.json").read_text())
    del manifest["adapters"]["mutant:vote-not-durable"]
    (campaign / "manifest.json").write_text(json.dumps(manifest))
    assert "does not list" in report_error(capsys, campaign)


def test_row_count_mismatch(capsys, campaign):
    marker_path = next((campaign / "chunks").glob("*.json"))
    marker = json.loads(marker_path.read_text())
    marker["tables"]["runs"]["rows"] += 1
    marker_path.write_text(json.dumps(marker))
    assert "rows, the chunk marker says" in report_error(capsys, campaign)


def test_unknown_adapter_is_one_line_before_any_work(capsys, tmp_path):
    code = main(["run", "--no-spark", "--adapter", "mutant:nope", "--runs", "2", "--out", str(tmp_path / "r")])
    assert code == 2
    assert "mutant 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "damage, message",
    [
        ("not json", "corrupt chunk marker"),
        ('{"chunk": "elsewhere", "tables": {}}', "corrupt chunk marker"),
        # a marker may name only its own parts, never a path outside the campaign
        ("outside", "bad or missing runs part"),
        ("no summary", "no run summary"),
    ],
    ids=["not-json", "wrong-chunk", "path-outside", "no-summary"],
)
def test_corrupt_chunk_marker(capsys, campaign, damage, message):
    marker_path = sorted((campaign / "chunks").glob("*.json"))[0]
    marker = json.loads(marker_path.read_text())
    if damage == "outside":
        marker["tables"]["runs"]["file"] = "../../etc/passwd"
        damage = json.dumps(marker)
    elif damage == "no summary":
        del marker["summary"]
        damage = json.dumps(marker)
    marker_path.write_text(damage)
    assert message in report_error(capsys, campaign)


def test_a_rollup_edited_to_pass_is_refused_by_the_report(capsys, campaign):
    """A report sums the markers' rollups: one that says its failed runs passed (the runs
    table still failing, counterexamples kept) would read CONFORMANT."""
    marker_path = next(p for p in sorted((campaign / "chunks").glob("*.json"))
                       if json.loads(p.read_text())["summary"]["fail"])
    marker = json.loads(marker_path.read_text())
    for g in marker["rollup"]["groups"]:
        g["pass"], g["fail"] = g["pass"] + g["fail"], 0
    marker["rollup"]["failed"] = []
    marker["summary"]["fail"] = 0
    marker_path.write_text(json.dumps(marker))
    err = report_error(capsys, campaign)
    assert f"{marker_path}: the chunk marker's counts disagree with its runs table" in err


def test_chunk_the_manifest_never_planned(capsys, campaign):
    manifest = json.loads((campaign / "manifest.json").read_text())
    manifest["chunks"] = manifest["chunks"][1:]
    (campaign / "manifest.json").write_text(json.dumps(manifest))
    assert "is not one the manifest planned" in report_error(capsys, campaign)


@pytest.mark.parametrize("field", ["campaign", "adapters", "chunks", "properties", "spec"])
def test_manifest_without_a_field_readers_need(capsys, campaign, field):
    manifest = json.loads((campaign / "manifest.json").read_text())
    del manifest[field]
    (campaign / "manifest.json").write_text(json.dumps(manifest))
    assert f"manifest field '{field}' is missing" in report_error(capsys, campaign)


def test_resume_of_a_malformed_manifest_is_one_line(capsys, campaign):
    manifest = json.loads((campaign / "manifest.json").read_text())
    manifest["spec"] = {"nonsense": 1}
    (campaign / "manifest.json").write_text(json.dumps(manifest))
    code = main(["run", "--resume", "--no-spark", "--quiet", "--out", str(campaign)])
    assert code == 2
    assert "manifest.json: spec.campaign is missing" in capsys.readouterr().err


def test_report_refuses_to_replace_a_directory_that_is_not_a_report(capsys, campaign, tmp_path):
    precious = tmp_path / "src"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    code = main(["report", str(campaign), "--out", str(precious)])
    assert code == 2
    err = capsys.readouterr().err
    assert "is not an rmqha report (it holds notes.txt)" in err and err.count("\n") == 1
    assert (precious / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "src"]  # no temp dir left over


@pytest.mark.parametrize("layout", [
    {"handler-level.md": "x", "notes.txt": "keep me"},              # a report's file beside the user's
    {"sub/handler-level.md": "x", "sub/notes.txt": "keep me"},      # a subdirectory not all ours
    {"report.md": "x", "summary.json": "{}", "src/main.py": "keep me"},
    {"handler-level.json": "{}"},                                   # ours by name, but no report's marker
])
def test_report_refuses_a_directory_that_only_looks_like_a_report(capsys, campaign, tmp_path, layout):
    precious = tmp_path / "src"
    for name, text in layout.items():
        (precious / name).parent.mkdir(parents=True, exist_ok=True)
        (precious / name).write_text(text)
    code = main(["report", str(campaign), "--out", str(precious)])
    assert code == 2
    assert "is not an rmqha report" in capsys.readouterr().err
    assert all((precious / name).read_text() == text for name, text in layout.items())


def test_check_refuses_a_bad_report_directory_before_running(capsys, tmp_path):
    (tmp_path / "report").write_text("a file")
    code = main(["check", "--no-spark", "--quiet", "--runs", "1", "--out", str(tmp_path / "results"),
                 "--report", str(tmp_path / "report")])
    assert code == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--group-size", "12"], "group size must be between 1 and 9, not 12"),
        (["--chunk-size", "-3"], "argument --chunk-size: '-3' is not a whole number of at least 1"),
        (["--duration", "-1"], "argument --duration: '-1' is not a whole number from 0 to 3,600,000"),
        (["--fault-mix", "earthquake"], "unknown fault mix 'earthquake'"),
        (["--scenario", "paxos"], "unknown scenario 'paxos'"),
        (["--runs", "0"], "argument --runs: '0' is not a whole number from 1 to 100,000,000"),
    ],
    ids=["group-size", "chunk-size", "duration", "fault-mix", "scenario", "runs"],
)
def test_bad_campaign_settings_fail_before_any_work(capsys, tmp_path, flags, message):
    out = tmp_path / "r"
    code = main(["run", "--no-spark", "--quiet", "--runs", "2", "--out", str(out)] + flags)
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists()


def test_a_rollup_sums_what_a_report_needs_and_combines_across_chunks():
    import pyarrow as pa

    from results.rollup import combine, rollup, well_formed

    def runs(adapter, verdicts, failed):
        n = len(verdicts)
        return pa.table({"adapter": [adapter] * n, "scenario": ["s"] * n, "profile": ["p"] * n,
                         "fault_mix": ["m"] * n, "group_size": pa.array([3] * n, pa.int32()), "verdict": verdicts,
                         "max_term": list(range(1, n + 1)), "steps": [10] * n, "simulated_ms": [2000] * n,
                         "elections": [1] * n, "leader_changes": [0] * n, "wall_ms": [None] + [4.0] * (n - 1),
                         "failed_properties": pa.array(failed, pa.list_(pa.string())),
                         "not_applicable_properties": pa.array([None] * n, pa.list_(pa.string()))})

    one = rollup({"runs": runs("a", ["pass", "fail"], [[], ["x"]]),
                  "metrics": pa.table({"adapter": ["a", "a"], "seed": [7, 3], "metric": ["f", "f"], "value": [0.0, 2.0]})})
    two = rollup({"runs": runs("a", ["fail", "error", "pass"], [["x", "y"], [], []]),
                  "metrics": pa.table({"adapter": ["a"], "seed": [1], "metric": ["f"], "value": [5.0]})})
    assert well_formed(one) and well_formed(two) and not well_formed({"groups": [{"runs": "2"}]})
    total = combine([one, two])
    [g] = total["groups"]
    assert (g["runs"], g["pass"], g["fail"], g["error"], g["max_term"]) == (5, 2, 2, 1, 3)
    assert g["mean_steps"] == 10 and g["mean_simulated_s"] == 2.0
    assert g["mean_wall_ms"] == 4.0  # nulls are left out of a mean, as Spark's avg does
    assert total["failed"] == {("a", "x"): 2, ("a", "y"): 1} and total["not_applicable"] == {}
    f = total["metrics"][("a", "f")]
    assert (f["n"], f["min"], f["max"], f["occurrences"], f["runs_with"], f["first_seed"]) == (3, 0.0, 5.0, 7.0, 2, 1)
