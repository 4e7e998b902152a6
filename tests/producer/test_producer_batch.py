"""A producer batch: records written into a v2 batch, one future per record, completion, expiry."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.errors import KafkaException, NotLeaderForPartitionException, TimeoutException
from kafka_lite.common.record import MemoryRecordsBuilder
from kafka_lite.common.record.default_record import Header, record_size_upper_bound, size_in_bytes
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.producer_batch import ProducerBatch

pytestmark = pytest.mark.unit
T0 = 1_500_000_000_000
TP = ("orders", 3)


def new_batch(write_limit: int = 1024, now: int = T0) -> ProducerBatch:
    return ProducerBatch(TP, MemoryRecordsBuilder(write_limit=write_limit), now, initial_capacity=write_limit)


def test_records_are_written_into_one_v2_batch_and_read_back():
    batch = new_batch()
    headers = (Header("trace", b"abc"), Header("none", None))
    batch.try_append(T0, b"k1", b"v1", headers, T0)
    batch.try_append(T0 + 5, None, b"v2", (), T0 + 5)
    batch.try_append(T0 + 9, b"k3", None, (), T0 + 9)
    (v2_batch,) = list(batch.records().batches())
    records = list(v2_batch)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records] == [
        (0, T0, b"k1", b"v1", headers),
        (1, T0 + 5, None, b"v2", ()),
        (2, T0 + 9, b"k3", None, ()),
    ]
    assert batch.record_count == 3


def test_try_append_refuses_a_record_once_the_batch_is_full_but_always_takes_the_first():
    batch = new_batch(write_limit=200)
    assert batch.try_append(T0, None, b"x" * 500, (), T0) is not None, "the first record always fits"
    assert batch.is_full()
    assert batch.try_append(T0, None, b"y", (), T0) is None

    batch = new_batch(write_limit=200)
    appended = 0
    while batch.try_append(T0, None, b"z" * 20, (), T0) is not None:
        appended += 1
    # Each record takes 27 bytes, and room is checked for exactly that (Kafka 0.11's hasRoomFor sizes
    # the record at its own offset and timestamp deltas, not at its upper bound, 44): the batch (61
    # bytes of header) takes another record while 61 + 27 * n + 27 <= 200, so it holds 5.
    assert size_in_bytes(5, 0, None, b"z" * 20) == 27
    assert record_size_upper_bound(None, b"z" * 20, ()) == 44
    assert appended == 5
    assert batch.size_in_bytes() == 61 + 5 * 27


def test_a_batch_fills_to_its_write_limit_exactly():
    batch = new_batch(write_limit=61 + 2 * 27)
    assert batch.try_append(T0, None, b"z" * 20, (), T0) is not None
    assert batch.try_append(T0, None, b"z" * 20, (), T0) is not None, "the second record fits exactly"
    assert batch.is_full()
    assert batch.try_append(T0, None, b"z", (), T0) is None
    assert batch.records().size_in_bytes() == 61 + 2 * 27


def test_a_later_timestamp_can_make_the_next_record_too_big():
    # The timestamp delta is a varlong: 63 ms takes one byte, 64 ms two, so the same record does
    # not fit 64 ms later.
    batch = new_batch(write_limit=61 + 2 * 27)
    batch.try_append(T0, None, b"z" * 20, (), T0)
    assert batch.records_builder.has_room_for(T0 + 63, None, b"z" * 20, ())
    assert not batch.records_builder.has_room_for(T0 + 64, None, b"z" * 20, ())


def test_done_completes_every_future_with_its_own_offset_and_runs_the_callbacks():
    batch = new_batch()
    futures = [batch.try_append(T0 + i, b"k", b"v" * i, (), T0) for i in range(3)]
    seen = []
    futures[0].add_callback(lambda md: seen.append(("ok", md.offset)))
    futures[1].add_errback(lambda e: seen.append(("error", e)))  # not called: the batch succeeds
    futures[2].add_callback(lambda md: 1 / 0)  # a failing callback must not stop the others
    futures[2].add_callback(lambda md: seen.append(("ok", md.offset)))
    assert not futures[0].is_done()
    batch.done(base_offset=100, log_append_time=-1, exception=None)
    assert seen == [("ok", 100), ("ok", 102)]
    metadata = futures[1].get(0)
    assert (metadata.topic, metadata.partition, metadata.offset, metadata.timestamp) == (
        "orders",
        3,
        101,
        T0 + 1,
    )
    assert (metadata.serialized_key_size, metadata.serialized_value_size) == (1, 1)
    # A callback added after completion runs at once.
    futures[0].add_callback(lambda md: seen.append(("late", md.offset)))
    assert seen[-1] == ("late", 100)


def test_every_records_metadata_refers_to_the_batchs_one_topic_partition():
    # Kafka's batch builds one TopicPartition and each RecordMetadata refers to it: a callback on
    # every record (MirrorMaker's) costs no TopicPartition per record. The batch is made here from
    # a plain (topic, partition) pair, as the accumulator makes it.
    batch = new_batch()
    answers = []
    futures = [
        batch.try_append(T0, None, b"v", (), T0, callback=lambda md, e: answers.append(md)) for _ in range(3)
    ]
    batch.done(0, -1, None)
    assert len(answers) == 3
    first = futures[0].get(0).topic_partition
    assert isinstance(first, TopicPartition) and first == TopicPartition("orders", 3)
    assert all(md.topic_partition is first for md in answers + [f.get(0) for f in futures])


def test_log_append_time_replaces_the_create_time_in_the_metadata():
    batch = new_batch()
    future = batch.try_append(T0, None, b"v", (), T0)
    batch.done(7, T0 + 999, None)
    assert future.get(0).timestamp == T0 + 999


def test_a_failed_batch_fails_every_future_with_its_error():
    batch = new_batch()
    futures = [batch.try_append(T0, None, b"v", (), T0) for _ in range(2)]
    errors = []
    futures[0].add_errback(errors.append)
    error = NotLeaderForPartitionException("orders-3: not the leader")
    batch.done(-1, -1, error)
    assert errors == [error]
    for future in futures:
        with pytest.raises(NotLeaderForPartitionException, match="not the leader"):
            future.get(0)
        assert future.failed() and future.exception is error


def test_a_batch_completes_once_and_a_late_response_after_abort_is_ignored():
    batch = new_batch()
    future = batch.try_append(T0, None, b"v", (), T0)
    batch.abort(KafkaException("Producer is closed forcefully."))
    assert batch.done(5, -1, None) is False, (
        "the response of an aborted batch is ignored (not deallocated twice)"
    )
    with pytest.raises(KafkaException, match="closed forcefully"):
        future.get(0)
    done = new_batch()
    done.try_append(T0, None, b"v", (), T0)
    assert done.done(5, -1, None) is True
    with pytest.raises(KafkaException, match="already been completed in final state SUCCEEDED"):
        done.done(6, -1, None)


def test_get_times_out_naming_the_wait():
    future = new_batch().try_append(T0, None, b"v", (), T0)
    with pytest.raises(TimeoutException, match="Timeout after waiting for 10 ms"):
        future.get(0.01)


def test_maybe_expire_full_batch_untouched_for_request_timeout():
    batch = new_batch(now=T0)
    batch.try_append(T0, None, b"v", (), T0)
    assert not batch.maybe_expire(100, 10, T0 + 100, 0, is_full=True)
    assert batch.maybe_expire(100, 10, T0 + 101, 0, is_full=True)
    assert str(batch.timeout_exception()) == (
        "Expiring 1 record(s) for orders-3: 101 ms has passed since last append (request.timeout.ms is 100)"
    )
    assert batch.try_append(T0, None, b"v", (), T0) is None, "an expired batch takes no more records"


def test_maybe_expire_not_full_batch_counts_linger_from_creation():
    batch = new_batch(now=T0)
    batch.try_append(T0 + 50, None, b"v", (), T0 + 50)  # a later append does not renew a non-full batch
    assert not batch.maybe_expire(100, 10, T0 + 120, 20, is_full=False)
    assert batch.maybe_expire(100, 10, T0 + 121, 20, is_full=False)
    assert "101 ms has passed since batch creation plus linger time" in str(batch.timeout_exception())


def test_maybe_expire_batch_in_retry_counts_from_its_last_attempt_plus_backoff():
    batch = new_batch(now=T0)
    batch.try_append(T0, None, b"v", (), T0)
    batch.reenqueued(T0 + 1000)
    assert batch.attempts == 1 and batch.in_retry()
    assert not batch.maybe_expire(100, 10, T0 + 1110, 0, is_full=True)
    assert batch.maybe_expire(100, 10, T0 + 1111, 0, is_full=True)
    assert "101 ms has passed since last attempt plus backoff time" in str(batch.timeout_exception())


def test_producer_state_is_stamped_before_the_bytes_are_built_and_kept_for_retries():
    batch = new_batch()
    batch.try_append(T0, None, b"v", (), T0)
    batch.set_producer_state(producer_id=42, producer_epoch=1, base_sequence=7)
    first = bytes(batch.records().buffer())
    (v2_batch,) = list(batch.records().batches())
    assert (v2_batch.producer_id, v2_batch.producer_epoch, v2_batch.base_sequence) == (42, 1, 7)
    assert bytes(batch.records().buffer()) == first, "a retry sends the same bytes"
    with pytest.raises(KafkaException, match="before the batch is closed"):
        batch.set_producer_state(43, 0, 0)


def test_callbacks_run_in_record_order_whatever_order_they_were_added_in():
    batch = new_batch()
    futures = [batch.try_append(T0, None, b"v", (), T0) for _ in range(5)]
    seen = []
    for future in reversed(futures[1:4]):
        future.add_callback(lambda md: seen.append(md.offset))
    assert [f.callbacks is None for f in futures] == [True, False, False, False, True]
    batch.done(base_offset=10, log_append_time=-1, exception=None)
    assert seen == [11, 12, 13]
    assert [f.get(0).offset for f in futures] == [10, 11, 12, 13, 14]


def test_the_batch_keeps_a_thunk_per_record_whose_callback_runs_before_the_futures_in_record_order():
    batch = new_batch()
    seen = []
    futures = [
        batch.try_append(
            T0, None, b"v%d" % i, (), T0, callback=lambda md, e, i=i: seen.append(("thunk", i, md.offset))
        )
        for i in range(3)
    ]
    futures[0].add_callback(lambda md: seen.append(("future", 0, md.offset)))
    assert [thunk.future for thunk in batch.thunks] == futures
    batch.done(base_offset=40, log_append_time=-1, exception=None)
    assert seen == [("thunk", 0, 40), ("future", 0, 40), ("thunk", 1, 41), ("thunk", 2, 42)]
    assert [f.get(0).offset for f in futures] == [40, 41, 42]


def test_a_failed_batch_gives_each_thunk_the_error_once():
    batch = new_batch()
    seen = []
    for i in range(2):
        batch.try_append(
            T0, None, b"v", (), T0, callback=lambda md, e, i=i: seen.append((i, md, type(e).__name__))
        )
    batch.done(base_offset=-1, log_append_time=-1, exception=NotLeaderForPartitionException("moved"))
    assert seen == [(0, None, "NotLeaderForPartitionException"), (1, None, "NotLeaderForPartitionException")]


def split_three_ways(batch: ProducerBatch) -> list[ProducerBatch]:
    """Split ``batch`` (of 100-byte values) into pieces of about two records each."""
    return batch.split(61 + 2 * 110)


def test_a_split_batchs_futures_answer_from_their_pieces_with_callbacks_added_before_and_after():
    batch = new_batch(write_limit=4096)
    futures = [batch.try_append(T0, None, bytes([i]) * 100, (), T0) for i in range(5)]
    seen = []
    futures[3].add_callback(lambda md: seen.append(("before", md.offset)))
    waiter = threading.Thread(target=lambda: seen.append(("get", futures[4].get(5).offset)))
    waiter.start()
    pieces = split_three_ways(batch)
    assert [p.record_count for p in pieces] == [2, 2, 1]
    assert not futures[0].is_done(), "an old future answers from its record's piece, not yet answered"
    assert batch.produce_future.completed(), "the old batch is completed, its futures chained to the pieces'"
    futures[1].add_callback(lambda md: seen.append(("after", md.offset)))
    futures[4].add_errback(lambda e: seen.append(("errback", type(e).__name__)))
    # The pieces are answered out of order, each with its own base offset. The get() waiting since
    # before the split woke at the split, found its future chained, and waits on its record's piece.
    assert waiter.is_alive()
    pieces[2].done(base_offset=900, log_append_time=-1, exception=None)
    waiter.join(5)
    assert seen == [("get", 900)]
    pieces[0].done(base_offset=100, log_append_time=-1, exception=None)
    assert seen == [("get", 900), ("after", 101)]
    assert not futures[2].is_done()
    pieces[1].done(base_offset=500, log_append_time=-1, exception=NotLeaderForPartitionException("moved"))
    # The piece that failed ran no success callback, the one that succeeded no errback.
    assert seen == [("get", 900), ("after", 101)]
    assert [f.is_done() for f in futures] == [True] * 5
    assert [f.get(0).offset for f in (futures[0], futures[1], futures[4])] == [100, 101, 900]
    for f in futures[2:4]:
        with pytest.raises(NotLeaderForPartitionException):
            f.get(0)
    assert futures[3].exception is not None and futures[3].failed()


def test_a_piece_split_again_still_answers_the_first_batchs_futures():
    batch = new_batch(write_limit=4096)
    futures = [batch.try_append(T0, None, bytes([i]) * 100, (), T0) for i in range(5)]
    seen = []
    for f in futures:
        f.add_callback(lambda md: seen.append(md.offset))
    first, second, third = split_three_ways(batch)
    halves = first.split(61 + 110)  # the first piece's two records, one in each half
    assert [h.record_count for h in halves] == [1, 1]
    for base, piece in ((10, halves[1]), (20, second), (30, third), (5, halves[0])):
        piece.done(base_offset=base, log_append_time=-1, exception=None)
    assert seen == [10, 20, 21, 30, 5], "each piece runs its records' callbacks when it is answered"
    assert [f.get(0).offset for f in futures] == [5, 10, 20, 21, 30]
    assert batch.produce_future.completed() and first.produce_future.completed()
