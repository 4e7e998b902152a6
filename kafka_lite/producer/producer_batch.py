"""One partition's batch of records on its way to the broker: bytes, futures, attempts, expiry.

Mirrors: org.apache.kafka.clients.producer.internals.ProducerBatch
         (clients/src/main/java/.../producer/internals/ProducerBatch.java, Kafka 0.11.0); the book's
         0.10 ``RecordBatch``, renamed in 0.11 when the log format took that name
Book:    chapter 2, 2.1.1-2.1.2
Differs: a record's future also takes callbacks after ``send`` (kafka-python's ``add_callback``),
         which its thunk runs after the thunk's own callback. No ``maxRecordSize``: Kafka keeps it
         only for its ``record-size-max`` metric, which kafka_lite does not report.

``try_append`` asks the batch's records builder whether the record fits (Kafka's ``hasRoomFor``,
sized exactly at the offset and timestamp deltas the record would get) and appends it, written
straight into the builder's buffer, encoded once as it will travel; it keeps a ``Thunk`` (the
record's callback and future) and returns the future, or ``None`` when the batch has no room: the
accumulator then closes this batch and starts the next one. The builder is the reference
``MemoryRecordsBuilder`` or its compiled twin, as ``common/record/codec.py`` chooses. When the
sender drains the batch it is ``close``d and its bytes built once; retries resend the same bytes
(and so the same sequence numbers, which is what lets an idempotent broker spot a duplicate).

Completing a batch is one step, whatever its size: the batch's ``ProduceRequestResult`` takes the
base offset (or the error), which answers every record's future at once, since each future reads
its offset as ``base_offset + relative_offset`` from the shared result; then each thunk's callbacks
run, in record order, and the result releases the threads waiting in ``get``.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import NamedTuple

from kafka_lite.common.errors import KafkaException, RecordBatchTooLargeException, TimeoutException
from kafka_lite.common.record import codec
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import NO_SEQUENCE, NO_TIMESTAMP
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.future_record_metadata import (
    INVALID_OFFSET,
    FutureRecordMetadata,
    ProduceRequestResult,
    RecordMetadata,
)

log = logging.getLogger(__name__)


class FinalState(enum.Enum):
    ABORTED = "ABORTED"
    FAILED = "FAILED"
    SUCCEEDED = "SUCCEEDED"


# Kafka's Callback.onCompletion(metadata, exception): given to ``send``, run when the record's batch completes.
Callback = Callable[[RecordMetadata | None, BaseException | None], object]


class Thunk(NamedTuple):
    """A record's callback and future, kept by its batch until the batch completes (Kafka's
    ``ProducerBatch.Thunk``); a split hands the thunk on to the record's new batch."""

    callback: Callback | None
    future: FutureRecordMetadata


def new_records_builder(
    compression: CompressionType, write_limit: int, is_transactional: bool = False
) -> MemoryRecordsBuilder:
    """An empty builder for a producer batch of at most ``write_limit`` bytes (its first record
    always fits): Kafka's ``RecordAccumulator.recordsBuilder``. A transactional producer's batches
    carry the transactional flag, which tells a read_committed consumer to look for their markers."""
    # The reference MemoryRecordsBuilder, or its compiled twin: see common/record/codec.py.
    return codec.MemoryRecordsBuilder(
        compression=compression, write_limit=write_limit, is_transactional=is_transactional
    )


