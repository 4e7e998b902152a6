"""The record accumulator: where records wait, batched per partition, until the sender takes them.

Mirrors: org.apache.kafka.clients.producer.internals.RecordAccumulator (with RecordAppendResult,
         ReadyCheckResult) and IncompleteBatches (clients/src/main/java/.../producer/internals/,
         Kafka 0.11.0), with Kafka 1.0.0's idempotent drain and in-sequence-order reenqueue (KAFKA-5494)
Book:    chapter 2, 2.1.1-2.1.2 (the accumulator, ready, drain)
Differs: always writes magic 2 batches (kafka_lite's broker speaks Produce v3); the pieces of a
         split batch are at most half its size (see ``split_and_reenqueue``); no per-topic
         compression-ratio estimate. A transactional producer's batches carry the transactional
         flag from their creation (Kafka sets it at drain); only partitions already added to the
         transaction are drained, as in 0.11.

Two threads meet here. The application's threads call ``append`` (through ``KafkaProducer.send``);
the sender thread calls ``ready``, ``drain`` and ``abort_expired_batches``. Each partition has a
deque of ``ProducerBatch``es, oldest first: appends go to the last batch, the sender takes the first.
Each deque is its own lock, held only for a few list operations, so appends to different
partitions never wait for each other and the sender never waits for a long append.

``append`` reserves the memory for a new batch from the ``BufferPool`` *outside* the deque's lock:
that reservation may block for ``max.block.ms``, and while it does, other threads must still be able
to append to this partition's current batch, and the sender to drain it (which is what frees memory).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafka_lite.clients.metadata import Cluster, Node
from kafka_lite.common.errors import KafkaException
from kafka_lite.common.record import codec
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import NO_SEQUENCE
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.producer.buffer_pool import BufferPool
from kafka_lite.producer.future_record_metadata import FutureRecordMetadata
from kafka_lite.producer.producer_batch import Callback, ProducerBatch, new_records_builder
from kafka_lite.producer.transaction_manager import TransactionManager

log = logging.getLogger(__name__)


@dataclass
class RecordAppendResult:
    future: FutureRecordMetadata
    batch_is_full: bool  # the partition has a batch ready by size: worth waking the sender
    new_batch_created: bool


@dataclass
class ReadyCheckResult:
    ready_nodes: set[Node]
    next_ready_check_delay_ms: int
    unknown_leader_topics: set[str] = field(default_factory=set)


class _BatchDeque(deque):
    """A partition's batches, oldest first, with the lock that guards them (Java's ``synchronized (dq)``)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


