"""A Spark lab started in a directory outside the repository grades the learner's code there."""

from __future__ import annotations

import shutil

import pytest

from kafka_lite.cli.main import main
from kafka_lite.grading.labs import REPO_ROOT

pytestmark = pytest.mark.spark

BROKEN = """

def latency_percentiles(metrics):
    raise ValueError("broken in the learner's copy")
"""


def test_a_spark_lab_started_outside_the_repository_grades_the_learners_file(
    spark, tmp_path, capsys, monkeypatch
):
    # ``spark``: the run's JVM, served through Spark Connect; the grading subprocess connects to it.
    monkeypatch.chdir(tmp_path)
    assert main(["lab", "start", "10"]) == 0
    capsys.readouterr()
    rel = "kafka_lite/spark/labs/request_latency.py"
    mine = tmp_path / "kafka-lite-labs" / "lab10_request_latency" / rel
    shutil.copyfile(REPO_ROOT / rel, mine)  # the learner's copy: the reference, then broken
    mine.write_text(mine.read_text(encoding="utf-8") + BROKEN, encoding="utf-8")
    assert main(["lab", "grade", "10", "-k", "test_percentiles_of_ten_requests", "--verbose"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  0/2  test_percentiles_of_ten_requests" in out
    assert "ValueError: broken in the learner's copy" in out
    assert f"{mine}:" in out and "kafka-lite-grade-" not in out
