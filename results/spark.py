"""One way to start Spark for campaigns and reports: offline, quiet, loopback only.

``local[*]`` by default; ``--master`` points the same jobs at a cluster. Settings
follow the measurements in the project's environment notes: workers use this
interpreter, Spark binds to 127.0.0.1 in local mode, no UI, Arrow on, no package
downloads (``spark.jars.packages`` is never set), log4j quiet, and
``objectHashAggregate.sortBased.fallbackThreshold`` raised so that
``percentile_approx`` over millions of rows stays fast.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from results.errors import ResultsError

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stdout.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
# a failed task is reported once, in one line, by the campaign driver
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = fatal
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = fatal
"""

DEFAULT_MASTER = "local[*]"


def _log4j_file() -> str:
    path = Path(tempfile.gettempdir()) / "rmqha-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        path.write_text(_LOG4J)
    return str(path)


def is_local(master: str) -> bool:
    return master.startswith("local")


def check_master(master: str) -> None:
    """Refuse what spark-submit refuses ("Master must either be yarn or start with spark,
    k8s, or local") before a JVM starts and prints its stack trace."""
    if not (master == "yarn" or master.startswith(("spark://", "k8s://", "local"))):
        raise ResultsError(f"cannot start Spark with master {master!r}: not a master URL "
                           f"(local[N], local[*], spark://HOST:PORT, yarn, k8s://URL)")


def _first_line(exc: BaseException) -> str:
    """One line of why a session did not start: the Java exception's message, if any."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("at ")]
    return (lines[0] if lines else type(exc).__name__)[:300]


def spark_session(master: str = DEFAULT_MASTER, app: str = "rmqha", shuffle_partitions: int | None = None):
    """Get (or create) the SparkSession for ``master``; a master that is no URL, or one
    whose session does not start (unreachable, refused), is a one-line ResultsError."""
    check_master(master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.objectHashAggregate.sortBased.fallbackThreshold", "100000")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_log4j_file()}")
        .config("spark.executor.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_log4j_file()}")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if is_local(master):
        builder = (
            builder.config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", str(shuffle_partitions or 4))
            # reports name every committed part file; past 32 paths Spark would list them
            # with a job of one task per file, which costs minutes at thousands of chunks
            .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000000")
        )
    elif shuffle_partitions:
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j's and PySpark's errors: no JVM, no master, a refused application
        raise ResultsError(f"cannot start Spark with master {master!r}: {_first_line(exc)}") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def ship_packages(spark) -> None:
    """On a real cluster, send rmqha's packages to the executors (local mode shares the venv)."""
    import zipfile

    root = Path(__file__).resolve().parents[1]
    archive = Path(tempfile.mkdtemp(prefix="rmqha-pyfiles-")) / "rmqha-packages.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for package in ("spec", "reference", "adapters", "results", "conformance"):
            for path in sorted((root / package).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    z.write(path, path.relative_to(root).as_posix())
    spark.sparkContext.addPyFile(str(archive))
