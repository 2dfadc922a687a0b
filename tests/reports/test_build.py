"""Report building without Spark: which chunks are sampled, how big chunks are, completeness."""
import pytest

from cli.commands.run import default_chunk_size
from results.io import CommittedChunk
from reports.build import sample_parts


def chunks(adapter, count, rows):
    return [CommittedChunk(f"{adapter}-{i:03d}", adapter, {"metrics": f"{adapter}/{i}.parquet"}, {"metrics": rows})
            for i in range(count)]


ALL = chunks("reference", 40, 1000) + chunks("mutant:x", 40, 1000)


def test_an_equal_share_of_whole_chunks_per_adapter():
    files = sample_parts(ALL, "metrics", 10_000)
    assert len([f for f in files if f.startswith("reference/")]) == 5
    assert len([f for f in files if f.startswith("mutant:x/")]) == 5


def test_the_same_sample_every_time_and_not_simply_the_first_chunks():
    files = sample_parts(ALL, "metrics", 10_000)
    assert files == sample_parts(list(reversed(ALL)), "metrics", 10_000)
    assert files[:5] != [f"reference/{i}.parquet" for i in range(5)]


def test_a_budget_above_the_data_takes_everything():
    assert sorted(sample_parts(ALL, "metrics", 10**9)) == sorted(c.files["metrics"] for c in ALL)


def test_an_adapter_with_few_rows_is_taken_whole_not_dropped():
    few = chunks("small", 2, 10)
    files = sample_parts(ALL + few, "metrics", 3_000)
    assert {"small/0.parquet", "small/1.parquet"} <= set(files)


@pytest.mark.parametrize(
    "runs, size",
    [(1, 10), (200, 25), (800, 100), (3_000, 100), (10_000, 100), (100_000, 1_000), (333_333, 3_334),
     (1_000_000, 10_000), (10_000_000, 20_000)],
)
def test_default_chunk_size(runs, size):
    assert default_chunk_size(runs) == size


def test_completeness_counts_chunks_against_the_plan():
    from reports.build import completeness

    manifest = {"chunks": ["a", "b", "c"], "spec": {"runs": 30, "adapters": ["reference", "mutant:x"]}}
    assert completeness(manifest, 2, "results") == {
        "complete": False, "committed_chunks": 2, "planned_chunks": 3, "planned_runs": 60,
        "resume": "rmqha run --resume --out results"}
    assert completeness(manifest, 3, "results")["complete"] is True


def test_the_resume_command_names_the_adapters_that_start_a_process():
    """A resumed campaign runs a manifest's stdio:/python:/jvm: adapter only when named again."""
    from reports.build import completeness

    manifest = {"spec": {"runs": 10, "adapters": ["reference", "broker=stdio:./shim x + controller=reference"]},
                "chunks": ["a00-s000000000"]}
    assert completeness(manifest, 0, "results")["resume"] == \
        "rmqha run --resume --out results --adapter 'broker=stdio:./shim x + controller=reference'"