class IncompleteBatches:
    """Every batch not yet completed, in the accumulator or in flight: what ``flush`` waits for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._incomplete: dict[int, ProducerBatch] = {}  # insertion-ordered set, by identity

    def add(self, batch: ProducerBatch) -> None:
        with self._lock:
            self._incomplete[id(batch)] = batch

    def remove(self, batch: ProducerBatch) -> None:
        with self._lock:
            if self._incomplete.pop(id(batch), None) is None:
                raise KafkaException(
                    f"Remove from the incomplete set failed. This should be impossible: {batch}"
                )

    def copy_all(self) -> list[ProducerBatch]:
        with self._lock:
            return list(self._incomplete.values())

    def is_empty(self) -> bool:
        with self._lock:
            return not self._incomplete


class RecordAccumulator:
    def __init__(
        self,
        batch_size: int,
        total_size: int,
        compression: CompressionType,
        linger_ms: int,
        retry_backoff_ms: int,
        time: Time = SYSTEM,
        free: BufferPool | None = None,
        transaction_manager: TransactionManager | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.compression = compression
        self.linger_ms = linger_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.time = time
        self.free = free if free is not None else BufferPool(total_size, batch_size, time)
        # Set for an idempotent producer: drain stamps each new batch with its sequence.
        self.transaction_manager = transaction_manager
        # A transactional producer's batches carry the transactional flag, from the start: the
        # transactional id is fixed for the producer's life (Kafka sets the flag at drain time).
        self._is_transactional = transaction_manager is not None and transaction_manager.is_transactional()
        self.batches: dict[TopicPartition, _BatchDeque] = {}
        self.incomplete = IncompleteBatches()
        # Partitions with a batch in flight, when order must be kept (max.in.flight = 1): the sender
        # mutes a partition on drain and unmutes it when the response is handled.
        self.muted: set[TopicPartition] = set()
        self.drain_index = 0
        self.closed = False
        self._flushes_in_progress = 0
        self._appends_in_progress = 0
        self._counters_lock = threading.Lock()  # Java's AtomicIntegers for the two counters above
        self._batches_lock = threading.Lock()  # guards creating deques (Java's CopyOnWriteMap)

    # --8<-- [start:append]
    def append(
        self,
        tp: TopicPartition,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[Header],
        max_time_to_block: int,
        callback: Callback | None = None,
    ) -> RecordAppendResult:
        """Add a record to its partition's last batch, or to a new one; return its future.
        ``callback`` runs when the record's batch completes."""
        dq = self._get_or_create_deque(tp)
        with dq.lock:
            if self.closed:
                raise KafkaException("Cannot send after the producer is closed.")
            append_result = self._try_append(timestamp, key, value, headers, callback, dq)
            if append_result is not None:
                return append_result
        return self._append_to_new_batch(tp, timestamp, key, value, headers, callback, max_time_to_block, dq)

    def _append_to_new_batch(
        self,
        tp: TopicPartition,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[Header],
        callback: Callback | None,
        max_time_to_block: int,
        dq: _BatchDeque,
    ) -> RecordAppendResult:
        """The second half of Kafka's ``append``: the partition's last batch is full (or there is
        none), so reserve memory for a new one and append there.

        Kafka counts every append in progress (``appendsInProgress``) so that a forced close keeps
        aborting until no appender can still add a batch. Only this half can: the first holds the
        deque's lock from its ``closed`` check to its append into an existing batch, and so either
        ends before the close or sees it. So only this half is counted.
        """
        self._count_append(+1)
        reserved = 0
        try:
            # Reserve memory without holding the deque's lock. The size bound is the reference's
            # or its compiled twin's, as the batch's builder is: see common/record/codec.py.
            size = max(self.batch_size, codec.estimate_size_in_bytes_upper_bound(key, value, headers))
            log.debug("Allocating a new %d byte message buffer for topic %s partition %d", size, *tp)
            reserved = self.free.allocate(size, max_time_to_block)
            with dq.lock:
                # The producer may have closed while we waited for memory.
                if self.closed:
                    raise KafkaException("Cannot send after the producer is closed.")
                # Another thread may have created a batch meanwhile: use it, give the memory back.
                append_result = self._try_append(timestamp, key, value, headers, callback, dq)
                if append_result is not None:
                    return append_result
                builder = new_records_builder(self.compression, size, self._is_transactional)
                batch = ProducerBatch(tp, builder, self.time.milliseconds(), initial_capacity=size)
                future = batch.try_append(timestamp, key, value, headers, self.time.milliseconds(), callback)
                dq.append(batch)
                self.incomplete.add(batch)
                reserved = 0  # the batch owns the memory now
                return RecordAppendResult(future, len(dq) > 1 or batch.is_full(), True)
        finally:
            if reserved:
                self.free.deallocate(reserved)
            self._count_append(-1)

    def _try_append(
        self,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[Header],
        callback: Callback | None,
        dq: _BatchDeque,
    ) -> RecordAppendResult | None:
        """Append to the deque's last batch if it has room (caller holds the deque's lock)."""
        if dq:
            last = dq[-1]
            future = last.try_append(timestamp, key, value, headers, self.time.milliseconds(), callback)
            if future is None:
                last.close_for_record_appends()
            else:
                return RecordAppendResult(future, len(dq) > 1 or last.is_full(), False)
        return None

    # --8<-- [end:append]

    # --8<-- [start:ready]
    def ready(self, cluster: Cluster, now: int) -> ReadyCheckResult:
        """The nodes that lead a partition with a sendable batch, and how long until the next may be.

        A partition's first batch is sendable when it is full (or has a batch behind it), when it has
        lingered ``linger.ms``, when memory is exhausted (appenders are blocked), when the producer
        is closing, or when a flush is in progress; never while it backs off after a failed attempt.
        """
        # BEGIN SOLUTION
        ready_nodes: set[Node] = set()
        next_ready_check_delay_ms = LONG_MAX
        unknown_leader_topics: set[str] = set()

        exhausted = self.free.queued() > 0
        for tp, dq in list(self.batches.items()):
            leader = cluster.leader_for(*tp)
            with dq.lock:
                if leader is None and dq:
                    # Records wait for a partition whose leader is unknown: the sender asks for metadata.
                    unknown_leader_topics.add(tp[0])
                elif leader not in ready_nodes and tp not in self.muted and dq:
                    batch = dq[0]
                    waited_time_ms = batch.waited_time_ms(now)
                    backing_off = batch.attempts > 0 and waited_time_ms < self.retry_backoff_ms
                    time_to_wait_ms = self.retry_backoff_ms if backing_off else self.linger_ms
                    full = len(dq) > 1 or batch.is_full()
                    expired = waited_time_ms >= time_to_wait_ms
                    sendable = full or expired or exhausted or self.closed or self.flush_in_progress()
                    if sendable and not backing_off:
                        ready_nodes.add(leader)
                    else:
                        # Conservative: this partition's leader may turn out ready for another
                        # partition; then the sender wakes up early and sleeps again.
                        time_left_ms = max(time_to_wait_ms - waited_time_ms, 0)
                        next_ready_check_delay_ms = min(time_left_ms, next_ready_check_delay_ms)
        return ReadyCheckResult(ready_nodes, next_ready_check_delay_ms, unknown_leader_topics)
        # END SOLUTION

    # --8<-- [end:ready]

    def has_undrained(self) -> bool:
        for dq in list(self.batches.values()):
            with dq.lock:
                if dq:
                    return True
        return False

    # --8<-- [start:drain]
    def drain(
        self, cluster: Cluster, nodes: Iterable[Node], max_size: int, now: int
    ) -> dict[int, list[ProducerBatch]]:
        """For each node, at most one batch per partition it leads, up to ``max_size`` bytes in all.

        The scan over a node's partitions starts where the last one stopped (``drain_index``), so that
        when ``max.request.size`` cuts a request short, the partitions at the front of the list do not
        always win and the ones at the back starve.
        """
        # BEGIN SOLUTION
        batches: dict[int, list[ProducerBatch]] = {}
        for node in nodes:
            size = 0
            parts = cluster.partitions_for_node(node.id)
            ready: list[ProducerBatch] = []
            if parts:
                start = self.drain_index = self.drain_index % len(parts)
                while True:
                    batch, stop = self._drain_first(parts[self.drain_index], size, max_size, bool(ready), now)
                    if stop:
                        break
                    if batch is not None:
                        size += batch.size_in_bytes()
                        ready.append(batch)
                    self.drain_index = (self.drain_index + 1) % len(parts)
                    if self.drain_index == start:
                        break
            batches[node.id] = ready
        return batches
        # END SOLUTION

    def _drain_first(
        self, tp: TopicPartition, size: int, max_size: int, request_has_batches: bool, now: int
    ) -> tuple[ProducerBatch | None, bool]:
        """Take ``tp``'s first batch for the request being built, if it may go now; the flag says the
        scan of this node's partitions stops here (the request is full, or order forbids more)."""
        # BEGIN SOLUTION
        # Only proceed if the partition has no in-flight batch (when order is guaranteed).
        if tp in self.muted:
            return None, False
        dq = self.batches.get(tp)
        if dq is None:
            return None, False
        with dq.lock:
            first = dq[0] if dq else None
            if first is None:
                return None, False
            # Only drain a batch that is not backing off after a failure.
            if first.attempts > 0 and first.waited_time_ms(now) < self.retry_backoff_ms:
                return None, False
            if size + first.size_in_bytes() > max_size and request_has_batches:
                # The request is full. (A single batch bigger than max_size, possible with
                # compression, still goes alone.)
                return None, True
            if self.transaction_manager is not None and not self._may_send_idempotent(first):
                return None, True
            batch = dq.popleft()
            if self.transaction_manager is not None and not batch.has_sequence():
                self._assign_sequence(batch)
            batch.close()
            batch.drained(now)
            return batch, False
        # END SOLUTION

    # --8<-- [end:drain]

    def _may_send_idempotent(self, first: ProducerBatch) -> bool:
        """Whether an idempotent producer may drain ``first`` now (Kafka 1.0's checks in drain)."""
        tm = self.transaction_manager
        if not tm.is_send_to_partition_allowed(first.topic_partition):
            return False  # a transaction's partition is drained only once it has joined the transaction
        if not tm.producer_id_and_epoch.is_valid:
            return False  # no producer id yet (or it was reset): nothing can be numbered
        first_in_flight_sequence = tm.first_in_flight_sequence(first.topic_partition)
        # A batch with a sequence is a retry. It goes again only when it is the lowest sequence in
        # flight, so retried batches reach the broker in their original order; until then the
        # partition waits, which cuts its requests in flight to one.
        return not (
            first.has_sequence()
            and first_in_flight_sequence != NO_SEQUENCE
            and first.base_sequence != first_in_flight_sequence
        )

    def _assign_sequence(self, batch: ProducerBatch) -> None:
        """Number a batch on its first drain; it keeps the numbers through every retry, since the
        first attempt may have been written, and new numbers would make the retry a duplicate."""
        tm = self.transaction_manager
        tp = batch.topic_partition
        pid = tm.producer_id_and_epoch
        batch.set_producer_state(pid.producer_id, pid.epoch, tm.sequence_number(tp))
        tm.increment_sequence_number(tp, batch.record_count)
        log.debug("Assigned producerId %d and producerEpoch %d to batch with base sequence %d being sent to "
                  "partition %s-%d", pid.producer_id, pid.epoch, batch.base_sequence, *tp)  # fmt: skip
        tm.add_in_flight_batch(batch)

    # --8<-- [start:abort_expired_batches]
    def abort_expired_batches(self, request_timeout_ms: int, now: int) -> list[ProducerBatch]:
        """Remove and return the batches that waited too long to be sent (Kafka 0.11's ``expiredBatches``).

        Only batches still in the accumulator expire: one in flight is bounded by the request timeout
        instead. A muted partition is skipped, so a later batch never expires while an earlier one
        is still in flight (that would reorder the partition). The caller fails and deallocates them.
        """
        expired_batches: list[ProducerBatch] = []
        for tp, dq in list(self.batches.items()):
            if tp in self.muted:
                continue
            with dq.lock:
                last_batch = dq[-1] if dq else None
                while dq:
                    batch = dq[0]
                    is_full = batch is not last_batch or batch.is_full()
                    # Expire from the front, stopping at the first batch that has not expired: the
                    # ones behind it are younger.
                    if not batch.maybe_expire(
                        request_timeout_ms, self.retry_backoff_ms, now, self.linger_ms, is_full
                    ):
                        break
                    expired_batches.append(dq.popleft())
        return expired_batches

    # --8<-- [end:abort_expired_batches]

    def reenqueue(self, batch: ProducerBatch, now: int) -> None:
        """Put a batch that failed with a retriable error back at the *front* of its deque: it was
        older than everything behind it, and goes again first to keep the partition in order."""
        batch.reenqueued(now)
        dq = self._get_or_create_deque(batch.topic_partition)
        with dq.lock:
            if self.transaction_manager is not None:
                self._insert_in_sequence_order(dq, batch)
            else:
                dq.appendleft(batch)

    def split_and_reenqueue(self, big_batch: ProducerBatch) -> int:
        """Split a batch the broker refused as too large and put the pieces at the *front* of its
        deque, in order; return how many there are. The caller deallocates ``big_batch``.

        Kafka splits into ``batch.size`` pieces: its split is for a compressed batch that came out
        bigger than the compression-ratio estimate promised. kafka_lite has no estimate, so a batch
        is refused only when ``batch.size`` is above the broker's limit: each split halves the
        pieces (never above ``batch.size``) until they fit, or a single record is left to fail.
        """
        split_batch_size = min(self.batch_size, big_batch.size_in_bytes() // 2)
        pieces = big_batch.split(split_batch_size)
        dq = self._get_or_create_deque(big_batch.topic_partition)
        # The pieces are treated as if they were never tried: from the last, each goes in front.
        for batch in reversed(pieces):
            self.incomplete.add(batch)
            with dq.lock:
                if self.transaction_manager is not None:
                    # They carry the big batch's sequences: track them as in flight, and keep order.
                    self.transaction_manager.add_in_flight_batch(batch)
                    self._insert_in_sequence_order(dq, batch)
                else:
                    dq.appendleft(batch)
        return len(pieces)

    def _insert_in_sequence_order(self, dq: _BatchDeque, batch: ProducerBatch) -> None:
        """Several retried batches of one partition come back one by one, in any order: keep the
        front of the deque sorted by sequence, so they are resent in their original order."""
        if not batch.has_sequence():
            raise KafkaException(
                "Trying to reenqueue a batch which doesn't have a sequence even though idempotence is enabled."
            )
        position = 0
        while (
            position < len(dq)
            and dq[position].has_sequence()
            and dq[position].base_sequence < batch.base_sequence
        ):
            position += 1
        dq.insert(position, batch)

    def deallocate(self, batch: ProducerBatch) -> None:
        """The batch is done: forget it and give its memory back to the pool."""
        self.incomplete.remove(batch)
        self.free.deallocate(batch.initial_capacity)

    # -- flush ------------------------------------------------------------------------------------------

    def begin_flush(self) -> None:
        """From now until ``await_flush_completion`` returns, every batch is ready at once."""
        with self._counters_lock:
            self._flushes_in_progress += 1

    def end_flush(self) -> None:
        """End a flush begun without a caller waiting on it (the sender's, before a transaction ends)."""
        with self._counters_lock:
            self._flushes_in_progress -= 1

    def flush_in_progress(self) -> bool:
        return self._flushes_in_progress > 0

    def await_flush_completion(self, timeout_ms: int | None = None) -> bool:
        """Wait for every batch incomplete now (not those appended later); false on timeout."""
        try:
            deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
            # A batch split meanwhile is waited for through its pieces (its result's dependents).
            return all(batch.produce_future.await_all(deadline) for batch in self.incomplete.copy_all())
        finally:
            with self._counters_lock:
                self._flushes_in_progress -= 1

    def has_incomplete(self) -> bool:
        return not self.incomplete.is_empty()

    # -- close --------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Refuse further appends; what is in the deques is still sent (unless aborted)."""
        self.closed = True

    def abort_incomplete_batches(self) -> None:
        """Fail every incomplete batch (a forced close), including one a thread is appending right now."""
        # Loop while appends are in progress: an appender that passed the closed check before close
        # may still add a batch; and aborting frees memory that a blocked appender is waiting for.
        while True:
            self.abort_batches(KafkaException("Producer is closed forcefully."))
            if not self._appends_in_progress_now():
                break
        # No thread appends any more (all see the closed flag); one last pass for a batch added by
        # the last appender.
        self.abort_batches(KafkaException("Producer is closed forcefully."))
        self.batches.clear()

    def abort_batches(self, reason: BaseException) -> None:
        """Fail every incomplete batch with ``reason`` (a forced close, or a fatal producer error)."""
        for batch in self.incomplete.copy_all():
            dq = self._get_or_create_deque(batch.topic_partition)
            with dq.lock:
                batch.abort_record_appends()
                if batch in dq:
                    dq.remove(batch)
            batch.abort(reason)
            self.deallocate(batch)

    def abort_undrained_batches(self, reason: BaseException) -> None:
        """Fail the batches never drained (a transaction being aborted); those sent run their course."""
        for batch in self.incomplete.copy_all():
            dq = self._get_or_create_deque(batch.topic_partition)
            aborted = False
            with dq.lock:
                if not batch.is_closed():
                    aborted = True
                    batch.abort_record_appends()
                    if batch in dq:
                        dq.remove(batch)
            if aborted:
                batch.abort(reason)
                self.deallocate(batch)

    def mute_partition(self, tp: TopicPartition) -> None:
        self.muted.add(tp)

    def unmute_partition(self, tp: TopicPartition) -> None:
        self.muted.discard(tp)

    # -- plumbing -------------------------------------------------------------------------------------------

    def _get_or_create_deque(self, tp: TopicPartition) -> _BatchDeque:
        dq = self.batches.get(tp)
        if dq is not None:
            return dq
        with self._batches_lock:
            return self.batches.setdefault(tp, _BatchDeque())

    def _count_append(self, delta: int) -> None:
        with self._counters_lock:
            self._appends_in_progress += delta

    def _appends_in_progress_now(self) -> bool:
        with self._counters_lock:
            return self._appends_in_progress > 0
