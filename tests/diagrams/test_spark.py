"""The micro-batch picture: the driver's offsets, one task per range, each fetching from its leader."""

from __future__ import annotations

import re

import pytest

from kafka_lite.diagrams.spark import micro_batch, micro_batch_diagram

T = "orders"


def _tasks(g) -> list[tuple[str, int, int]]:
    return [
        (tp, int(a.replace(",", "")), int(b.replace(",", "")))
        for tp, a, b in re.findall(r"(orders-\d|flights-\d) \[([\d,]+), ([\d,]+)\)", g.source)
    ]


def test_the_trigger_limit_is_shared_by_backlog_and_each_task_fetches_from_its_leader():
    start = {(T, 0): 0, (T, 1): 100}
    hws = {(T, 0): 1_000, (T, 1): 400}  # backlogs 1,000 and 300
    g = micro_batch_diagram(start, hws, {(T, 0): 2, (T, 1): 0}, max_offsets_per_trigger=130)
    # 130 shared 100 : 30, as Spark's rateLimit prorates
    assert _tasks(g) == [("orders-0", 0, 100), ("orders-1", 100, 130)]
    assert re.search(r"task0 -> broker2 \[label=\"Fetch @0\"\]", g.source)
    assert re.search(r"task1 -> broker0 \[label=\"Fetch @100\"\]", g.source)


def test_without_a_limit_the_batch_reads_to_the_high_watermark_and_min_partitions_splits():
    g = micro_batch_diagram({(T, 0): 0}, {(T, 0): 1_000}, {(T, 0): 1}, min_partitions=2)
    assert _tasks(g) == [("orders-0", 0, 500), ("orders-0", 500, 1000)]
    assert "no maxOffsetsPerTrigger" in g.source


def test_a_partition_without_a_leader_is_named():
    with pytest.raises(ValueError, match="no leader given for orders-1"):
        micro_batch_diagram({}, {(T, 0): 5, (T, 1): 5}, {(T, 0): 1})


def test_the_docs_picture_leaves_part_of_the_backlog_for_the_next_trigger():
    tasks = _tasks(micro_batch())
    assert len(tasks) == 3
    # each share is rounded down, as Spark's rateLimit does: 666 + 166 + 666
    assert sum(b - a for _, a, b in tasks) == 1_498
