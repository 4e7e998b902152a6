"""The windowed count example (``streams/examples/window_counts.py``) on the test driver: a late
record within the retention updates its window, one after the retention finds its window gone.
Spark's side, on a cluster, is ``tests/spark/test_streams_beside_spark.py``."""

from __future__ import annotations

import pytest

from kafka_lite.streams.examples.window_counts import STORE_NAME, build_window_counts
from kafka_lite.streams.kstream import KStreamBuilder
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.test_utils import TopologyTestDriver

pytestmark = pytest.mark.unit

T0 = 1_000_000_000_000  # a multiple of 10 s


def run(records: list[tuple[str, int]], retention_ms: int) -> tuple[list[tuple[str, int]], dict[int, int]]:
    """Pipe ``(key, seconds after T0)`` records through the example: its output, in order, and
    alice's windows in the store (start -> count)."""
    builder = build_window_counts(
        KStreamBuilder(), "views", "counts", size_ms=10_000, retention_ms=retention_ms
    )
    driver = TopologyTestDriver(builder, {"application.id": "window-counts"})
    try:
        for key, s in records:
            driver.pipe_input("views", key.encode(), b"view", T0 + s * 1000)
        output = []
        read = Serdes.String().deserializer(), Serdes.Long().deserializer()
        while (record := driver.read_output("counts", *read)) is not None:
            output.append((record.key, record.value))
        with driver.get_state_store(STORE_NAME).fetch("alice", 0, T0 + 10**6) as windows:
            stored = {entry.key: entry.value for entry in windows}
        return output, stored
    finally:
        driver.close()


def test_a_late_record_within_the_retention_updates_its_window_and_is_forwarded_again():
    output, stored = run([("alice", 1), ("bob", 3), ("alice", 38), ("alice", 6)], retention_ms=60_000)
    assert output == [(f"alice@{T0}", 1), (f"bob@{T0}", 1), (f"alice@{T0 + 30_000}", 1), (f"alice@{T0}", 2)]
    assert stored == {T0: 2, T0 + 30_000: 1}


def test_a_record_after_the_retention_restarts_its_window_and_is_not_stored():
    # Segments of at least 60 s, three of them: 400 s later the window at T0 has been dropped.
    output, stored = run([("alice", 1), ("alice", 6), ("alice", 400), ("alice", 8)], retention_ms=10_000)
    assert output[-1] == (f"alice@{T0}", 1)  # as in Kafka 0.10.1: the initializer's count, forwarded
    assert stored == {T0 + 400_000: 1}
