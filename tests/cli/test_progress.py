"""Long work says what it is doing: the campaign's bar names Spark's start-up (seconds to a
minute of a JVM starting) instead of sitting silent at 0."""
from conformance import spark_campaign
from conformance.spark_campaign import CampaignSpec, run_campaign


def test_the_campaign_bar_says_spark_is_starting(tmp_path, monkeypatch, capsys):
    seen = {}

    def fake_job(out, spec, todo, master, run_fn, account, started):
        seen["before"] = capsys.readouterr().err  # what the user saw while Spark was starting
        started()

    monkeypatch.setattr(spark_campaign, "_run_on_spark", fake_job)
    monkeypatch.setattr(spark_campaign, "spark_session", lambda *args, **kwargs: None)  # started before the directory
    spec = CampaignSpec("c", "dledger", ("reference",), runs=2, group_sizes=(3,), fault_mixes=("none",),
                        duration_ms=1000, chunk_size=1)
    run_campaign(tmp_path / "r", spec, master="local[2]", progress=True)
    assert "starting Spark (local[2])" in seen["before"]
    assert "starting Spark" not in capsys.readouterr().err.rsplit("\r", 1)[-1]  # gone once it is up


def test_the_bar_counts_every_failure_by_its_last_frame(tmp_path, capsys):
    """The counts are set before the bar moves: its last frame shows every failed run (the last
    chunk's failures were missing from it, drawn before they were counted)."""
    spec = CampaignSpec("c", "dledger", ("mutant:vote-not-durable",), runs=6, group_sizes=(3,),
                        fault_mixes=("crash",), duration_ms=8000, chunk_size=2)
    summary = run_campaign(tmp_path / "r", spec, master=None, progress=True)
    last = capsys.readouterr().err.rsplit("\r", 1)[-1]
    assert summary["fail"] > 0 and f"fail={summary['fail']}," in last, (summary, last)
