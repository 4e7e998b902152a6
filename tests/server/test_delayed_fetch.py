"""A waiting fetch counts the bytes that arrived by positions, as Kafka's DelayedFetch does: one
leader on a MockTime, the test appending and fetching through its replica manager. No sockets."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.protocol.fetch_request import CONSUMER_REPLICA_ID
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_segment import LogOffsetMetadata, LogSegment
from kafka_lite.server.replica_manager import FetchMetadata, FetchPartitionRequest
from kafka_lite.testing.in_process_replicas import (
    in_process_replica_manager,
    leader_and_isr,
    replicate,
    replicated_partition,
)

pytestmark = pytest.mark.unit

TP = ("clicks", 0)
VALUE = bytes(100)
BATCH = MemoryRecords.with_records([(1000, None, VALUE)]).size_in_bytes()  # one record's batch


def append(leader) -> None:
    leader.append_records(
        1000, 1, False, {TP: MemoryRecords.with_records([(1000, None, VALUE)])}, lambda _: None
    )


def fetch(leader, offset: int, min_bytes: int) -> list:
    """A consumer's fetch that may wait 1,000 ms; its answers (at most one) land in the list."""
    answers: list = []
    request = {TP: FetchPartitionRequest(offset, 1 << 20)}
    leader.fetch_messages(
        FetchMetadata(min_bytes, 1 << 20, CONSUMER_REPLICA_ID, request, 1000), answers.append
    )
    return answers


@pytest.fixture
def leader(tmp_path):
    """Broker 0 leads ``TP`` alone (so its HW follows its LEO); segments of at most two batches."""
    manager = in_process_replica_manager(tmp_path, 0, MockTime(), **{"log.segment.bytes": 2 * BATCH})
    manager.become_leader_or_follower(leader_and_isr(TP, leader=0, isr=[0], replicas=[0]))
    yield manager
    manager.shutdown(checkpoint_hw=False)
    manager.log_manager.shutdown()


def test_a_waiting_fetch_completes_at_min_bytes_counting_by_position_not_by_reading(leader, monkeypatch):
    segment_reads = []
    read = LogSegment.read
    monkeypatch.setattr(
        LogSegment, "read", lambda self, *a, **k: segment_reads.append(a[0]) or read(self, *a, **k)
    )
    answers = fetch(leader, 0, min_bytes=2 * BATCH)
    assert answers == [], "nothing to read yet: the fetch waits"
    append(leader)
    assert answers == [], f"{BATCH} bytes have come, fewer than fetch.min.bytes"
    assert segment_reads == [], "the check counted the bytes from positions, without reading"
    append(leader)
    assert len(answers) == 1 and answers[0][TP].size == 2 * BATCH, "two batches: enough, answered at once"
    assert segment_reads == [0], "one read: the answer's"


def test_a_waiting_fetch_whose_data_went_to_a_new_segment_completes_at_once(leader):
    append(leader)
    append(leader)  # the first segment is full
    answers = fetch(leader, 2, min_bytes=1 << 20)
    assert answers == [], "at the end of the log: the fetch waits, its offset at the end of segment 0"
    append(leader)  # rolls: offset 2 now opens segment 2
    # Kafka's case C: the fetch offset's segment is older than the end's, so positions cannot be
    # compared; the fetch completes, far below fetch.min.bytes, and the read finds the batch.
    assert len(answers) == 1 and answers[0][TP].size == BATCH
    assert [s.base_offset for s in leader.get_partition(TP).log.log_segments()] == [0, 2]


def test_offsets_compare_by_segment_and_position_only_when_both_are_placed():
    fetched = LogOffsetMetadata(5, 0, 100)
    end = LogOffsetMetadata(9, 0, 400)
    rolled = LogOffsetMetadata(12, 10, 0)
    assert end.position_diff(fetched) == 300
    assert fetched.on_older_segment(rolled) and not rolled.on_older_segment(fetched)
    with pytest.raises(KafkaException, match="different segments"):
        rolled.position_diff(fetched)
    with pytest.raises(KafkaException, match="no segment position"):
        LogOffsetMetadata(5).on_older_segment(end)


def test_a_consumer_ahead_of_the_high_watermark_waits_for_it_to_pass(tmp_path):
    """A consumer may ask for an offset its partition's leader has but has not committed (a new leader
    whose HW lags the old one's): the fetch waits for the HW instead of answering empty at once, which
    would set the consumer fetching in a loop until then."""
    with replicated_partition(tmp_path, MockTime(), TP) as (leader, f1, f2):
        append(leader)
        append(leader)  # offsets 0 and 1 on the leader alone: the HW is still 0
        answers = fetch(leader, 1, min_bytes=1)
        assert answers == [], "nothing committed at or after offset 1: the fetch waits"
        for follower in (f1, f2, f1, f2):  # fetch, then fetch again from the new LEO: the HW moves
            replicate(leader, follower, TP)
        assert leader.get_partition(TP).high_watermark() == 2
        assert len(answers) == 1 and answers[0][TP].size == BATCH, "the batch holding offset 1"
