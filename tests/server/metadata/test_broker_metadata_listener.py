"""BrokerMetadataListener: a Raft listener (over Kafka's test RaftClient, LocalLogManager) that
replays committed records into a delta, tracks the offset the heartbeat reports, publishes the
whole catch-up at once when told to start and then each commit, and loads a snapshot as a fresh
image. Its event queue is stepped by the test."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import ApiMessageAndVersion, PartitionChangeRecord, RemoveTopicRecord
from kafka_lite.common.time import MockTime
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_lite.testing.deterministic_event_queue import DeterministicEventQueue
from kafka_lite.testing.local_log_manager import (
    LocalLogManager,
    LocalSnapshot,
    LocalSnapshotReader,
    SharedLogData,
)
from tests.server.metadata.records import partition, register, topic

pytestmark = pytest.mark.unit

FOO = uuid.UUID(int=0xF00)
BAR = uuid.UUID(int=0xBA4)


def v(record) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(record, 0)


class RecordingPublisher:
    def __init__(self) -> None:
        self.published = []

    def publish(self, delta, new_image) -> None:
        self.published.append((delta, new_image))


@pytest.fixture
def quorum():
    """Controller 0 leads the shared log; broker 1's listener follows it."""
    time = MockTime()
    shared = SharedLogData(time)
    controller = LocalLogManager(0, shared)
    broker = LocalLogManager(1, shared)
    queue = DeterministicEventQueue(time)
    listener = BrokerMetadataListener(1, time, queue)
    broker.register(listener)
    epoch = shared.elect_leader(0).epoch

    def commit(*records) -> None:
        controller.schedule_append(epoch, [v(r) for r in records])
        shared.poll_all()
        queue.run_pending()

    return shared, listener, queue, commit


def test_commits_are_replayed_and_the_offset_tracked_before_publishing(quorum):
    _, listener, _, commit = quorum
    assert listener.highest_metadata_offset() == -1
    commit(register(0), register(1))
    commit(topic("foo", FOO), partition(FOO, 0, [0, 1]))
    assert listener.highest_metadata_offset() == 3, "the last record's offset: base offset plus index"


def test_start_publishing_publishes_the_catch_up_at_once_then_each_commit(quorum):
    _, listener, queue, commit = quorum
    commit(register(0), topic("foo", FOO))
    commit(partition(FOO, 0, [0]))
    publisher = RecordingPublisher()
    future = listener.start_publishing(publisher)
    assert publisher.published == [] and not future.done(), "it runs on the listener's queue"
    queue.run_pending()
    assert future.done() and future.result() is None
    ((delta, image),) = publisher.published
    assert image.highest_offset_and_epoch.offset == 2
    assert image.topics.get_topic("foo").partitions[0].leader == 0
    assert delta.image.is_empty(), "one initial delta, from the empty image, with all of the catch-up"
    commit(PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=[0], leader=-1))
    assert len(publisher.published) == 2
    delta, new_image = publisher.published[1]
    assert delta.image is image, "each later delta starts from the image published before"
    assert new_image.topics.get_topic("foo").partitions[0].leader == -1
    assert new_image.highest_offset_and_epoch.offset == 3


def test_a_snapshot_replaces_the_image(quorum):
    shared, listener, queue, commit = quorum
    publisher = RecordingPublisher()
    listener.start_publishing(publisher)
    commit(register(0), topic("foo", FOO), partition(FOO, 0, [0]))
    # A new broker, behind the log start once a snapshot has compacted the log, loads the snapshot.
    snapshot = LocalSnapshot(OffsetAndEpoch(3, 1), 1234, ((v(register(0)), v(topic("bar", BAR))),))
    shared.add_snapshot(snapshot)
    late = BrokerMetadataListener(2, shared.time, queue)
    late_publisher = RecordingPublisher()
    late.start_publishing(late_publisher)
    LocalLogManager(2, shared).register(late)
    shared.poll_all()
    queue.run_pending()
    _, image = late_publisher.published[-1]
    assert image.topics.get_topic("bar") is not None and image.topics.get_topic("foo") is None
    assert image.highest_offset_and_epoch == OffsetAndEpoch(2, 1), "the snapshot's last contained offset"
    assert late.highest_metadata_offset() == 2


def test_a_snapshot_over_an_image_removes_what_it_does_not_name():
    time = MockTime()
    queue = DeterministicEventQueue(time)
    listener = BrokerMetadataListener(1, time, queue)
    publisher = RecordingPublisher()
    listener.start_publishing(publisher)
    shared = SharedLogData(time)
    shared.elect_leader(0)
    LocalLogManager(0, shared).schedule_append(1, [v(register(0)), v(topic("foo", FOO))])
    LocalLogManager(1, shared).register(listener)
    shared.poll_all()
    queue.run_pending()
    assert publisher.published[-1][1].topics.get_topic("foo") is not None
    listener.handle_snapshot(
        LocalSnapshotReader(LocalSnapshot(OffsetAndEpoch(5, 1), 0, ((v(topic("bar", BAR)),),)))
    )
    queue.run_pending()
    delta, image = publisher.published[-1]
    assert image.topics.get_topic("foo") is None and image.cluster.broker(0) is None
    assert FOO in delta.topics_delta.deleted_topic_ids, "the replica manager sees foo deleted"


def test_a_record_that_does_not_replay_is_reported_and_skipped(quorum):
    _, listener, _, commit = quorum
    faults = []
    listener.fault_handler = lambda message, cause: faults.append(message)
    publisher = RecordingPublisher()
    listener.start_publishing(publisher)
    commit(RemoveTopicRecord(topic_id=FOO), topic("bar", BAR))
    assert faults == ["Error replaying metadata log record at offset 0"]
    assert publisher.published[-1][1].topics.get_topic("bar") is not None, "the rest of the batch applies"
