"""The producer's transaction manager: its producer id and sequences (idempotence), and, with a
transactional id, the transaction's states and the requests that run it.

Mirrors: org.apache.kafka.clients.producer.internals.TransactionManager, with its TxnRequestHandlers,
         and ProducerIdAndEpoch (clients/src/main/java/.../producer/internals/, Kafka 0.11.0; the
         idempotent half as Kafka 1.0.0 has it: up to five requests in flight, with batches kept in
         sequence order, KAFKA-5494)
Book:    beyond the book (idempotence and transactions are Kafka 0.11's, KIP-98); chapter 2, 2.1.2 is
         where they act
Differs: when a batch that was given a sequence fails for good, Kafka 1.0 renumbers the batches
         behind it (``adjustSequencesDueToFailedBatch``); an idempotent kafka_lite producer instead
         resets the producer id at once, so no batch is ever written twice. The sender never blocks
         on a transactional request: one that cannot go yet (no coordinator known, no connection, or
         backing off after an error) stays first in the queue for the next round.

How idempotence works: the broker hands the producer an id (InitProducerId). Every batch the
producer sends to a partition carries that id, the epoch, and the sequence number of its first
record; the next batch to that partition starts where the last one ended. The broker keeps the last
five batches per producer and partition: a batch it already has is a retry whose response was lost,
and it answers with the first write's offsets instead of writing it again; a batch that skips ahead
means one before it is missing, and it answers OUT_OF_ORDER_SEQUENCE_NUMBER. A batch gets its
sequence once, when first drained, and keeps it through every retry; after an error the batches of a
partition go out again in sequence order (only the lowest sequence in flight may be drained again).

How a transaction runs (``transactional.id`` set). The client moves through ``State`` by the table
``VALID_PREVIOUS_STATES``; the application's calls only move the state and queue requests, and the
sender sends the queue's first request, one at a time, before any batch:

    init_transactions        FindCoordinator(type 1) -> InitProducerId(txn id, timeout)  -> READY
    begin_transaction                                                           -> IN_TRANSACTION
    send to a new partition  AddPartitionsToTxn, before the partition's first batch is drained
    send_offsets_to_txn      AddOffsetsToTxn (to the transaction coordinator),
                             then TxnOffsetCommit (to the group's coordinator)
    commit / abort           (every batch completes first) EndTxn(commit or abort)  -> READY

The queue is ordered by ``Priority``: a FindCoordinator goes before everything, EndTxn after
everything. Errors: a retriable one (the coordinator moved or is loading, CONCURRENT_TRANSACTIONS)
sends the request again, after a new FindCoordinator where the coordinator moved; a fenced epoch
(INVALID_PRODUCER_EPOCH: another producer with this transactional id has called
``init_transactions``) or a refused transactional id is fatal, and the producer can only be closed;
anything else that fails the transaction is an abortable error: ``abort_transaction`` clears it.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import logging
import threading
from dataclasses import dataclass
from enum import Enum

from kafka_lite.clients.metadata import Node
from kafka_lite.common.errors import Errors, IllegalStateException, KafkaException, ProducerFencedException
from kafka_lite.common.record.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.producer.producer_batch import ProducerBatch
from kafka_lite.producer.transactional_request_result import TransactionalRequestResult
from kafka_lite.producer.txn_request_handlers import (
    AddOffsetsToTxnHandler,
    AddPartitionsToTxnHandler,
    CoordinatorType,
    EndTxnHandler,
    FindCoordinatorHandler,
    InitProducerIdHandler,
    TxnOffsetCommitHandler,
    TxnRequestHandler,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProducerIdAndEpoch:
    producer_id: int
    epoch: int

    @property
    def is_valid(self) -> bool:
        return self.producer_id >= 0


NONE = ProducerIdAndEpoch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

NO_IN_FLIGHT_REQUEST_CORRELATION_ID = -1


class State(Enum):
    """The transactional producer's states (an idempotent one stays UNINITIALIZED, or FATAL_ERROR)."""

    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING_TRANSACTION = "COMMITTING_TRANSACTION"
    ABORTING_TRANSACTION = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


