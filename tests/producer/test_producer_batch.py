"""A producer batch: records written into a v2 batch, one future per record, completion, expiry."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import KafkaException, NotLeaderForPartitionException, TimeoutException
from kafka_lite.common.record import MemoryRecordsBuilder
from kafka_lite.common.record.compiled import record_size_upper_bound
from kafka_lite.common.record.default_record import Header, size_in_bytes
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
