"""A Spark master that is no URL, or whose session does not start, is one line and exit 2
(bad input: the --master given), before any results directory is made; never a Java or
PySpark traceback (results/spark.py ``spark_session``, the one place a session starts)."""
import os

import pytest

from cli.main import main
from results.errors import ResultsError
from results.spark import spark_session


@pytest.mark.parametrize("argv", [
    "run --quiet --runs 2 --master bogus://x --out {dir}/r",
    "check --quiet --runs 2 --master bogus://x --out {dir}/r --report {dir}/rep",
    "report {dir}/none --quiet --master bogus://x --out {dir}/rep",
])
def test_a_bad_master_is_one_line_and_leaves_no_directory(tmp_path, capsys, argv):
    if argv.startswith("report"):  # a campaign to report on
        assert main(["run", "--no-spark", "--quiet", "--runs", "1", "--duration", "0", "--out",
                     str(tmp_path / "none")]) == 0
        capsys.readouterr()
    before = set(os.listdir(tmp_path))
    code = main([w.replace("{dir}", str(tmp_path)) for w in argv.split()])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err == "rmqha: error: cannot start Spark with master 'bogus://x': not a master URL " \
                  "(local[N], local[*], spark://HOST:PORT, yarn, k8s://URL)\n"
    assert set(os.listdir(tmp_path)) == before


def test_a_session_that_does_not_start_is_one_line(monkeypatch):
    """An unreachable master fails in the JVM after its retries (76 s): the same line, its cause first."""
    from pyspark.sql import SparkSession

    def refused(self):
        raise RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number.\n"
                           "\tat somewhere")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", refused)
    with pytest.raises(ResultsError) as caught:
        spark_session("spark://127.0.0.1:1")
    assert str(caught.value) == ("cannot start Spark with master 'spark://127.0.0.1:1': [JAVA_GATEWAY_EXITED] Java "
                                 "gateway process exited before sending its port number.")
