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

Nothing else holds a record's future: the batch reaches its records' futures only to run their
callbacks, so a future registers with its batch's result when it is given its first callback
(Kafka's batch keeps a ``Thunk`` for every record, because Kafka's ``send`` takes the callback). A
future the application drops, as a producer sending in a loop does, is freed as soon as ``send``
returns, instead of living until its batch's response among the objects Python's garbage collector
walks.

A batch the broker refuses as too large is split (``ProducerBatch.split``), and its result then
names the pieces and where each begins in the old batch; a future of the old batch follows that to
its record's piece and its place there. The old result is released only when every piece has been
answered, so a ``get`` waiting on it wakes to its record's answer.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.topic_partition import TopicPartition

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
        # (relative offset, future) of each record given a callback before the result was set
        self.callback_futures: list[tuple[int, FutureRecordMetadata]] = []
        # After a split: (the first relative offset it took, its result) for each piece, in order;
        # and the pieces' results point back here, to release this one when the last is answered.
        self.split_into: list[tuple[int, ProduceRequestResult]] | None = None
        self.split_from: ProduceRequestResult | None = None
        self.pieces_pending = 0

    def set(self, base_offset: int, log_append_time: int, error: BaseException | None) -> None:
        """Record the outcome; ``done`` (after the callbacks have run) releases the waiters."""
        with self.lock:
            self.base_offset = base_offset
            self.log_append_time = log_append_time
            self.error = error
            self.is_set = True

    def done(self) -> None:
        self._latch.set()
        parent = self.split_from
        if parent is not None:
            with parent.lock:
                parent.pieces_pending -= 1
                last = parent.pieces_pending == 0
            if last:
                parent.done()

    def piece_for(self, relative_offset: int) -> tuple[ProduceRequestResult, int]:
        """Where the record at ``relative_offset`` went when this batch was split: the piece's result
        and the record's place in it (only called once ``split_into`` is set)."""
        # The first piece starts at 0, so some piece always takes the offset: the last that starts
        # at or before it.
        start, piece = self.split_into[bisect_right(self.split_into, relative_offset, key=itemgetter(0)) - 1]
        return piece, relative_offset - start

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
        result, _ = self._answer()
        if result.error is not None:
            raise result.error
        return self.value()

    def is_done(self) -> bool:
        return self.result.completed()

    def succeeded(self) -> bool:
        return self.result.completed() and self._answer()[0].error is None

    def failed(self) -> bool:
        return self.result.completed() and self._answer()[0].error is not None

    @property
    def exception(self) -> BaseException | None:
        return self._answer()[0].error if self.result.completed() else None

    def value(self) -> RecordMetadata:
        """The metadata once the batch succeeded (Kafka's ``FutureRecordMetadata.value``)."""
        result, relative_offset = self._answer()
        offset = (
            INVALID_OFFSET if result.base_offset == INVALID_OFFSET else result.base_offset + relative_offset
        )
        # A LogAppendTime topic overwrites the producer's timestamp with the broker's.
        timestamp = (
            self.create_timestamp if result.log_append_time == NO_TIMESTAMP else result.log_append_time
        )
        topic, partition = result.topic_partition
        return RecordMetadata(
            topic, partition, offset, timestamp, self.serialized_key_size, self.serialized_value_size
        )

    def _answer(self) -> tuple[ProduceRequestResult, int]:
        """The result that answers this record, and the record's place in that result's batch: its
        own batch's, or, after a split, the piece's it moved to (Kafka follows a chain of futures
        instead, one per record)."""
        result, relative_offset = self.result, self.relative_offset
        while result.split_into is not None:
            result, relative_offset = result.piece_for(relative_offset)
        return result, relative_offset

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
        while True:
            result, relative_offset = self._answer()
            with result.lock:
                if result.split_into is not None:
                    continue  # split since we looked: follow it to the piece
                if not result.is_set:
                    if self.callbacks is None:
                        # The first callback: from now on the batch must reach this future.
                        self.callbacks = []
                        result.callback_futures.append((relative_offset, self))
                    self.callbacks.append((on_success, fn))
                    return
            break
        self._fire_one(on_success, fn)

    def fire_callbacks(self) -> None:
        """Run the callbacks added before the result was set (the batch calls this once, on completion)."""
        for on_success, fn in self.callbacks or ():
            self._fire_one(on_success, fn)

    def _fire_one(self, on_success: bool, fn: Callable) -> None:
        error = self._answer()[0].error
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