# --8<-- [start:valid_previous_states]
# Kafka's ``State.isTransitionValid`` as data: the states each state may be entered from. FATAL_ERROR
# may be entered from any state, and none may be entered from it: the producer can only be closed.
VALID_PREVIOUS_STATES: dict[State, frozenset[State]] = {
    State.UNINITIALIZED: frozenset(),
    State.INITIALIZING: frozenset({State.UNINITIALIZED}),
    State.READY: frozenset({State.INITIALIZING, State.COMMITTING_TRANSACTION, State.ABORTING_TRANSACTION}),
    State.IN_TRANSACTION: frozenset({State.READY}),
    State.COMMITTING_TRANSACTION: frozenset({State.IN_TRANSACTION}),
    State.ABORTING_TRANSACTION: frozenset({State.IN_TRANSACTION, State.ABORTABLE_ERROR}),
    # A failed commit is abortable too: the application then calls abort_transaction.
    State.ABORTABLE_ERROR: frozenset(
        {State.IN_TRANSACTION, State.COMMITTING_TRANSACTION, State.ABORTABLE_ERROR}
    ),
    State.FATAL_ERROR: frozenset(State),
}
# --8<-- [end:valid_previous_states]


class TransactionManager:
    def __init__(
        self,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = 0,
        retry_backoff_ms: int = 100,
        transaction_version: int = 0,
    ) -> None:
        # Reentrant: a handler's response runs under it and calls back into the manager.
        self._lock = threading.RLock()
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.transaction_version = transaction_version
        self.log_prefix = "" if transactional_id is None else f"[TransactionalId {transactional_id}] "
        self.producer_id_and_epoch = NONE
        self.init_producer_id_in_flight = False  # the idempotent producer's InitProducerId
        # The base sequence of the next batch bound for each partition.
        self.next_sequence: dict[TopicPartition, int] = {}
        # The sequence of the last record of the last acknowledged batch; -1 before the first.
        self.last_acked_sequence: dict[TopicPartition, int] = {}
        # The batches sent and not yet completed, per partition, in sequence order.
        self.in_flight_batches_by_sequence: dict[TopicPartition, list[ProducerBatch]] = {}

        self.current_state = State.UNINITIALIZED
        self.last_error: BaseException | None = None
        # The transaction's partitions: sent to, not yet asked for; asked for (AddPartitionsToTxn in
        # flight); and added, the only ones whose batches may be drained.
        self.new_partitions_in_transaction: set[TopicPartition] = set()
        self.pending_partitions_in_transaction: set[TopicPartition] = set()
        self.partitions_in_transaction: set[TopicPartition] = set()
        self.pending_txn_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}
        # Whether a partition or the group's offsets joined the transaction: if neither did, the
        # coordinator knows of no transaction, and commit or abort need no EndTxn.
        self.transaction_started = False
        # The transactional requests to send, a heap by (priority, order queued).
        self.pending_requests: list[tuple[int, int, TxnRequestHandler]] = []
        self._enqueued = itertools.count()
        self.in_flight_request_correlation_id = NO_IN_FLIGHT_REQUEST_CORRELATION_ID
        self.transaction_coordinator: Node | None = None
        self.consumer_group_coordinator: Node | None = None

    # -- the state machine -------------------------------------------------------------------------------

    def transition_to(self, target: State, error: BaseException | None = None) -> None:
        with self._lock:
            if self.current_state not in VALID_PREVIOUS_STATES[target]:
                id_string = (
                    "" if self.transactional_id is None else f"TransactionalId {self.transactional_id}: "
                )
                raise KafkaException(
                    f"{id_string}Invalid transition attempted from state {self.current_state.name} to "
                    f"state {target.name}"
                )
            if target in (State.FATAL_ERROR, State.ABORTABLE_ERROR):
                if error is None:
                    raise IllegalStateException(f"Cannot transition to {target.name} with a null exception")
                self.last_error = error
                log.debug("%sTransition from state %s to error state %s (%s)", self.log_prefix,
                          self.current_state.name, target.name, error)  # fmt: skip
            else:
                self.last_error = None
                log.debug("%sTransition from state %s to %s", self.log_prefix, self.current_state.name,
                          target.name)  # fmt: skip
            self.current_state = target

    def transition_to_abortable_error(self, error: BaseException) -> None:
        with self._lock:
            if self.current_state is State.ABORTING_TRANSACTION:
                # Batches failed by the abort itself: the transaction is on its way out already.
                log.debug("%sSkipping transition to abortable error state since the transaction is already "
                          "being aborted. Underlying exception: %s", self.log_prefix, error)  # fmt: skip
                return
            self.transition_to(State.ABORTABLE_ERROR, error)

    def transition_to_fatal_error(self, error: BaseException) -> None:
        self.transition_to(State.FATAL_ERROR, error)

    @property
    def fatal_error(self) -> BaseException | None:
        """The error that ended the producer, or None."""
        return self.last_error if self.current_state is State.FATAL_ERROR else None

    def is_transactional(self) -> bool:
        return self.transactional_id is not None

    def has_fatal_error(self) -> bool:
        return self.current_state is State.FATAL_ERROR

    def has_abortable_error(self) -> bool:
        return self.current_state is State.ABORTABLE_ERROR

    def has_error(self) -> bool:
        return self.current_state in (State.ABORTABLE_ERROR, State.FATAL_ERROR)

    def is_completing(self) -> bool:
        return self.current_state in (State.COMMITTING_TRANSACTION, State.ABORTING_TRANSACTION)

    def is_aborting(self) -> bool:
        return self.current_state is State.ABORTING_TRANSACTION

    def is_ready(self) -> bool:
        return self.is_transactional() and self.current_state is State.READY

    def has_ongoing_transaction(self) -> bool:
        """Started and not yet completed (or ended by a fatal error)."""
        return (
            self.current_state is State.IN_TRANSACTION or self.is_completing() or self.has_abortable_error()
        )

    # -- the application's calls (KafkaProducer's transactional methods) ------------------------------

    def initialize_transactions(self) -> TransactionalRequestResult:
        with self._lock:
            self._ensure_transactional()
            self.transition_to(State.INITIALIZING)
            self.set_producer_id_and_epoch(NONE)
            self.next_sequence.clear()
            handler = InitProducerIdHandler(self, self.transactional_id, self.transaction_timeout_ms)
            self._enqueue_request(handler)
            return handler.result

    def begin_transaction(self) -> None:
        with self._lock:
            self._ensure_transactional()
            self._maybe_fail_with_error()
            self.transition_to(State.IN_TRANSACTION)

    def begin_commit(self) -> TransactionalRequestResult:
        with self._lock:
            self._ensure_transactional()
            self._maybe_fail_with_error()
            self.transition_to(State.COMMITTING_TRANSACTION)
            return self._begin_completing_transaction(commit=True)

    def begin_abort(self) -> TransactionalRequestResult:
        with self._lock:
            self._ensure_transactional()
            if self.current_state is not State.ABORTABLE_ERROR:
                self._maybe_fail_with_error()
            self.transition_to(State.ABORTING_TRANSACTION)
            # The batches not yet sent are failed, so their partitions need not join.
            self.new_partitions_in_transaction.clear()
            return self._begin_completing_transaction(commit=False)

    def _begin_completing_transaction(self, commit: bool) -> TransactionalRequestResult:
        if self.new_partitions_in_transaction:
            self._enqueue_request(self._add_partitions_to_transaction_handler())
        handler = EndTxnHandler(self, commit)
        self._enqueue_request(handler)
        return handler.result

    def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], consumer_group_id: str
    ) -> TransactionalRequestResult:
        with self._lock:
            self._ensure_transactional()
            self._maybe_fail_with_error()
            if self.current_state is not State.IN_TRANSACTION:
                raise KafkaException(
                    "Cannot send offsets to transaction either because the producer is not in an active "
                    "transaction"
                )
            log.debug("%sBegin adding offsets %s for consumer group %s to transaction", self.log_prefix,
                      offsets, consumer_group_id)  # fmt: skip
            handler = AddOffsetsToTxnHandler(self, consumer_group_id, offsets)
            self._enqueue_request(handler)
            return handler.result

    def maybe_add_partition_to_transaction(self, tp: TopicPartition) -> None:
        """Called by ``send`` for every record: the partition joins the transaction before its first
        batch may be drained (the sender sends AddPartitionsToTxn first)."""
        with self._lock:
            self.fail_if_not_ready_for_send()
            if self.is_partition_added(tp) or self.is_partition_pending_add(tp):
                return
            log.debug("%sBegin adding new partition %s-%d to transaction", self.log_prefix, *tp)
            self.new_partitions_in_transaction.add(tp)

    def fail_if_not_ready_for_send(self) -> None:
        with self._lock:
            if self.has_error():
                _raise_fenced(self.last_error)
                raise KafkaException(
                    "Cannot perform send because at least one previous transactional or idempotent request "
                    f"has failed with errors: {self.last_error}"
                ) from self.last_error
            if self.is_transactional():
                if not self.has_producer_id():
                    raise IllegalStateException(
                        "Cannot perform a 'send' before completing a call to init_transactions when "
                        "transactions are enabled."
                    )
                if self.current_state is not State.IN_TRANSACTION:
                    raise IllegalStateException(
                        f"Cannot call send in state {self.current_state.name}: call begin_transaction first"
                    )

    def is_send_to_partition_allowed(self, tp: TopicPartition) -> bool:
        """Whether the accumulator may drain a batch of ``tp``: a transactional producer's partition
        must have joined the transaction (its AddPartitionsToTxn answered)."""
        with self._lock:
            if self.has_fatal_error():
                return False
            return not self.is_transactional() or tp in self.partitions_in_transaction

    def is_partition_added(self, tp: TopicPartition) -> bool:
        return tp in self.partitions_in_transaction

    def is_partition_pending_add(self, tp: TopicPartition) -> bool:
        return tp in self.new_partitions_in_transaction or tp in self.pending_partitions_in_transaction

    def has_partitions_to_add(self) -> bool:
        return bool(self.new_partitions_in_transaction or self.pending_partitions_in_transaction)

    def _ensure_transactional(self) -> None:
        if not self.is_transactional():
            raise IllegalStateException(
                "Transactional method invoked on a non-transactional producer: set transactional_id"
            )

    def _maybe_fail_with_error(self) -> None:
        if self.has_error():
            _raise_fenced(self.last_error)
            raise KafkaException(
                "Cannot execute transactional method because we are in an error state: "
                f"{type(self.last_error).__name__}: {self.last_error}"
            ) from self.last_error

    # -- the request queue (the sender's side) -----------------------------------------------------------

    def next_request_handler(self, has_incomplete_batches: bool) -> TxnRequestHandler | None:
        """The request the sender should send now, or None (Kafka's ``nextRequestHandler``)."""
        with self._lock:
            if self.new_partitions_in_transaction:
                self._enqueue_request(self._add_partitions_to_transaction_handler())
            if not self.pending_requests:
                return None
            handler = self.pending_requests[0][2]
            # EndTxn waits until every batch of the transaction has completed.
            if handler.is_end_txn() and has_incomplete_batches:
                return None
            heapq.heappop(self.pending_requests)
            if self._maybe_terminate_request_with_error(handler):
                log.debug("%sNot sending transactional request %s because we are in an error state",
                          self.log_prefix, handler)  # fmt: skip
                return None
            if handler.is_end_txn() and not self.transaction_started:
                # Nothing joined the transaction: the coordinator has nothing to end.
                handler.result.done()
                if self.current_state is not State.FATAL_ERROR:
                    log.debug("%sNot sending EndTxn for completed transaction since no partitions or "
                              "offsets were successfully added", self.log_prefix)  # fmt: skip
                    self.complete_transaction()
                handler = heapq.heappop(self.pending_requests)[2] if self.pending_requests else None
            if handler is not None:
                log.debug("%sRequest %s dequeued for sending", self.log_prefix, handler)
            return handler

    def _maybe_terminate_request_with_error(self, handler: TxnRequestHandler) -> bool:
        if self.has_error():
            if self.has_abortable_error() and isinstance(handler, FindCoordinatorHandler):
                return False  # finding the coordinator does no harm before the abort
            handler.fail(self.last_error)
            return True
        return False

    def _enqueue_request(self, handler: TxnRequestHandler) -> None:
        log.debug("%sEnqueuing transactional request %s", self.log_prefix, handler)
        heapq.heappush(self.pending_requests, (handler.priority, next(self._enqueued), handler))

    def retry(self, handler: TxnRequestHandler, now: int) -> None:
        """Queue ``handler`` again, to go after its back-off (Kafka's ``retry`` and ``reenqueue``)."""
        with self._lock:
            handler.set_retry(now)
            self._enqueue_request(handler)

    def coordinator(self, coordinator_type: CoordinatorType) -> Node | None:
        if coordinator_type is CoordinatorType.GROUP:
            return self.consumer_group_coordinator
        return self.transaction_coordinator

    def set_coordinator(self, coordinator_type: CoordinatorType, node: Node) -> None:
        if coordinator_type is CoordinatorType.GROUP:
            self.consumer_group_coordinator = node
        else:
            self.transaction_coordinator = node

    def lookup_coordinator(self, coordinator_type: CoordinatorType, coordinator_key: str) -> None:
        """Forget the coordinator of this type and queue a FindCoordinator for it."""
        with self._lock:
            if coordinator_type is CoordinatorType.GROUP:
                self.consumer_group_coordinator = None
            else:
                self.transaction_coordinator = None
            self._enqueue_request(FindCoordinatorHandler(self, coordinator_type, coordinator_key))

    def set_in_flight_request_correlation_id(self, correlation_id: int) -> None:
        self.in_flight_request_correlation_id = correlation_id

    def clear_in_flight_request_correlation_id(self) -> None:
        self.in_flight_request_correlation_id = NO_IN_FLIGHT_REQUEST_CORRELATION_ID

    def has_in_flight_request(self) -> bool:
        return self.in_flight_request_correlation_id != NO_IN_FLIGHT_REQUEST_CORRELATION_ID

    # -- what the handlers do on success ---------------------------------------------------------------

    def complete_initialization(self, producer_id: int, epoch: int) -> None:
        """InitProducerId answered: the id and epoch for this transactional id (the coordinator has
        bumped the epoch, fencing any older producer with the same id)."""
        with self._lock:
            self.set_producer_id_and_epoch(ProducerIdAndEpoch(producer_id, epoch))
            self.transition_to(State.READY)

    def is_transaction_v2_enabled(self) -> bool:
        """KIP-890 part 2 (Kafka 4.0's ``isTransactionV2Enabled``): every EndTxn takes a new epoch."""
        return self.transaction_version >= 2

    def kafka_4_0_adopt_bumped_epoch(self, producer_id: int, epoch: int) -> None:
        """EndTxn v5 answered with the producer id and epoch the next transaction uses (KIP-890 part
        2, Kafka 4.0's ``EndTxnHandler``): a new epoch starts every partition's sequence at 0. The
        transaction's batches are all complete (EndTxn waits for them), so none is in flight."""
        with self._lock:
            self.set_producer_id_and_epoch(ProducerIdAndEpoch(producer_id, epoch))
            self.next_sequence.clear()
            self.last_acked_sequence.clear()
            self.in_flight_batches_by_sequence.clear()

    def complete_transaction(self) -> None:
        with self._lock:
            self.transition_to(State.READY)
            self.transaction_started = False
            self.new_partitions_in_transaction.clear()
            self.pending_partitions_in_transaction.clear()
            self.partitions_in_transaction.clear()

    def _add_partitions_to_transaction_handler(self) -> AddPartitionsToTxnHandler:
        self.pending_partitions_in_transaction |= self.new_partitions_in_transaction
        self.new_partitions_in_transaction.clear()
        return AddPartitionsToTxnHandler(self, sorted(self.pending_partitions_in_transaction))

    def txn_offset_commit_handler(
        self,
        result: TransactionalRequestResult,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        consumer_group_id: str,
    ) -> TxnOffsetCommitHandler:
        self.pending_txn_offset_commits.update(offsets)
        return TxnOffsetCommitHandler(self, result, consumer_group_id)

    def enqueue(self, handler: TxnRequestHandler) -> None:
        """Queue ``handler`` as it is (a new request, or one that could not go this round)."""
        with self._lock:
            self._enqueue_request(handler)

    # -- the producer id ---------------------------------------------------------------------------------

    def has_producer_id(self, producer_id: int | None = None) -> bool:
        current = self.producer_id_and_epoch
        return current.is_valid if producer_id is None else current.producer_id == producer_id

    def has_producer_id_and_epoch(self, producer_id: int, epoch: int) -> bool:
        return self.producer_id_and_epoch == ProducerIdAndEpoch(producer_id, epoch)

    def set_producer_id_and_epoch(self, producer_id_and_epoch: ProducerIdAndEpoch) -> None:
        log.info(
            "%sProducerId set to %d with epoch %d",
            self.log_prefix,
            producer_id_and_epoch.producer_id,
            producer_id_and_epoch.epoch,
        )
        self.producer_id_and_epoch = producer_id_and_epoch

    def reset_producer_id(self) -> None:
        """Forget the id and every sequence: the next batches start from 0 under a new id.

        Used when the producer can no longer tell which of its sequences the broker has (a batch
        with a sequence failed for good, or expired after being sent): carrying on with the same
        numbers would make the broker refuse everything after the gap.

        Not for a transactional producer: a new id would mean a new epoch, which fences the open
        transaction behind the application's back. Its failed batch fails the transaction instead
        (an abortable error), and ``abort_transaction`` starts clean.
        """
        if self.is_transactional():
            raise IllegalStateException(
                "Cannot reset producer state for a transactional producer. You must either abort the "
                "ongoing transaction or reinitialize the transactional producer instead"
            )
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


def _raise_fenced(last_error: BaseException | None) -> None:
    """A fenced producer is told so by its own error type, not a KafkaException wrapping it: Kafka
    2.1's ``maybeFailWithError`` (0.11 wraps it), so that ``except ProducerFencedException`` works
    whichever call first finds the producer fenced."""
    if isinstance(last_error, ProducerFencedException):
        raise ProducerFencedException(
            "The producer has been rejected from the broker because it tried to use an old epoch with the "
            "transactionalId: another producer with the same transactional id has called init_transactions"
        ) from last_error
