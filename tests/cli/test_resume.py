"""``rmqha run --resume`` takes its settings from DIR/manifest.json: a file. Each field is
checked as the flag that sets it is (one line naming the manifest, exit 2, nothing
run), and an adapter that would start a process or load code runs only when the
command line names it (docs/reports.md, "Resume")."""
import json
import shutil

import pytest

from cli.main import main
from results import io


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """A campaign of two one-run chunks of the reference, the second never committed."""
    out = tmp_path_factory.mktemp("campaign") / "c"
    assert main(["run", "--no-spark", "--quiet", "--runs", "2", "--chunk-size", "1", "--duration", "1000",
                 "--no-search", "--out", str(out)]) == 0
    (out / io.CHUNKS / "a00-s000000001.json").unlink()
    return out


def _edited(interrupted, tmp_path, **spec):
    out = tmp_path / "c"
    shutil.copytree(interrupted, out)
    manifest = json.loads((out / io.MANIFEST).read_text())
    manifest["spec"].update(spec)
    (out / io.MANIFEST).write_text(json.dumps(manifest))
    return out


def _refused(capsys, argv, out) -> str:
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"rmqha: error: {out / io.MANIFEST}: "), err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing run, nothing discarded
    return err


@pytest.mark.parametrize("role", ["", "broker="])
def test_a_manifest_naming_a_process_does_not_start_it(interrupted, tmp_path, capsys, role):
    pwned = tmp_path / "PWNED"
    out = _edited(interrupted, tmp_path, adapters=[f"{role}stdio:touch {pwned}"],
                  **({"scenario": "controller", "group_sizes": [3]} if role else {}))
    err = _refused(capsys, ["run", "--resume", "--no-spark", "--quiet", "--out", str(out)], out)
    assert "would start a process or load code" in err
    assert f"--adapter '{role}stdio:touch {pwned}' (or --use-manifest-adapters)" in err
    assert not pwned.exists()


def test_resume_runs_the_manifests_process_when_named_again(interrupted, tmp_path, capsys):
    pwned = tmp_path / "PWNED"
    out = _edited(interrupted, tmp_path, adapters=[f"stdio:touch {pwned}"])
    # an adapter the manifest does not name is refused too
    assert "'reference' is not one of them" in _refused(
        capsys, ["run", "--resume", "--no-spark", "--quiet", "--out", str(out), "--adapter", "reference"], out)
    # named: the user said so (the process runs, and is no implementation: its runs error)
    main(["run", "--resume", "--no-spark", "--quiet", "--out", str(out), "--adapter", f"stdio:touch {pwned}"])
    assert pwned.exists()


@pytest.mark.parametrize("field, value, message", [
    ("chunk_size", 0, "spec.chunk_size: '0' is not a whole number of at least 1"),
    ("chunk_size", 2.5, "spec.chunk_size: 2.5 is not a whole number"),
    ("group_sizes", [], "spec.group_sizes: [] is not a non-empty list"),
    ("group_sizes", [99], "group size must be between"),
    ("runs", "4", "spec.runs: '4' is not a whole number"),
    ("runs", -5, "spec.runs: '-5' is not a whole number"),
    ("runs", 10**12, "spec.runs: '1000000000000' is not a whole number from 1 to 100,000,000"),
    ("runs", True, "spec.runs: True is not a whole number"),
    ("runs", 100_001, "is 100,001 chunks per adapter; at most 100,000"),
    ("search_waves", -1, "spec.search_waves: '-1' is not a whole number"),
    ("adapters", [], "spec.adapters: [] is not a non-empty list"),
    ("first_seed", -3, "spec.first_seed: '-3' is not a seed"),
    ("first_seed", 2**63 - 1, "goes past the largest seed"),
    ("campaign", "../x", "spec.campaign: '../x' is not a plain name"),
    ("fault_mixes", ["nope"], "nope"),
    ("scenario", "nope", "unknown scenario 'nope'"),
    ("search_stream", "a b", "spec.search_stream: 'a b' is not a stream name"),
    ("shrink_replays", -1, "must not be negative"),
    ("duration_ms", None, "spec.duration_ms: None is not a whole number"),
    # generating its fault phase never ended
    ("duration_ms", 999_999_999_999, "spec.duration_ms: '999999999999' is not a whole number from 0 to 3,600,000"),
])
def test_each_manifest_field_is_checked_as_its_flag(interrupted, tmp_path, capsys, field, value, message):
    out = _edited(interrupted, tmp_path, **{field: value})
    assert message in _refused(capsys, ["run", "--resume", "--no-spark", "--quiet", "--out", str(out)], out)


@pytest.mark.parametrize("flags,named", [
    (["--runs", "5"], "--runs"),
    # the default's value, named: it was taken silently (exit 0) whatever scenario the campaign ran
    (["--scenario", "dledger"], "--scenario"),
    (["--runs", "200"], "--runs"),
    (["--seed", "0"], "--seed"),
    (["--duration", "30000"], "--duration"),
])
def test_resume_with_a_setting_on_the_command_line_is_refused(interrupted, tmp_path, capsys, flags, named):
    out = _edited(interrupted, tmp_path)
    code = main(["run", "--resume", "--no-spark", "--quiet", "--out", str(out), *flags])
    err = capsys.readouterr().err
    assert code == 2 and f"leave out {named}" in err and err.count("\n") == 1, err


def test_resuming_a_finished_campaign_exits_with_its_verdicts_and_starts_no_spark(tmp_path, capsys, monkeypatch):
    out = tmp_path / "c"
    assert main(["run", "--no-spark", "--quiet", "--runs", "2", "--chunk-size", "1", "--duration", "1000",
                 "--no-search", "--no-shrink", "--adapter", "mutant:vote-not-durable", "--out", str(out)]) == 1
    capsys.readouterr()

    def no_spark(*args, **kwargs):
        raise AssertionError("nothing left to run, Spark must not start")

    monkeypatch.setattr("conformance.spark_campaign.spark_session", no_spark)
    code = main(["run", "--resume", "--out", str(out)])  # on Spark, as a user resumes: nothing to run
    captured = capsys.readouterr()
    assert code == 1, captured  # the committed runs violated properties
    assert "starting Spark" not in captured.err
    assert "0 runs in" in captured.out and "2 runs committed in" in captured.out and "(2 failed, 0 errored)" in \
        captured.out