class ProducerBatch:
    def __init__(
        self,
        tp: TopicPartition,
        records_builder: MemoryRecordsBuilder,
        now: int,
        initial_capacity: int = 0,
    ) -> None:
        self.created_ms = now
        self.topic_partition = tp
        self.produce_future = ProduceRequestResult(tp)
        self.records_builder = records_builder
        self.initial_capacity = initial_capacity  # the bytes reserved in the BufferPool for this batch
        self.record_count = 0
        # Every record's thunk, in record order: the batch answers them on completion, and a split
        # hands them on to the new batches.
        self.thunks: list[Thunk] = []
        self.attempts = 0
        self.last_attempt_ms = now
        self.last_append_time = now
        self.drained_ms = 0
        self.expiry_error_message: str | None = None
        self.retry = False
        self.final_state: FinalState | None = None
        self._records: MemoryRecords | None = None

    # -- filling ----------------------------------------------------------------------------------------

    def try_append(
        self,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[Header],
        now: int,
        callback: Callback | None = None,
    ) -> FutureRecordMetadata | None:
        """Append the record and return its future, or ``None`` if the batch has no room for it."""
        if not self.records_builder.try_append(timestamp, key, value, headers):
            return None
        self.last_append_time = now
        future = FutureRecordMetadata(
            self.produce_future,
            self.record_count,
            timestamp,
            None,  # v2 has no per-record checksum
            -1 if key is None else len(key),
            -1 if value is None else len(value),
            serialized_header_size(headers),
        )
        # Every future is kept, not only those with a callback: if the batch is split, each is
        # chained to its record's future in the new batch.
        self.thunks.append(Thunk(callback, future))
        self.record_count += 1
        return future

    def is_full(self) -> bool:
        return self.records_builder.is_full()

    def size_in_bytes(self) -> int:
        """The built size once closed; until then the builder's (uncompressed) estimate."""
        if self._records is not None:
            return self._records.size_in_bytes()
        return self.records_builder.estimated_size_in_bytes()

    # -- the producer state an idempotent producer stamps on at drain time -----------------------------

    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        if self._records is not None:
            raise KafkaException(f"{self}: producer state must be set before the batch is closed")
        self.records_builder.producer_id = producer_id
        self.records_builder.producer_epoch = producer_epoch
        self.records_builder.base_sequence = base_sequence

    @property
    def producer_id(self) -> int:
        return self.records_builder.producer_id

    @property
    def producer_epoch(self) -> int:
        return self.records_builder.producer_epoch

    @property
    def base_sequence(self) -> int:
        return self.records_builder.base_sequence

    def has_sequence(self) -> bool:
        return self.records_builder.base_sequence != NO_SEQUENCE

    # -- closing --------------------------------------------------------------------------------------

    def close_for_record_appends(self) -> None:
        """No more records (the accumulator moved on to a newer batch); the bytes are built later."""
        self.records_builder.close_for_record_appends()

    def close(self) -> None:
        """Build the batch's bytes, once; a retry sends the same bytes again."""
        self.records_builder.close_for_record_appends()
        if self._records is None:
            self._records = self.records_builder.build()

    def abort_record_appends(self) -> None:
        self.records_builder.close_for_record_appends()

    def is_closed(self) -> bool:
        return self._records is not None

    def records(self) -> MemoryRecords:
        self.close()
        return self._records

    # -- completing -------------------------------------------------------------------------------------

    def done(self, base_offset: int, log_append_time: int, exception: BaseException | None) -> bool:
        """Complete every record's future with the broker's answer (or ``exception``); false if the
        batch was aborted meanwhile, and so is already completed (and deallocated)."""
        final_state = FinalState.SUCCEEDED if exception is None else FinalState.FAILED
        if self.final_state is not None:
            if self.final_state is FinalState.ABORTED:
                # The response of a batch aborted meanwhile (a forced close): nothing left to tell.
                log.debug(
                    "ProduceResponse returned for %s after batch had already been aborted.",
                    self.topic_partition,
                )
                return False
            raise KafkaException(f"Batch has already been completed in final state {self.final_state.name}")
        self.final_state = final_state
        self._complete_future_and_fire_callbacks(base_offset, log_append_time, exception)
        return True

    def abort(self, exception: BaseException) -> None:
        """Fail every record's future without waiting for a response (close, fatal errors)."""
        if self.final_state is not None:
            raise KafkaException(f"Batch has already been completed in final state {self.final_state.name}")
        self.final_state = FinalState.ABORTED
        self._complete_future_and_fire_callbacks(INVALID_OFFSET, NO_TIMESTAMP, exception)

    def _complete_future_and_fire_callbacks(
        self, base_offset: int, log_append_time: int, exception: BaseException | None
    ) -> None:
        # The result is set before the callbacks run (they read it), and the latch released after,
        # so a thread woken from get() sees every callback already done, as in Kafka.
        self.produce_future.set(base_offset, log_append_time, exception)
        for thunk in self.thunks:
            if thunk.callback is not None:
                try:
                    if exception is None:
                        thunk.callback(thunk.future.value(), None)
                    else:
                        thunk.callback(None, exception)
                except Exception:
                    # As Kafka: a callback's failure is logged, never allowed to stop the sender
                    # thread or the other records' callbacks.
                    log.exception(
                        "Error executing user-provided callback on message for topic-partition %s",
                        self.topic_partition,
                    )
            if thunk.future.callbacks:
                thunk.future.fire_callbacks()
        self.produce_future.done()

    # -- time in the accumulator: retries and expiry ---------------------------------------------------

    def maybe_expire(
        self, request_timeout_ms: int, retry_backoff_ms: int, now: int, linger_ms: int, is_full: bool
    ) -> bool:
        """Whether the batch waited too long to be sent; the reason is kept for ``timeout_exception``.

        A batch is only expired while it sits in the accumulator (its leader unknown or unreachable):
        full and untouched for ``request.timeout.ms``, or not full and older than linger plus the
        timeout, or in retry and backed off for longer than the timeout.
        """
        if not self.in_retry() and is_full and request_timeout_ms < now - self.last_append_time:
            self.expiry_error_message = f"{now - self.last_append_time} ms has passed since last append"
        elif not self.in_retry() and request_timeout_ms < self.created_time_ms(now) - linger_ms:
            self.expiry_error_message = (
                f"{self.created_time_ms(now) - linger_ms} ms has passed since batch creation plus linger time"
            )
        elif self.in_retry() and request_timeout_ms < self.waited_time_ms(now) - retry_backoff_ms:
            self.expiry_error_message = f"{self.waited_time_ms(now) - retry_backoff_ms} ms has passed since last attempt plus backoff time"
        expired = self.expiry_error_message is not None
        if expired:
            self.expiry_error_message += f" (request.timeout.ms is {request_timeout_ms})"
            self.abort_record_appends()
        return expired

    def timeout_exception(self) -> TimeoutException:
        if self.expiry_error_message is None:
            raise KafkaException("Batch has not expired")
        return TimeoutException(
            f"Expiring {self.record_count} record(s) for {self.topic_partition[0]}-{self.topic_partition[1]}: "
            f"{self.expiry_error_message}"
        )

    def reenqueued(self, now: int) -> None:
        self.attempts += 1
        self.last_attempt_ms = max(self.last_append_time, now)
        self.last_append_time = max(self.last_append_time, now)
        self.retry = True

    def drained(self, now: int) -> None:
        self.drained_ms = max(self.drained_ms, now)

    def queue_time_ms(self) -> int:
        return self.drained_ms - self.created_ms

    def created_time_ms(self, now: int) -> int:
        return max(0, now - self.created_ms)

    def waited_time_ms(self, now: int) -> int:
        return max(0, now - self.last_attempt_ms)

    def in_retry(self) -> bool:
        return self.retry

    def __repr__(self) -> str:
        topic, partition = self.topic_partition
        return f"ProducerBatch(topicPartition={topic}-{partition}, recordCount={self.record_count})"

    # -- splitting a batch the broker refused as too large -----------------------------------------------

    def split(self, split_batch_size: int) -> list[ProducerBatch]:
        """This batch's records in new batches of about ``split_batch_size`` bytes, in the same order
        (Kafka's ``split``, after MESSAGE_TOO_LARGE): each record's thunk moves to its new batch, and
        its future is chained to the new batch's future for it.

        The new batches keep this batch's creation time, take no memory from the BufferPool (as in
        Kafka, they are made "off the accumulator"), and are not attempts yet. A batch that already
        has sequences hands them on in order, so the pieces cover exactly its numbers (Kafka 1.0).
        """
        records = list(self.records().records())
        if not records:
            raise KafkaException("Cannot split an empty producer batch.")
        if len(records) != len(self.thunks):
            raise KafkaException(f"{self}: {len(records)} records but {len(self.thunks)} thunks")
        batches: list[ProducerBatch] = []
        batch: ProducerBatch | None = None
        for record, thunk in zip(records, self.thunks, strict=True):
            if batch is None:
                batch = self._create_batch_off_accumulator_for_record(record, split_batch_size)
            # A newly created batch can always host the first record.
            if not batch._try_append_for_split(record, thunk):
                batches.append(batch)
                batch = self._create_batch_off_accumulator_for_record(record, split_batch_size)
                batch._try_append_for_split(record, thunk)
        batches.append(batch)
        if self.has_sequence():
            sequence = self.base_sequence
            for new_batch in batches:
                new_batch.set_producer_state(self.producer_id, self.producer_epoch, sequence)
                sequence += new_batch.record_count
        # Every future is chained by now, so a thread woken from get() follows its record's chain;
        # a flush waiting on this batch waits for the pieces too.
        for new_batch in batches:
            self.produce_future.add_dependent(new_batch.produce_future)
        self.produce_future.set(INVALID_OFFSET, NO_TIMESTAMP, RecordBatchTooLargeException())
        self.produce_future.done()
        return batches

    def _create_batch_off_accumulator_for_record(self, record, batch_size: int) -> ProducerBatch:
        size = max(
            batch_size, codec.estimate_size_in_bytes_upper_bound(record.key, record.value, record.headers)
        )
        builder = new_records_builder(
            self.records_builder.compression, size, self.records_builder.is_transactional
        )
        # initial_capacity 0: nothing to give back to the BufferPool when it is deallocated.
        return ProducerBatch(self.topic_partition, builder, self.created_ms, initial_capacity=0)

    def _try_append_for_split(self, record, thunk: Thunk) -> bool:
        """Append ``record`` (from a batch being split) if there is room: its thunk moves here, and
        its old future is chained to the future this batch gives it."""
        future = self.try_append(record.timestamp, record.key, record.value, record.headers, self.created_ms)
        if future is None:
            return False
        self.thunks[-1] = thunk  # the record keeps its thunk: the callback, and the future the caller holds
        thunk.future.chain(future)
        return True


def serialized_header_size(headers: list[Header] | tuple) -> int:
    """The headers' keys (UTF-8) and values, in bytes, or -1 for none (kafka-python's figure)."""
    if not headers:
        return -1
    return sum(len(key.encode("utf-8")) + (0 if value is None else len(value)) for key, value in headers)
