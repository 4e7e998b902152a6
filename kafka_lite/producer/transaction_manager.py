"""The idempotent producer's bookkeeping: its producer id and epoch, and a sequence per partition.

Mirrors: org.apache.kafka.clients.producer.internals.TransactionManager, its idempotent half, and
         ProducerIdAndEpoch (clients/src/main/java/.../producer/internals/, Kafka 1.0.0: up to five
         requests in flight, with batches kept in sequence order, KAFKA-5494)
Book:    beyond the book (idempotence is Kafka 0.11's, KIP-98); chapter 2, 2.1.2 is where it acts
Differs: no transactions (no transactional id, coordinator or transaction states). When a batch
         that was given a sequence fails for good, Kafka 1.0 renumbers the batches behind it
         (``adjustSequencesDueToFailedBatch``) by rewriting their built headers if it failed with
         retries to spare; kafka_lite instead resets the producer id at once: the batches behind
         fail or start again from sequence 0 under a new id, and no batch is ever written twice.
         (Kafka 0.11 reset it only once the broker refused a later batch as out of order, or a
         batch expired while being retried.)

How idempotence works: the broker hands the producer an id (InitProducerId). Every batch the
producer sends to a partition carries that id, the epoch, and the sequence number of its first
record; the next batch to that partition starts where the last one ended. The broker keeps the last
five batches per producer and partition: a batch it already has is a retry whose response was lost,
and it answers with the first write's offsets instead of writing it again; a batch that skips ahead
means one before it is missing, and it answers OUT_OF_ORDER_SEQUENCE_NUMBER.

The producer's half: a batch gets its sequence once, when first drained, and keeps it through every
retry (a new number would make the broker take a retry as new data). With up to five requests in
flight, an error on one batch makes the ones behind it fail too (out of order); each is put back in
its deque in sequence order, and only the lowest sequence in flight may be drained again, so the
batches go out again in their original order.
"""

from __future__ import annotations

import bisect
import logging
import threading
from dataclasses import dataclass

from kafka_lite.common.errors import Errors
from kafka_lite.common.record.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.producer_batch import ProducerBatch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProducerIdAndEpoch:
    producer_id: int
    epoch: int

    @property
    def is_valid(self) -> bool:
        return self.producer_id >= 0


NONE = ProducerIdAndEpoch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH)


class TransactionManager:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # the sender thread writes; close() and metrics() may read
        self.producer_id_and_epoch = NONE
        self.init_producer_id_in_flight = False
        self.fatal_error: BaseException | None = None
        # The base sequence of the next batch bound for each partition.
        self.next_sequence: dict[TopicPartition, int] = {}
        # The sequence of the last record of the last acknowledged batch; -1 before the first.
        self.last_acked_sequence: dict[TopicPartition, int] = {}
        # The batches sent and not yet completed, per partition, in sequence order.
        self.in_flight_batches_by_sequence: dict[TopicPartition, list[ProducerBatch]] = {}

    # -- the producer id ---------------------------------------------------------------------------------

    def has_producer_id(self, producer_id: int | None = None) -> bool:
        current = self.producer_id_and_epoch
        return current.is_valid if producer_id is None else current.producer_id == producer_id

    def has_producer_id_and_epoch(self, producer_id: int, epoch: int) -> bool:
        return self.producer_id_and_epoch == ProducerIdAndEpoch(producer_id, epoch)

    def set_producer_id_and_epoch(self, producer_id_and_epoch: ProducerIdAndEpoch) -> None:
        log.info(
            "ProducerId set to %d with epoch %d",
            producer_id_and_epoch.producer_id,
            producer_id_and_epoch.epoch,
        )
        self.producer_id_and_epoch = producer_id_and_epoch

    def reset_producer_id(self) -> None:
        """Forget the id and every sequence: the next batches start from 0 under a new id.

        Used when the producer can no longer tell which of its sequences the broker has (a batch
        with a sequence failed for good, or expired after being sent): carrying on with the same
        numbers would make the broker refuse everything after the gap.
        """
        log.info(
            "Resetting the producer id %d and its sequence numbers", self.producer_id_and_epoch.producer_id
        )
        with self._lock:
            self.producer_id_and_epoch = NONE
            self.next_sequence.clear()
            self.last_acked_sequence.clear()
            self.in_flight_batches_by_sequence.clear()

    # -- sequences -------------------------------------------------------------------------------------------

    def sequence_number(self, tp: TopicPartition) -> int:
        return self.next_sequence.get(tp, 0)

    def increment_sequence_number(self, tp: TopicPartition, increment: int) -> None:
        self.next_sequence[tp] = self.sequence_number(tp) + increment

    def add_in_flight_batch(self, batch: ProducerBatch) -> None:
        with self._lock:
            batches = self.in_flight_batches_by_sequence.setdefault(batch.topic_partition, [])
            bisect.insort(batches, batch, key=lambda b: b.base_sequence)

    def first_in_flight_sequence(self, tp: TopicPartition) -> int:
        """The lowest sequence sent and not completed for ``tp``, or NO_SEQUENCE."""
        batches = self.in_flight_batches_by_sequence.get(tp)
        return batches[0].base_sequence if batches else NO_SEQUENCE

    def next_batch_by_sequence(self, tp: TopicPartition) -> ProducerBatch | None:
        batches = self.in_flight_batches_by_sequence.get(tp)
        return batches[0] if batches else None

    def remove_in_flight_batch(self, batch: ProducerBatch) -> None:
        with self._lock:
            batches = self.in_flight_batches_by_sequence.get(batch.topic_partition)
            if batches and batch in batches:
                batches.remove(batch)

    def maybe_update_last_acked_sequence(self, tp: TopicPartition, sequence: int) -> None:
        if sequence > self.last_acked_sequence_of(tp):
            self.last_acked_sequence[tp] = sequence

    def last_acked_sequence_of(self, tp: TopicPartition) -> int:
        return self.last_acked_sequence.get(tp, -1)

    def is_next_sequence(self, tp: TopicPartition, sequence: int) -> bool:
        return sequence - self.last_acked_sequence_of(tp) == 1

    def can_retry(self, error: Errors, batch: ProducerBatch) -> bool:
        """Whether an error on an idempotent batch is worth a retry (Kafka 1.0's ``canRetry``).

        OUT_OF_ORDER_SEQUENCE_NUMBER is, when the batch is not the next one the broker expects: a
        batch before it failed and will be resent first, after which this one fits again. For the
        next expected batch it means data the broker had is gone, which no retry can fix.
        """
        if not self.has_producer_id(batch.producer_id):
            return False
        if error is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            return not self.is_next_sequence(batch.topic_partition, batch.base_sequence)
        return error.retriable
