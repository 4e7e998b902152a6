"""What ``send`` hands back: a future per record, completed when its batch's response arrives.

Mirrors: org.apache.kafka.clients.producer.RecordMetadata, and ProduceRequestResult and
         FutureRecordMetadata (clients/src/main/java/.../producer/internals/, Kafka 0.11.0)
Book:    chapter 2, 2.1.1 (send returns a Future; synchronous send is ``send(...).get()``)
Differs: ``get(timeout)`` takes seconds and raises the send's own exception, as kafka-python's
         future does (Kafka's takes a TimeUnit and wraps the error in an ExecutionException).
         Callbacks are added to the future (``add_callback``/``add_errback``, kafka-python's shape)
         rather than passed to ``send``; they run on the sender thread, as Kafka's do.

One ``ProduceRequestResult`` belongs to a batch: the broker answers per partition, so one base
offset (and one error) completes every record of the batch at once. Each record's
``FutureRecordMetadata`` only remembers its place in the batch (``relative_offset``) and its own
timestamp and sizes; its offset is ``base_offset + relative_offset``. That keeps the per-record cost
of ``send`` to one small object, and of completion to nothing for a record without callbacks: its
future is done when its batch's result is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.topic import TopicPartition

log = logging.getLogger(__name__)

INVALID_OFFSET = -1  # ProduceResponse.INVALID_OFFSET: the batch failed, or acks=0 gave no offset


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where a record was written: its partition and offset, and the timestamp the log keeps."""

    topic: str
    partition: int
    offset: int  # -1 when unknown (acks=0: the broker does not answer)
    timestamp: int  # CreateTime the producer set, or the broker's LogAppendTime
    serialized_key_size: int  # -1 for a null key
    serialized_value_size: int  # -1 for a null value

    @property
    def topic_partition(self) -> TopicPartition:
        return (self.topic, self.partition)


class ProduceRequestResult:
    """The outcome of one batch: base offset, log append time or error; a latch for ``get``."""

    def __init__(self, topic_partition: TopicPartition) -> None:
        self.topic_partition = topic_partition
        self.base_offset = INVALID_OFFSET
        self.log_append_time = NO_TIMESTAMP
        self.error: BaseException | None = None
        self.is_set = False  # set() called: callbacks added from now on run at once
        self.lock = threading.Lock()
        self._latch = threading.Event()

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


class FutureRecordMetadata:
    """One record's future: its batch's result plus the record's own offset within the batch."""

    __slots__ = (
        "callbacks",
        "create_timestamp",
        "relative_offset",
        "result",
        "serialized_key_size",
        "serialized_value_size",
    )

    def __init__(
        self,
        result: ProduceRequestResult,
        relative_offset: int,
        create_timestamp: int,
        serialized_key_size: int,
        serialized_value_size: int,
    ) -> None:
        self.result = result
        self.relative_offset = relative_offset
        self.create_timestamp = create_timestamp
        self.serialized_key_size = serialized_key_size
        self.serialized_value_size = serialized_value_size
        # (on_success, fn) pairs; None until the first is added, which most records never have.
        self.callbacks: list[tuple[bool, Callable]] | None = None

    # -- the Future interface ---------------------------------------------------------------------------

    def get(self, timeout: float | None = None) -> RecordMetadata:
        """Wait for the batch's response (up to ``timeout`` seconds); the metadata, or the send's error."""
        if not self.result.await_(timeout):
            raise TimeoutException(f"Timeout after waiting for {timeout * 1000:.0f} ms.")
        if self.result.error is not None:
            raise self.result.error
        return self.value()

    def is_done(self) -> bool:
        return self.result.completed()

    def succeeded(self) -> bool:
        return self.result.completed() and self.result.error is None

    def failed(self) -> bool:
        return self.result.completed() and self.result.error is not None

    @property
    def exception(self) -> BaseException | None:
        return self.result.error if self.result.completed() else None

    def value(self) -> RecordMetadata:
        """The metadata once the batch succeeded (Kafka's ``FutureRecordMetadata.value``)."""
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
        topic, partition = result.topic_partition
        return RecordMetadata(
            topic, partition, offset, timestamp, self.serialized_key_size, self.serialized_value_size
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
        with self.result.lock:
            if not self.result.is_set:
                if self.callbacks is None:
                    self.callbacks = []
                self.callbacks.append((on_success, fn))
                return
        self._fire_one(on_success, fn)

    def fire_callbacks(self) -> None:
        """Run the callbacks added before the result was set (the batch calls this once, on completion)."""
        for on_success, fn in self.callbacks or ():
            self._fire_one(on_success, fn)

    def _fire_one(self, on_success: bool, fn: Callable) -> None:
        error = self.result.error
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
