"""Where the Raft leader's appends wait to become batches: filled in the leader's epoch, drained
into the log after ``append_linger_ms`` or as soon as a batch is full.

Mirrors: org.apache.kafka.raft.internals.BatchAccumulator
         (raft/src/main/java/org/apache/kafka/raft/internals/BatchAccumulator.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a plain lock, no memory pool (a batch is freed with its bytes); ``append`` is Kafka's
         ``append`` and ``appendAtomic`` in one, chosen by ``is_atomic``.

The state machine (the controller) appends from its own thread; the Raft thread drains. The
accumulator hands out offsets as records arrive, so ``schedule_append`` can return the offset a record
will have before it is written: the leader alone writes this log, and nothing else can take an offset
in between. An append from an older epoch is refused (``NotLeaderException``): its leader has been
replaced, and the offsets it was promised no longer mean anything.

Like the producer's RecordAccumulator, batching trades a little latency (``append_linger_ms``) for
fewer, larger log appends and fewer fsyncs; a full batch is drained at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.control_record_utils import with_leader_change_message
from kafka_lite.common.time import Time
from kafka_lite.raft.internals.batch_builder import BatchBuilder
from kafka_lite.raft.raft_client import NotLeaderException
from kafka_lite.raft.timer import LONG_MAX


@dataclass
class CompletedBatch:
    """A batch ready for the log: its first offset, the records as appended, and its bytes."""

    base_offset: int
    records: list[Any]
    data: MemoryRecords
    append_timestamp: int
    num_records: int = field(default=0)

    def __post_init__(self) -> None:
        if not self.num_records:
            self.num_records = len(self.records)


class BatchAccumulator:
    def __init__(
        self,
        epoch: int,
        base_offset: int,
        linger_ms: int,
        max_batch_size: int,
        time: Time,
        serialize: Callable[[Any], bytes],
    ) -> None:
        self._epoch = epoch
        self._linger_ms = linger_ms
        self._max_batch_size = max_batch_size
        self._time = time
        self._serialize = serialize
        self._next_offset = base_offset
        self._current_batch: BatchBuilder | None = None
        self._completed: list[CompletedBatch] = []
        # When the first record of the current batch came: the linger counts from there.
        self._linger_deadline_ms: int | None = None
        self._append_lock = threading.Lock()

    def epoch(self) -> int:
        return self._epoch

    def append(self, epoch: int, records: list[Any], is_atomic: bool = False) -> int:
        """Append ``records`` in ``epoch``; the offset the last of them will have. Atomic records
        all go in one batch; others may be split across batches."""
        if epoch < self._epoch:
            raise NotLeaderException("Append failed because the epoch doesn't match")
        if epoch > self._epoch:
            raise IllegalArgumentException(
                f"Attempt to append from epoch {epoch} which is larger than the current epoch {self._epoch}"
            )
        if not records:
            raise IllegalArgumentException("Attempt to append an empty list of records")
        with self._append_lock:
            groups = [records] if is_atomic else [[r] for r in records]
            for group in groups:
                batch, needed, values = self._maybe_allocate_batch(group)
                for record, value in zip(group, values, strict=True):
                    batch.append_record(record, value, needed // len(group))
                    self._next_offset += 1
            self._maybe_reset_linger()
            return self._next_offset - 1

    def _maybe_allocate_batch(self, records: list[Any]) -> tuple[BatchBuilder, int, list[bytes]]:
        if self._current_batch is not None:
            fit = self._current_batch.bytes_needed(records)
            if fit is not None:
                return self._current_batch, fit[0], fit[1]
            # Full: it is ready now, whatever the linger says.
            self._complete_current_batch()
        self._current_batch = BatchBuilder(
            self._next_offset, self._epoch, self._time.milliseconds(), self._max_batch_size, self._serialize
        )
        fit = self._current_batch.bytes_needed(records)
        assert fit is not None  # an empty batch takes anything
        return self._current_batch, fit[0], fit[1]

    def _maybe_reset_linger(self) -> None:
        if self._linger_deadline_ms is None:
            self._linger_deadline_ms = self._time.milliseconds() + self._linger_ms

    def _complete_current_batch(self) -> None:
        batch = self._current_batch
        if batch is None or batch.num_records() == 0:
            return
        self._completed.append(
            CompletedBatch(batch.base_offset(), batch.records(), batch.build(), batch.append_time_ms())
        )
        self._current_batch = None

    # --8<-- [start:append_leader_change_message]
    def append_leader_change_message(
        self, leader_change_message: dict[str, Any], current_time_ms: int
    ) -> None:
        """The new leader's first batch: the LEADER_CHANGE control record, at the next offset, in a
        batch of its own (Kafka's ``appendLeaderChangeMessage``)."""
        with self._append_lock:
            self._complete_current_batch()
            data = with_leader_change_message(
                self._next_offset, current_time_ms, self._epoch, leader_change_message
            )
            self._completed.append(
                CompletedBatch(self._next_offset, [], data, current_time_ms, num_records=1)
            )
            self._next_offset += 1

    # --8<-- [end:append_leader_change_message]

    def force_drain(self) -> None:
        """Make everything appended so far ready now (the leader change message must not linger)."""
        with self._append_lock:
            self._complete_current_batch()
            self._linger_deadline_ms = None

    def needs_drain(self, current_time_ms: int) -> bool:
        return self.time_until_drain(current_time_ms) <= 0

    def time_until_drain(self, current_time_ms: int) -> int:
        """0 when there is something to write now, else how long the linger has left (LONG_MAX: nothing waits)."""
        with self._append_lock:
            if self._completed:
                return 0
            if self._linger_deadline_ms is None or self._current_batch is None:
                return LONG_MAX
            return max(0, self._linger_deadline_ms - current_time_ms)

    def drain(self) -> list[CompletedBatch]:
        """Take every batch, the one being filled included."""
        with self._append_lock:
            self._complete_current_batch()
            self._linger_deadline_ms = None
            drained, self._completed = self._completed, []
            return drained

    def is_empty(self) -> bool:
        with self._append_lock:
            return not self._completed and (
                self._current_batch is None or self._current_batch.num_records() == 0
            )

    def next_offset(self) -> int:
        return self._next_offset

    def close(self) -> None:
        # What is left was never written: the state machine learns of it through its epoch ending.
        with self._append_lock:
            self._completed = []
            self._current_batch = None
