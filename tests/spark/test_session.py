"""kafka_lite.spark.session(): the settings it promises, the test run's one JVM served through Spark
Connect, and what it says when Java is missing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kafka_lite.spark.session import REMOTE_ENV, SparkSetupError, _check_java

pytestmark = pytest.mark.spark


def test_the_session_is_set_up_for_a_laptop_and_knows_the_format(spark):
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert spark.sparkContext.master == "local[2]"
    # The format is registered: a load without options reaches kafka_lite's own option check.
    with pytest.raises(Exception, match="subscribe"):
        spark.read.format("kafka_lite").load().collect()


def test_a_subprocess_joins_the_runs_jvm_through_spark_connect(spark):
    remote = os.environ[REMOTE_ENV]
    assert remote.startswith("sc://127.0.0.1:")
    script = (
        "from kafka_lite.spark import session\n"
        "spark = session()\n"
        "print(type(spark).__module__)\n"
        "print(spark.range(5).selectExpr('sum(id)').first()[0])\n"
        "print(spark.conf.get('spark.sql.session.timeZone'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    module, total, zone = out.stdout.split()
    assert module.startswith("pyspark.sql.connect"), "the subprocess should be a Spark Connect client"
    assert total == "10"
    assert zone == "UTC"  # the served session's settings, not a fresh local Spark's


def test_no_java_is_a_clear_set_up_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(SparkSetupError, match=r"Java 17 or later.*JAVA_HOME"):
        _check_java()
