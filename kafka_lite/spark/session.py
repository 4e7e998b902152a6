"""One call to a SparkSession that can read and write kafka_lite topics.

No Kafka twin: Spark's Kafka source is a jar that ``spark-submit --packages`` adds; a Python data
source is registered with the session instead, and this module does that, with the settings a laptop
(and a test run) wants.

``session()`` builds a local Spark (``local[2]``: one task per core of a small machine; two shuffle
partitions instead of Spark's 200, which would turn every aggregation of a lab's few thousand rows
into 200 tiny tasks; the UI and the console progress bar off; every timestamp shown in UTC so that a
notebook's output does not depend on the machine's time zone) and registers the ``kafka_lite`` format.
On a Spark cluster, build the session as the cluster wants and call ``register(spark)``.

Three facts about PySpark shape it:

- Python data sources run in Python worker processes that Spark starts with ``PYSPARK_PYTHON``
  (``python3`` on the PATH by default, which may not have pyarrow or kafka_lite): the workers must use
  this interpreter.
- PySpark needs Java 17 or later. Without it the JVM's start fails with a message about a missing
  gateway; we check first and say what is missing.
- A process may serve its Spark to others through Spark Connect (``serve_connect``). The test run
  starts one JVM and the lab grader's subprocesses connect to it (``KAFKA_LITE_SPARK_REMOTE``) instead of
  starting one JVM each. The variable is ours, not Spark's ``SPARK_REMOTE``: with that one set, every
  ``SparkSession.builder.getOrCreate()`` in the serving process itself would turn into a Connect client.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The environment variable naming a Spark Connect server (sc://host:port) that session() connects to
# instead of starting a JVM of its own.
REMOTE_ENV = "KAFKA_LITE_SPARK_REMOTE"

# Settings for one machine and small data: see the module's docstring.
LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    # Streaming queries in labs and notebooks: a finished micro-batch's state and files need not be
    # kept for a hundred batches back.
    "spark.sql.streaming.minBatchesToRetain": "10",
    # The JVM for many small jobs, not one long one: the quick (C1) compiler alone, since the
    # optimizing one spends more CPU compiling Spark's code than a lab's few thousand rows give it
    # back, and the serial collector for a heap this size.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}


class SparkSetupError(RuntimeError):
    """PySpark or Java is missing: what is missing and how to get it."""


def session(
    app_name: str = "kafka_lite", master: str = "local[2]", serve_connect: int | None = None, **conf: str
) -> SparkSession:
    """A SparkSession with the ``kafka_lite`` format registered.

    ``conf`` adds or overrides Spark settings, by their own dotted names:
    ``session(**{"spark.sql.shuffle.partitions": "4"})``. ``serve_connect=PORT`` also serves this
    session's Spark to Spark Connect clients on 127.0.0.1:PORT. When ``KAFKA_LITE_SPARK_REMOTE`` is set,
    connects to that server instead of starting a JVM.
    """
    remote = os.environ.get(REMOTE_ENV)
    if remote and serve_connect is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.remote(remote).getOrCreate()
    else:
        spark = _local_session(app_name, master, serve_connect, conf)
    register(spark)
    return spark


def register(spark: SparkSession) -> None:
    """Register the ``kafka_lite`` format with ``spark`` (Spark reserves the name ``kafka`` for its
    own source: a job written for Kafka changes only the format's name)."""
    from kafka_lite.spark.source import KafkaLiteDataSource

    spark.dataSource.register(KafkaLiteDataSource)


def _local_session(
    app_name: str, master: str, serve_connect: int | None, conf: dict[str, str]
) -> SparkSession:
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SparkSetupError(
            "PySpark is not installed in this Python: install kafka_lite with its pyspark extra "
            "(`pip install -e '.[pyspark]'`, or `make bootstrap`, which installs every extra)"
        ) from e
    _check_java()
    # The workers run this interpreter (see the module's docstring), which has pyarrow and kafka_lite.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = dict(LOCAL_CONF)
    if serve_connect is not None:
        settings["spark.plugins"] = "org.apache.spark.sql.connect.SparkConnectPlugin"
        settings["spark.connect.grpc.binding.address"] = "127.0.0.1"
        settings["spark.connect.grpc.binding.port"] = str(serve_connect)
    settings.update(conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java"):
        return
    raise SparkSetupError(
        "PySpark needs Java 17 or later, and there is no `java` on the PATH and no JAVA_HOME: "
        "install it (on Debian `apt-get install openjdk-17-jre-headless`; scripts/bootstrap does) "
        "or set JAVA_HOME"
    )
