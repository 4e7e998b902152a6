"""Chapter 8's pictures: MirrorMaker's threads read from a running MirrorMaker (each thread with the
partitions its group gave it), and a Connect cluster's workers read from the REST API's status
bodies (each connector and task under the worker that runs it)."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.diagrams.connect import (
    MirrorMakerShape,
    connect_cluster_diagram,
    connect_workers_from_status,
    mirror_maker_diagram,
)
from kafka_lite.tools.mirror_maker import MirrorMaker
from tests.support.topics import topic_name
from tests.support.waiting import wait_until


@pytest.mark.integration
def test_a_running_mirror_makers_threads_are_drawn_with_the_partitions_the_group_gave_them(cluster):
    topic = topic_name("mm-picture")
    cluster.create_topic(topic, partitions=4)
    consumer = {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": topic,
        "session.timeout.ms": "2000",
        "heartbeat.interval.ms": "500",
    }
    mm = MirrorMaker.from_configs(
        consumer, {"bootstrap.servers": cluster.bootstrap_servers}, topic, num_streams=2
    )
    runner = threading.Thread(target=mm.run, daemon=True)
    runner.start()
    try:

        def shape() -> MirrorMakerShape:
            return MirrorMakerShape.of(mm, "source", "target", topic)

        # Both threads' consumers in the group, the four partitions split between them.
        wait_until(lambda: all(len(t.partitions) == 2 for t in shape().threads), timeout_s=30)
        threads = shape().threads
        assert [t.name for t in threads] == ["mirrormaker-thread-0", "mirrormaker-thread-1"]
        assert sorted(tp.partition for t in threads for tp in t.partitions) == [0, 1, 2, 3]
        source = mirror_maker_diagram(shape()).source
        assert f"consumer group {topic}" in source
        for t in threads:
            assert all(f"{tp.topic}-{tp.partition}" in source for tp in t.partitions)
            assert f'"{t.name}" -> producer' in source
    finally:
        mm.shutdown()
        runner.join(timeout=30)
    assert not runner.is_alive()


@pytest.mark.unit
def test_connect_workers_are_read_from_the_status_bodies():
    statuses = [
        {
            "name": "src",
            "connector": {"state": "RUNNING", "worker_id": "w1:8083"},
            "tasks": [
                {"id": 0, "state": "RUNNING", "worker_id": "w2:8083"},
                {"id": 1, "state": "FAILED", "worker_id": "w1:8083", "trace": "..."},
            ],
        },
        {"name": "sink", "connector": {"state": "PAUSED", "worker_id": "w2:8083"}, "tasks": []},
    ]
    workers = connect_workers_from_status(statuses, leader="w1:8083")
    assert [(w.worker_id, w.leader) for w in workers] == [("w1:8083", True), ("w2:8083", False)]
    assert workers[0].connectors == ["src (RUNNING)"] and workers[0].tasks == ["src-1 (FAILED)"]
    assert workers[1].connectors == ["sink (PAUSED)"] and workers[1].tasks == ["src-0 (RUNNING)"]
    source = connect_cluster_diagram(workers, "g", ("configs", "offsets", "statuses")).source
    assert "worker w1:8083" in source and "(leader)" in source and "(follower)" in source
    assert "task\nsrc-1 (FAILED)" in source
