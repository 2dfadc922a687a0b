import pytest


@pytest.fixture(scope="session")
def spark():
    """One local[2] SparkSession for the whole test session (its start costs 5-7 s).

    The CLI's own ``spark_session`` calls ``getOrCreate`` and therefore reuse it.
    """
    from results.spark import spark_session

    return spark_session("local[2]", app="rmqha tests")
