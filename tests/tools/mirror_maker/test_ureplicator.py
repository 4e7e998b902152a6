"""The controller-assigned mirror workers (``tools/ureplicator.py``) between two real clusters: four
workers share an 8-partition topic while records keep arriving; one leaves and only its partitions
move, to the others, whose own partitions never go OFFLINE; one joins and takes partitions only from
the busiest. Every record arrives exactly once, because each move flushes and commits first."""

from __future__ import annotations

from collections import Counter

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import OffsetSpec
from kafka_lite.common.errors import IllegalStateException, WakeupException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.tools.mirror_maker import MirrorMakerMessageHandler, MirrorMakerState, commit_offsets
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


def source_worker(cluster, target, group: str, instance_id: str = "w0", **options) -> WorkerInstance:
    return WorkerInstance.from_configs(
        instance_id,
        {"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, "auto.offset.reset": "earliest"},
        {"bootstrap.servers": target.bootstrap_servers},
        **options,
    )


@pytest.mark.integration
def test_a_transitions_wakeup_in_a_commit_commits_and_goes_on_but_a_stops_ends_the_thread(cluster, target):
    # The copy loop commits every interval; the controller's wakeup may land in any of those
    # commits. MirrorMaker's commit_offsets reads a wakeup as a stop (commit again, then raise, and
    # the thread ends): a transition's must not end the worker. A wakeup waits for the next
    # blocking call, so one made before the commit lands in it, as one made during it would.
    source = topic_name("ureplicator-wakeup")
    cluster.create_topic(source, partitions=1)
    group = topic_name("ureplicator-wakeup-group")
    tp = TopicPartition(source, 0)
    worker = source_worker(cluster, target, group)
    consumer, state = worker.consumer, MirrorMakerState()
    try:
        consumer.offsets[tp] = 3
        consumer.wake()
        commit_offsets(consumer, state)  # no WakeupException: the thread would go on
        assert committed_offsets(cluster, group, source, 1) == {tp: 3}

        consumer.offsets[tp] = 5
        consumer.stop()
        with pytest.raises(WakeupException):
            commit_offsets(consumer, state)
        assert committed_offsets(cluster, group, source, 1) == {tp: 5}, "a stop commits first, too"
    finally:
        consumer.cleanup()
        worker.producer.close()


class FailingHandler(MirrorMakerMessageHandler):
    def handle(self, record):
        raise RuntimeError(f"cannot handle offset {record.offset}")


@pytest.mark.integration
def test_a_transition_sent_to_a_worker_that_stopped_on_an_error_fails_at_once(cluster, target):
    source = topic_name("ureplicator-failed")
    cluster.create_topic(source, partitions=1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    producer.send(source, b"v", partition=0)
    producer.close()
    worker = source_worker(
        cluster, target, topic_name("ureplicator-failed-group"), message_handler=FailingHandler()
    )
    controller = HelixMirrorMakerManager()
    try:
        controller.add_worker(worker)
        controller.add_topic_to_mirror_maker(source, 1)
        wait_until(
            lambda: worker.state.exited_abnormally, 20, "the worker's thread stopping on the handler's error"
        )

        transition = worker.on_become_offline_from_online(TopicPartition(source, 0))
        assert transition.done.is_set(), "failed at once, not after TRANSITION_TIMEOUT_MS"
        assert str(transition.error) == "worker w0 stopped: RuntimeError('cannot handle offset 0')"
    finally:
        controller.shutdown()


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
