"""What ``send`` hands back: a future per record, completed when its batch's response arrives.

Mirrors: org.apache.kafka.clients.producer.RecordMetadata, and ProduceRequestResult and
         FutureRecordMetadata (clients/src/main/java/.../producer/internals/, Kafka 0.11.0)
Book:    chapter 2, 2.1.1 (send returns a Future; synchronous send is ``send(...).get()``)
Differs: ``get(timeout)`` takes seconds and raises the send's own exception, as kafka-python's
         future does (Kafka's takes a TimeUnit and wraps the error in an ExecutionException).
         ``RecordMetadata`` is kafka-python's named tuple (the same fields as Kafka's accessors,
         plus ``topic_partition``). Callbacks can also be added to the future
         (``add_callback``/``add_errback``, kafka-python's shape); they run on the sender thread,
         after the record's ``Thunk`` callback, as Kafka's do.

One ``ProduceRequestResult`` belongs to a batch: the broker answers per partition, so one base
offset (and one error) completes every record of the batch at once. Each record's
``FutureRecordMetadata`` only remembers its place in the batch (``relative_offset``) and its own
timestamp and sizes; its offset is ``base_offset + relative_offset``.

A batch the broker refuses as too large is split (``ProducerBatch.split``): each record is appended
to a new, smaller batch, which gives it a new future, and the old future is *chained* to the new one
(``chain``). The old batch's result is then completed with ``RecordBatchTooLargeException``, which
wakes any thread in ``get``; finding the chain, it waits on the new future instead. The application
only ever holds the first future of the chain, and every question it asks follows the chain to the
last.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.topic_partition import TopicPartition

log = logging.getLogger(__name__)

INVALID_OFFSET = -1  # ProduceResponse.INVALID_OFFSET: the batch failed, or acks=0 gave no offset


class RecordMetadata(NamedTuple):
    """Where a record was written: its partition and offset, and the timestamp the log keeps
    (kafka-python's ``RecordMetadata``; Kafka's has the same facts behind accessors)."""

    topic: str
    partition: int
    topic_partition: TopicPartition
    offset: int  # -1 when unknown (acks=0: the broker does not answer)
    timestamp: int  # CreateTime the producer set, or the broker's LogAppendTime
    checksum: int | None  # the v0/v1 record's CRC; None for v2, whose CRC covers the whole batch
    serialized_key_size: int  # -1 for a null key
    serialized_value_size: int  # -1 for a null value
    serialized_header_size: int  # the headers' keys and values, in bytes; -1 for no headers


class ProduceRequestResult:
    """The outcome of one batch: base offset, log append time or error; a latch for ``get``."""

    def __init__(self, topic_partition: tuple[str, int]) -> None:
        # Built once for the batch, as Kafka's batch keeps one TopicPartition: every record's
        # RecordMetadata refers to it.
        self.topic_partition = TopicPartition(*topic_partition)
        self.base_offset = INVALID_OFFSET
        self.log_append_time = NO_TIMESTAMP
        self.error: BaseException | None = None
        self.is_set = False  # set() called: callbacks added from now on run at once
        self.lock = threading.Lock()
        self._latch = threading.Event()
        self.dependents: list[ProduceRequestResult] = []  # the results of a split batch's pieces

    def set(self, base_offset: int, log_append_time: int, error: BaseException | None) -> None:
        """Record the outcome; ``done`` (after the callbacks have run) releases the waiters."""
        with self.lock:
            self.base_offset = base_offset
            self.log_append_time = log_append_time
            self.error = error
            self.is_set = True

    def done(self) -> None:
        self._latch.set()

    def completed(self) -> bool:
        return self._latch.is_set()

    def await_(self, timeout_s: float | None = None) -> bool:
        """Block until ``done`` (up to ``timeout_s``); true if it completed."""
        return self._latch.wait(timeout_s)

    def add_dependent(self, result: ProduceRequestResult) -> None:
        """A result ``flush`` must also wait for: a piece of this batch, after a split.

        Kafka 3.9's ``ProduceRequestResult.addDependent``: in 0.11 a split completes the old batch's
        result at once, so a ``flush`` waiting on it returned before the pieces were even sent.
        """
        self.dependents.append(result)

    def await_all(self, deadline_s: float | None = None) -> bool:
        """Block until this result and its dependents are done, up to the ``time.monotonic()``
        ``deadline_s``; true if they all completed (Kafka 3.9's ``await`` with dependents)."""
        remaining = None if deadline_s is None else max(0.0, deadline_s - time.monotonic())
        if not self.await_(remaining):
            return False
        return all(dependent.await_all(deadline_s) for dependent in self.dependents)


class FutureRecordMetadata:
    """One record's future: its batch's result plus the record's own offset within the batch."""

    __slots__ = (
        "callbacks",
        "checksum",
        "create_timestamp",
        "next_record_metadata",
        "relative_offset",
        "result",
        "serialized_header_size",
        "serialized_key_size",
        "serialized_value_size",
    )

    def __init__(
        self,
        result: ProduceRequestResult,
        relative_offset: int,
        create_timestamp: int,
        checksum: int | None,
        serialized_key_size: int,
        serialized_value_size: int,
        serialized_header_size: int,
    ) -> None:
        self.result = result
        self.relative_offset = relative_offset
        self.create_timestamp = create_timestamp
        self.checksum = checksum
        self.serialized_key_size = serialized_key_size
        self.serialized_value_size = serialized_value_size
        self.serialized_header_size = serialized_header_size
        # The record's future in the batch it was split into, if its batch was split.
        self.next_record_metadata: FutureRecordMetadata | None = None
        # (on_success, fn) pairs; None until the first is added, which most records never have.
        self.callbacks: list[tuple[bool, Callable]] | None = None

    def chain(self, future: FutureRecordMetadata) -> None:
        """Answer from ``future`` from now on: the record moved to another batch (a split)."""
        if self.next_record_metadata is None:
            self.next_record_metadata = future
        else:
            self.next_record_metadata.chain(future)

    # -- the Future interface ---------------------------------------------------------------------------

    def get(self, timeout: float | None = None) -> RecordMetadata:
        """Wait for the batch's response (up to ``timeout`` seconds); the metadata, or the send's error."""
        deadline = None if timeout is None else time.monotonic() + timeout
        occurred = self.result.await_(timeout)
        if self.next_record_metadata is not None:
            # Split: the record's answer comes from its new batch, within what is left of the timeout.
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            return self.next_record_metadata.get(remaining)
        if not occurred:
            raise TimeoutException(f"Timeout after waiting for {timeout * 1000:.0f} ms.")
        return self.value_or_error()

    def value_or_error(self) -> RecordMetadata:
        if self.result.error is not None:
            raise self.result.error
        return self.value()

    def _last(self) -> FutureRecordMetadata:
        """The future that answers for this record: this one, or the last it was chained to."""
        future = self
        while future.next_record_metadata is not None:
            future = future.next_record_metadata
        return future

    def is_done(self) -> bool:
        return self._last().result.completed()

    def succeeded(self) -> bool:
        last = self._last()
        return last.result.completed() and last.result.error is None

    def failed(self) -> bool:
        last = self._last()
        return last.result.completed() and last.result.error is not None

    @property
    def exception(self) -> BaseException | None:
        last = self._last()
        return last.result.error if last.result.completed() else None

    def value(self) -> RecordMetadata:
        """The metadata once the batch succeeded (Kafka's ``FutureRecordMetadata.value``)."""
        if self.next_record_metadata is not None:
            return self.next_record_metadata.value()
        result = self.result
        offset = (
            INVALID_OFFSET
            if result.base_offset == INVALID_OFFSET
            else result.base_offset + self.relative_offset
        )
        # A LogAppendTime topic overwrites the producer's timestamp with the broker's.
        timestamp = (
            self.create_timestamp if result.log_append_time == NO_TIMESTAMP else result.log_append_time
        )
        topic_partition = result.topic_partition
        return RecordMetadata(
            topic_partition.topic,
            topic_partition.partition,
            topic_partition,
            offset,
            timestamp,
            self.checksum,
            self.serialized_key_size,
            self.serialized_value_size,
            self.serialized_header_size,
        )

    # -- callbacks (Kafka's Callback.onCompletion, split in two as kafka-python's future does) -----------

    def add_callback(self, fn: Callable[[RecordMetadata], object]) -> FutureRecordMetadata:
        """Call ``fn(metadata)`` when the send succeeds (at once if it already has)."""
        self._add(True, fn)
        return self

    def add_errback(self, fn: Callable[[BaseException], object]) -> FutureRecordMetadata:
        """Call ``fn(exception)`` when the send fails (at once if it already has)."""
        self._add(False, fn)
        return self

    def _add(self, on_success: bool, fn: Callable) -> None:
        # The batch that completes this record (its own, or the one it was split into) runs the
        # callbacks it finds here once its result is set; under that result's lock, a callback is
        # either added before (and run by the batch) or finds the result set (and runs here).
        while True:
            last = self._last()
            with last.result.lock:
                if not last.result.is_set:
                    if self.callbacks is None:
                        self.callbacks = []
                    self.callbacks.append((on_success, fn))
                    return
                if last.next_record_metadata is None:
                    break
            # Split since we looked (a split chains the future before it sets the old result).
        self._fire_one(on_success, fn)

    def fire_callbacks(self) -> None:
        """Run the callbacks added before the result was set (the batch's thunk calls this once)."""
        for on_success, fn in self.callbacks or ():
            self._fire_one(on_success, fn)

    def _fire_one(self, on_success: bool, fn: Callable) -> None:
        error = self._last().result.error
        if (error is None) != on_success:
            return
        try:
            fn(self.value() if error is None else error)
        except Exception:
            # As Kafka's ProducerBatch: a user callback's failure is logged, never allowed to stop
            # the sender thread or the other records' callbacks.
            log.exception(
                "Error executing user-provided callback on message for topic-partition %s",
                self.result.topic_partition,
            )
