"""The controller-assigned mirror workers (``tools/ureplicator.py``) between two real clusters: four
workers share an 8-partition topic while records keep arriving; one leaves and only its partitions
move, to the others, whose own partitions never go OFFLINE; one joins and takes partitions only from
the busiest. Every record arrives exactly once, because each move flushes and commits first."""

from __future__ import annotations

from collections import Counter

import pytest

from kafka_lite.clients.admin import OffsetSpec
from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.tools.ureplicator import (
    AssignedMirrorMakerConsumer,
    HelixMirrorMakerManager,
    PartitionState,
    Transition,
    WorkerInstance,
)
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until
from tests.tools.mirror_maker.test_mirror_maker_clusters import Writer, committed_offsets

PARTITIONS = 8


def end_offsets(cluster, topic: str) -> dict[TopicPartition, int]:
    admin = cluster.admin()
    try:
        specs = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)}
        return {tp: r.offset for tp, r in admin.list_offsets(specs).items()}
    finally:
        admin.close()


def test_a_partition_goes_offline_only_from_online():
    consumer = AssignedMirrorMakerConsumer(consumer=None)  # the check comes before any consumer call
    with pytest.raises(IllegalStateException) as e:
        consumer.apply(Transition(TopicPartition("t", 0), PartitionState.OFFLINE))
    assert str(e.value) == (
        "Partition TopicPartition(topic='t', partition=0) should be in the ['ONLINE'] states before "
        "moving to OFFLINE state. Instead it is in OFFLINE state"
    )


@pytest.mark.integration
def test_workers_leaving_and_joining_move_only_their_partitions_and_lose_nothing(cluster, target):
    source = topic_name("ureplicator")
    cluster.create_topic(source, partitions=PARTITIONS)
    target.create_topic(source, partitions=PARTITIONS)
    group = topic_name("ureplicator-group")

    def worker(instance_id: str) -> WorkerInstance:
        return WorkerInstance.from_configs(
            instance_id,
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": group,
                "auto.offset.reset": "earliest",
            },
            {"bootstrap.servers": target.bootstrap_servers, "linger.ms": "5"},
            offset_commit_interval_ms=200,
        )

    controller = HelixMirrorMakerManager()
    writer = Writer(cluster.bootstrap_servers, source, PARTITIONS)
    try:
        for i in range(4):
            controller.add_worker(worker(f"w{i}"))
        controller.add_topic_to_mirror_maker(source, PARTITIONS)
        writer.start()
        before = controller.assignment()
        assert sorted(len(p) for p in before.values()) == [2, 2, 2, 2]
        wait_until(lambda: sum(committed_offsets(cluster, group, source, PARTITIONS).values()) >= 100, 20,
                   "offsets committed by every worker")  # fmt: skip

        # A worker leaves: the other three keep theirs and share its two.
        controller.remove_worker("w3")
        after = controller.assignment()
        for w in ("w0", "w1", "w2"):
            assert before[w] <= after[w], f"{w} lost {before[w] - after[w]}"
            # ... and were never told to take one of their own partitions OFFLINE
            assert all(
                s is PartitionState.ONLINE for s in controller.workers[w].consumer.current_state.values()
            )
        assert set().union(*(after[w] - before[w] for w in after)) == before["w3"]

        # A worker joins: it takes partitions from the busiest only, until the counts are even.
        sent_before_join = writer.sent
        controller.add_worker(worker("w4"))
        joined = controller.assignment()
        assert sorted(len(p) for p in joined.values()) == [2, 2, 2, 2]
        for w in ("w0", "w1", "w2"):
            assert joined[w] <= after[w]
        wait_until(lambda: writer.sent >= sent_before_join + 100, 20, "input arriving after the join")
        writer.stop.set()
        writer.join(20)
        wait_until(lambda: committed_offsets(cluster, group, source, PARTITIONS) == end_offsets(cluster, source),
                   20, "every source record copied and committed")  # fmt: skip
    finally:
        writer.stop.set()
        controller.shutdown()

    copied = Counter(r.value for r in read_topic(target.bootstrap_servers, source))
    written = {r.value for r in read_topic(cluster.bootstrap_servers, source)}
    assert len(written) == writer.sent
    assert set(copied) == written, f"{len(written - set(copied))} records lost"
    assert sum(copied.values()) == len(copied), "a move flushes and commits first: nothing copied twice"
