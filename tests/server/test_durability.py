"""Durability under SIGKILL on a real 3-broker cluster: acks=all, min.insync.replicas=2, replication 3.

One cluster (the checker's settings: a 2 s ZooKeeper session, fast fetchers) serves both victims;
the tests run in an xdist group of their own so that no other test's processes share it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kafka_lite.cli.cluster import stop_cluster
from kafka_lite.tools import durability_checker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("durability")]

ROUNDS = 10
RECORDS_PER_ROUND = 50


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory) -> Iterator:
    directory = tmp_path_factory.mktemp("durability-cluster")
    state = durability_checker.start(directory)
    try:
        yield directory
    finally:
        stop_cluster(state)


@pytest.mark.parametrize("victim", ["leader", "controller"])
def test_no_acknowledged_record_is_lost_when_the_victim_is_killed(cluster_dir, victim):
    started = time.monotonic()
    lines: list[str] = []
    report = durability_checker.check(cluster_dir, ROUNDS, victim, RECORDS_PER_ROUND, log=lines.append)
    summary = "\n".join(lines + report.lines()) + f"\nwall time {time.monotonic() - started:.1f} s"
    print(summary)
    assert len(lines) == ROUNDS, summary  # every round killed, re-elected, restarted, rejoined
    assert report.verdict.acknowledged >= (ROUNDS + 1) * RECORDS_PER_ROUND, summary
    assert report.verdict.lost == [], summary
    assert not any(report.out_of_order.values()), summary
