"""The record accumulator under MockTime: when a partition is ready (size, linger, flush, memory,
close, back-off), what drain takes per node, expiry, and aborting on close."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.time import MockTime
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.producer.record_accumulator import RecordAccumulator
from labs.lab05_producer import test_producer_lab as lab05
from tests.producer.support import cluster_of, node

pytestmark = pytest.mark.unit
# A record of this value takes 57 bytes, and room is checked for exactly that (Kafka 0.11's
# hasRoomFor). A 320-byte batch (61-byte header) takes a 4th record at 61 + 3 * 57 + 57 = 289 bytes,
# and no 5th (346).
VALUE = b"v" * 50
BATCH_SIZE = 320


def accumulator(
    time: MockTime, batch_size: int = BATCH_SIZE, memory: int = 10_000, linger_ms: int = 10
) -> RecordAccumulator:
    return RecordAccumulator(
        batch_size=batch_size,
        total_size=memory,
        compression=CompressionType.NONE,
        linger_ms=linger_ms,
        retry_backoff_ms=100,
        time=time,
    )


def append(acc: RecordAccumulator, tp=("t", 0), value: bytes = VALUE, max_block_ms: int = 0):
    return acc.append(tp, acc.time.milliseconds(), None, value, (), max_block_ms)


CLUSTER = cluster_of({("t", 0): 0, ("t", 1): 0, ("t", 2): 1, ("u", 0): 1})


def test_a_batch_is_ready_when_full_and_the_next_record_starts_a_new_one():
    acc = accumulator(MockTime())
    results = [append(acc) for _ in range(4)]
    assert [r.new_batch_created for r in results] == [True, False, False, False]
    assert not results[2].batch_is_full
    assert acc.ready(CLUSTER, acc.time.milliseconds()).ready_nodes == set()
    fifth = append(acc)
    assert fifth.new_batch_created and fifth.batch_is_full, "a second batch makes the partition ready"
    assert [b.record_count for b in acc.batches[("t", 0)]] == [4, 1]
    assert acc.ready(CLUSTER, acc.time.milliseconds()).ready_nodes == {node(0)}


def test_a_batch_is_ready_once_it_has_lingered_linger_ms():
    time = MockTime()
    acc = accumulator(time, linger_ms=10)
    append(acc)
    result = acc.ready(CLUSTER, time.milliseconds())
    assert result.ready_nodes == set() and result.next_ready_check_delay_ms == 10
    time.advance(9)
    assert acc.ready(CLUSTER, time.milliseconds()).next_ready_check_delay_ms == 1
    time.advance(1)
    assert acc.ready(CLUSTER, time.milliseconds()).ready_nodes == {node(0)}


def test_nothing_to_send_means_no_reason_to_wake_up():
    acc = accumulator(MockTime())
    result = acc.ready(CLUSTER, acc.time.milliseconds())
    assert result.ready_nodes == set() and result.next_ready_check_delay_ms == LONG_MAX


# The lab's tests of ready() are this module's too: one check, two callers, so they cannot drift.


def test_a_flush_or_a_close_makes_every_batch_ready_at_once():
    acc = lab05.check_a_flush_or_a_close_makes_every_batch_ready_at_once()
    with pytest.raises(KafkaException, match="Cannot send after the producer is closed"):
        append(acc)


def test_appenders_blocked_on_memory_make_every_batch_ready():
    error = lab05.check_appenders_blocked_on_memory_make_every_batch_ready()
    assert "buffer.memory (640 bytes)" in str(error)


def test_a_partition_without_a_leader_names_its_topic_for_a_metadata_update():
    lab05.check_a_partition_without_a_leader_names_its_topic_for_a_metadata_update()


def test_drain_takes_at_most_one_batch_per_partition_per_node():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    for _ in range(6):  # two batches on t-0
        append(acc, ("t", 0))
    append(acc, ("t", 1))
    append(acc, ("t", 2))
    drained = acc.drain(CLUSTER, {node(0), node(1)}, max_size=1_000_000, now=time.milliseconds())
    assert {n: [(b.topic_partition, b.record_count) for b in bs] for n, bs in drained.items()} == {
        0: [(("t", 0), 4), (("t", 1), 1)],
        1: [(("t", 2), 1)],
    }
    assert [b.record_count for b in acc.batches[("t", 0)]] == [2], "the second batch of t-0 waits"
    assert all(b.is_closed() for bs in drained.values() for b in bs)


def test_drain_stops_at_max_request_size_and_starts_the_next_drain_where_it_stopped():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    for partition in (0, 1):
        for _ in range(4):
            append(acc, ("t", partition))
    full_batch = acc.batches[("t", 0)][0].size_in_bytes()
    first = acc.drain(CLUSTER, {node(0)}, max_size=full_batch + 10, now=time.milliseconds())
    assert [b.topic_partition for b in first[0]] == [("t", 0)]
    for _ in range(4):
        append(acc, ("t", 0))
    second = acc.drain(CLUSTER, {node(0)}, max_size=full_batch + 10, now=time.milliseconds())
    assert [b.topic_partition for b in second[0]] == [("t", 1)], "t-1 goes first this time: no starvation"


def test_a_single_batch_larger_than_max_request_size_still_drains_alone():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    append(acc, ("t", 0))
    drained = acc.drain(CLUSTER, {node(0)}, max_size=10, now=time.milliseconds())
    assert len(drained[0]) == 1


def test_a_reenqueued_batch_goes_first_and_waits_retry_backoff_ms():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    for _ in range(5):
        append(acc, ("t", 0))
    (batch,) = acc.drain(CLUSTER, {node(0)}, 1_000_000, time.milliseconds())[0]
    acc.reenqueue(batch, time.milliseconds())
    assert acc.batches[("t", 0)][0] is batch, "the retry is back at the front of its deque"
    result = acc.ready(CLUSTER, time.milliseconds())
    assert result.ready_nodes == set() and result.next_ready_check_delay_ms == 100
    assert acc.drain(CLUSTER, {node(0)}, 1_000_000, time.milliseconds()) == {0: []}
    time.advance(100)
    assert acc.ready(CLUSTER, time.milliseconds()).ready_nodes == {node(0)}
    assert acc.drain(CLUSTER, {node(0)}, 1_000_000, time.milliseconds())[0] == [batch]


def test_a_muted_partition_is_neither_ready_nor_drained():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    append(acc, ("t", 0))
    acc.mute_partition(("t", 0))
    assert acc.ready(CLUSTER, time.milliseconds()).ready_nodes == set()
    assert acc.drain(CLUSTER, {node(0)}, 1_000_000, time.milliseconds()) == {0: []}
    acc.unmute_partition(("t", 0))
    assert acc.ready(CLUSTER, time.milliseconds()).ready_nodes == {node(0)}


def test_batches_that_wait_longer_than_request_timeout_expire_oldest_first():
    time = MockTime()
    acc = accumulator(time, linger_ms=10)
    append(acc, ("t", 0))
    time.advance(50)
    append(acc, ("t", 1))
    time.advance(60)  # t-0's batch: 110 ms old, 100 past linger; t-1's: 60 ms old
    assert acc.abort_expired_batches(request_timeout_ms=100, now=time.milliseconds()) == []
    time.advance(1)
    (expired,) = acc.abort_expired_batches(request_timeout_ms=100, now=time.milliseconds())
    assert expired.topic_partition == ("t", 0) and not acc.batches[("t", 0)]
    assert "101 ms has passed since batch creation plus linger time" in str(expired.timeout_exception())


def test_a_muted_partition_does_not_expire():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    append(acc, ("t", 0))
    acc.mute_partition(("t", 0))
    time.advance(1000)
    assert acc.abort_expired_batches(100, time.milliseconds()) == []


def test_deallocate_gives_the_memory_back_and_flush_completes_with_the_batches():
    time = MockTime()
    acc = accumulator(time, memory=10_000, linger_ms=0)
    append(acc, ("t", 0))
    assert acc.free.available_memory() == 10_000 - BATCH_SIZE
    (batch,) = acc.drain(CLUSTER, {node(0)}, 1_000_000, time.milliseconds())[0]
    acc.begin_flush()
    batch.done(0, -1, None)
    acc.deallocate(batch)
    assert acc.await_flush_completion(timeout_ms=0) is True
    assert acc.free.available_memory() == 10_000 and not acc.has_incomplete()


def test_abort_incomplete_batches_fails_every_future_and_frees_the_memory():
    time = MockTime()
    acc = accumulator(time, memory=10_000, linger_ms=0)
    futures = [append(acc, ("t", p)).future for p in (0, 1, 2)]
    acc.drain(CLUSTER, {node(1)}, 1_000_000, time.milliseconds())  # t-2's batch is "in flight"
    acc.close()
    acc.abort_incomplete_batches()
    for future in futures:
        with pytest.raises(KafkaException, match="Producer is closed forcefully"):
            future.get(0)
    assert acc.free.available_memory() == 10_000 and not acc.has_incomplete() and not acc.batches


def test_a_record_larger_than_batch_size_gets_a_batch_of_its_own_size():
    time = MockTime()
    acc = accumulator(time, linger_ms=0)
    assert append(acc, ("t", 0), value=b"x" * 1000).new_batch_created
    (batch,) = acc.batches[("t", 0)]
    assert batch.initial_capacity == 61 + 21 + 1 + 2 + 1000 + 1, "the record's upper bound, not batch.size"
    assert acc.free.available_memory() == 10_000 - batch.initial_capacity
    # The batch was sized for the record's upper bound; the record took fewer bytes (its deltas are
    # one byte each), and has_room_for sizes the next record exactly, as Kafka 0.11's does.
    assert batch.size_in_bytes() == 61 + 2 + (1 + 1 + 1 + 1 + 2 + 1000 + 1)
    assert not append(acc, ("t", 0), value=b"y").new_batch_created, "16 bytes were left: a small record fits"
    assert append(acc, ("t", 0), value=b"y" * 20).new_batch_created, "the big record's batch has no room left"
