"""The transaction coordinator: InitProducerId for a transactional id, AddPartitionsToTxn and
EndTxn, decided against the id's state and written to ``__transaction_state``.

Mirrors: kafka.coordinator.transaction.TransactionCoordinator and InitProducerIdResult
         (core/src/main/scala/kafka/coordinator/transaction/TransactionCoordinator.scala, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98); its model is the group coordinator,
         chapter 5, 5.2
Differs: a result is ``(error, value)`` where Kafka's is an ``Either``; the sweep that aborts timed-out
         transactions runs every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``
         (Kafka 0.11.0 defines the setting but schedules the sweep at its one-minute default).
         An EndTxn of transaction version 2 (Kafka 4.0, KIP-890 part 2) bumps the epoch with the
         decision, and is answered with the producer id and epoch (the ``kafka_4_0_*`` helpers).

Every broker runs one; for a transactional id, the one that leads its ``__transaction_state``
partition answers. What each request does:

- **InitProducerId(transactional_id)**: a new id gets a producer id and epoch 0; a known one with no
  open transaction gets its epoch bumped (a new producer id once the epochs run out), which fences
  the producer that held the old epoch: its requests now get INVALID_PRODUCER_EPOCH. An id whose
  transaction is Ongoing has the epoch bumped and the transaction aborted, and the answer is
  CONCURRENT_TRANSACTIONS: the producer retries, and gets the next epoch once the abort is complete.
  While a commit or abort is being completed, CONCURRENT_TRANSACTIONS too.
- **AddPartitionsToTxn**: the partitions join the transaction (Ongoing) before the producer writes
  to them, so that the coordinator knows where to write markers.
- **EndTxn(commit|abort)**: PrepareCommit or PrepareAbort is appended; that is the decision. The
  producer is answered at once; the marker manager then writes a marker to every partition and,
  when all are written, CompleteCommit or CompleteAbort. A retried EndTxn for a transaction already
  completed the same way is answered NONE.

Each request checks the producer id and epoch first: a producer id the id does not have is
INVALID_PRODUCER_ID_MAPPING, an older epoch INVALID_PRODUCER_EPOCH (the producer is fenced).

Why an epoch fences: a transactional id stands for one logical producer across restarts. When an
application restarts (or a second copy starts), the new producer's InitProducerId bumps the epoch,
and from then on the coordinator and every partition leader refuse the old epoch: a "zombie" that
was only paused cannot commit, abort or append in the id's name. The bump is written to the log
before it is answered, so a coordinator that takes over knows it too.

Why commit in two phases: a transaction spans partitions on many brokers, and no single write can
commit them all. The coordinator first appends its decision, PrepareCommit or PrepareAbort, to its
own partition of ``__transaction_state``: from then on the outcome is fixed, whoever coordinates
next. Only then does it write a marker into every partition of the transaction (WriteTxnMarkers);
a read_committed consumer shows a partition's transactional records only once their commit marker
is there. Last, CompleteCommit or CompleteAbort records that every marker is written. Writing the
decision before any marker is what makes a crash harmless: a new coordinator that finds Prepare*
in the log sends the markers again (a second marker for a transaction a partition has already
closed closes nothing), while one that finds Ongoing knows no marker was written and may still
abort.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import NamedTuple

from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.coordinator.transaction.transaction_marker_channel_manager import (
    TransactionMarkerChannelManager,
)
from kafka_lite.coordinator.transaction.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    SHORT_MAX,
    TV_0,
    TV_2,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafka_lite.coordinator.transaction.transaction_state_manager import TransactionStateManager
from kafka_lite.server.producer_id_manager import ProducerIdManager
from kafka_lite.utils.scheduler import Scheduler

log = logging.getLogger(__name__)

TxnState = TransactionState
# EndTxn's answer (Kafka's ``EndTxnCallback``): the error, and the producer id and epoch the producer's
# next transaction uses (-1 and -1 on an error)
EndTxnCallback = Callable[[Errors, int, int], None]


class InitProducerIdResult(NamedTuple):
    producer_id: int
    producer_epoch: int
    error: Errors


def _init_transaction_error(error: Errors) -> InitProducerIdResult:
    return InitProducerIdResult(NO_PRODUCER_ID, NO_PRODUCER_EPOCH, error)


# (an error, or the coordinator epoch and the prepared transition; and the producer id and epoch a
# retry of an EndTxn already complete is answered with)
_Prepared = tuple[Errors, "tuple[int, TxnTransitMetadata] | None", tuple[int, int]]
_NO_PRODUCER = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)


class TransactionCoordinator:
    def __init__(
        self,
        broker_id: int,
        scheduler: Scheduler,
        producer_id_manager: ProducerIdManager,
        txn_manager: TransactionStateManager,
        txn_marker_channel_manager: TransactionMarkerChannelManager,
        time: Time,
    ) -> None:
        self.broker_id = broker_id
        self.scheduler = scheduler
        self.producer_id_manager = producer_id_manager
        self.txn_manager = txn_manager
        self.txn_marker_channel_manager = txn_marker_channel_manager
        self.time = time
        self._is_active = threading.Event()

    def partition_for(self, transactional_id: str) -> int:
        return self.txn_manager.partition_for(transactional_id)

    def transaction_topic_configs(self) -> dict[str, str]:
        return self.txn_manager.transaction_topic_configs()

    # -- InitProducerId --------------------------------------------------------------------------------

    # --8<-- [start:handle_init_producer_id]
    def handle_init_producer_id(
        self,
        transactional_id: str | None,
        transaction_timeout_ms: int,
        response_callback: Callable[[InitProducerIdResult], None],
    ) -> None:
        if transactional_id is None:
            # an idempotent producer without transactions: always a new producer id
            response_callback(
                InitProducerIdResult(self.producer_id_manager.generate_producer_id(), 0, Errors.NONE)
            )
            return
        if not transactional_id:
            response_callback(_init_transaction_error(Errors.INVALID_REQUEST))
            return
        if not self.txn_manager.validate_transaction_timeout_ms(transaction_timeout_ms):
            response_callback(_init_transaction_error(Errors.INVALID_TRANSACTION_TIMEOUT))
            return
        error, epoch_and_metadata = self.txn_manager.get_transaction_state(transactional_id)
        if error is Errors.NONE and epoch_and_metadata is None:
            created = TransactionMetadata(
                transactional_id,
                self.producer_id_manager.generate_producer_id(),
                NO_PRODUCER_EPOCH,
                transaction_timeout_ms,
                TxnState.EMPTY,
                txn_last_update_timestamp=self.time.milliseconds(),
            )
            error, epoch_and_metadata = self.txn_manager.put_transaction_state_if_not_exists(
                transactional_id, created
            )
        if error is not Errors.NONE:
            response_callback(_init_transaction_error(error))
            return
        coordinator_epoch = epoch_and_metadata.coordinator_epoch
        txn_metadata = epoch_and_metadata.transaction_metadata
        with txn_metadata.lock:
            error, new_metadata = self._prepare_init_producer_id_transit(
                transactional_id, transaction_timeout_ms, txn_metadata
            )
        if error is not Errors.NONE:
            response_callback(_init_transaction_error(error))
        elif new_metadata.txn_state is TxnState.ONGOING:
            # A new producer for an id whose transaction is still open: the old producer may have died
            # mid-transaction, and its records must not stay undecided. The epoch is bumped (fencing
            # the old producer) and that transaction aborted; the new producer retries until the abort
            # is complete, and then gets the next epoch, so it never starts inside the old transaction.
            def send_retriable_error_callback(error: Errors, _producer_id: int, _producer_epoch: int) -> None:
                response_callback(
                    _init_transaction_error(Errors.CONCURRENT_TRANSACTIONS if error is Errors.NONE else error)
                )

            self.handle_end_transaction(
                transactional_id,
                new_metadata.producer_id,
                new_metadata.producer_epoch,
                False,
                send_retriable_error_callback,
            )
        else:

            def send_pid_response_callback(error: Errors) -> None:
                if error is Errors.NONE:
                    log.info("Initialized transactionalId %s with producerId %d and producer epoch %d on partition %s-%d",
                             transactional_id, new_metadata.producer_id, new_metadata.producer_epoch,
                             TRANSACTION_STATE_TOPIC_NAME, self.partition_for(transactional_id))  # fmt: skip
                    response_callback(
                        InitProducerIdResult(
                            new_metadata.producer_id, new_metadata.producer_epoch, Errors.NONE
                        )
                    )
                else:
                    log.info(
                        "Returning %s error code to client for %s's InitProducerId request",
                        error.name,
                        transactional_id,
                    )
                    response_callback(_init_transaction_error(error))

            self.txn_manager.append_transaction_to_log(
                transactional_id, coordinator_epoch, new_metadata, send_pid_response_callback
            )

    def _prepare_init_producer_id_transit(
        self, transactional_id: str, transaction_timeout_ms: int, txn_metadata: TransactionMetadata
    ) -> tuple[Errors, TxnTransitMetadata | None]:
        """Call with the metadata's lock held."""
        if txn_metadata.pending_transition_in_progress():
            return Errors.CONCURRENT_TRANSACTIONS, None  # the client backs off and retries
        state = txn_metadata.state
        if state in (TxnState.PREPARE_ABORT, TxnState.PREPARE_COMMIT):
            return Errors.CONCURRENT_TRANSACTIONS, None
        if state in (TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT, TxnState.EMPTY):
            now = self.time.milliseconds()
            if txn_metadata.is_producer_epoch_exhausted():
                new_producer_id = self.producer_id_manager.generate_producer_id()
                return Errors.NONE, txn_metadata.prepare_producer_id_rotation(
                    new_producer_id, transaction_timeout_ms, now
                )
            return Errors.NONE, txn_metadata.prepare_increment_producer_epoch(transaction_timeout_ms, now)
        if state is TxnState.ONGOING:
            # This epoch is never returned to the client: the retry after the abort bumps it again
            # (and, if that exhausts the epochs, rotates the producer id).
            return Errors.NONE, txn_metadata.prepare_fence_producer_epoch()
        raise IllegalStateException(
            f"Found transactionalId {transactional_id} with state {state}. "
            "This is illegal as we should never have transitioned to this state."
        )

    # --8<-- [end:handle_init_producer_id]

    # -- AddPartitionsToTxn ----------------------------------------------------------------------------

    def kafka_3_6_handle_verify_partitions_in_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, Errors]:
        """KIP-890 part 1 (Kafka 3.6's ``handleVerifyPartitionsInTransaction``): a partition leader asks,
        before the first transactional write of a producer it has no open transaction for, whether
        the partition is in that producer's transaction. Kafka 0.11's leader never asks, so a Produce
        delayed in the network past the transaction's abort opens a transaction on the partition that
        no marker will close (a hanging transaction); asked, the coordinator answers
        INVALID_TXN_STATE, because the abort took the partition out of the transaction.

        Nothing is written: the answer is read under the metadata's lock. A Prepare* state answers
        CONCURRENT_TRANSACTIONS (its markers are on their way); a pending transition is not waited
        for, because the leader's append checks again that nothing ended the transaction meanwhile
        (its verification guard)."""
        partitions = frozenset(partitions)
        if not transactional_id:
            return dict.fromkeys(partitions, Errors.INVALID_REQUEST)
        error, epoch_and_metadata = self.txn_manager.get_transaction_state(transactional_id)
        if error is Errors.NONE and epoch_and_metadata is None:
            error = Errors.INVALID_PRODUCER_ID_MAPPING
        if error is not Errors.NONE:
            return dict.fromkeys(partitions, error)
        txn_metadata = epoch_and_metadata.transaction_metadata
        with txn_metadata.lock:
            if txn_metadata.producer_id != producer_id:
                error = Errors.INVALID_PRODUCER_ID_MAPPING
            elif txn_metadata.producer_epoch != producer_epoch:
                error = Errors.INVALID_PRODUCER_EPOCH  # 3.6's PRODUCER_FENCED, under 0.11's name
            elif txn_metadata.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                error = Errors.CONCURRENT_TRANSACTIONS
            if error is not Errors.NONE:
                return dict.fromkeys(partitions, error)
            return {
                tp: Errors.NONE if tp in txn_metadata.topic_partitions else Errors.INVALID_TXN_STATE
                for tp in partitions
            }

    def handle_add_partitions_to_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
        response_callback: Callable[[Errors], None],
    ) -> None:
        if not transactional_id:
            response_callback(Errors.INVALID_REQUEST)
            return
        partitions = frozenset(partitions)
        error, epoch_and_metadata = self.txn_manager.get_transaction_state(transactional_id)
        new_metadata = None
        if error is Errors.NONE and epoch_and_metadata is None:
            error = Errors.INVALID_PRODUCER_ID_MAPPING
        elif error is Errors.NONE:
            txn_metadata = epoch_and_metadata.transaction_metadata
            with txn_metadata.lock:
                error = _check_producer(txn_metadata, producer_id, producer_epoch)
                if error is Errors.NONE and txn_metadata.state in (
                    TxnState.PREPARE_COMMIT,
                    TxnState.PREPARE_ABORT,
                ):
                    error = Errors.CONCURRENT_TRANSACTIONS
                already_added = (
                    txn_metadata.state is TxnState.ONGOING and partitions <= txn_metadata.topic_partitions
                )
                if error is Errors.NONE and not already_added:  # (already added: answer NONE at once)
                    new_metadata = txn_metadata.prepare_add_partitions(partitions, self.time.milliseconds())
        if new_metadata is None:
            log.debug(
                "Returning %s error code to client for %s's AddPartitions request",
                error.name,
                transactional_id,
            )
            response_callback(error)
        else:
            self.txn_manager.append_transaction_to_log(
                transactional_id, epoch_and_metadata.coordinator_epoch, new_metadata, response_callback
            )

    # -- leadership of __transaction_state partitions -------------------------------------------------

    def handle_txn_immigration(self, txn_topic_partition_id: int, coordinator_epoch: int) -> None:
        """Load the partition's transactions, after dropping any markers of it still queued (Kafka
        3.3's ``onElection``): the load sends the markers of every prepared transaction again, so
        any queued before it (by EndTxn, or by an earlier load, since KRaft elects again on any
        change to a partition led here) would be sent twice, for metadata the cache no longer
        holds."""
        self.txn_marker_channel_manager.remove_markers_for_txn_topic_partition(txn_topic_partition_id)
        self.txn_manager.load_transactions_for_txn_topic_partition(
            txn_topic_partition_id, coordinator_epoch, self.txn_marker_channel_manager.add_txn_markers_to_send
        )

    def handle_txn_emigration(self, txn_topic_partition_id: int, coordinator_epoch: int) -> None:
        self.txn_manager.remove_transactions_for_txn_topic_partition(
            txn_topic_partition_id, coordinator_epoch
        )
        self.txn_marker_channel_manager.remove_markers_for_txn_topic_partition(txn_topic_partition_id)

    # -- EndTxn ----------------------------------------------------------------------------------------

    # --8<-- [start:handle_end_transaction]
    def handle_end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        is_commit: bool,
        response_callback: EndTxnCallback,
        client_transaction_version: int = TV_0,
    ) -> None:
        """Decide the transaction (Prepare* in the log), answer, then have its markers written.
        ``client_transaction_version`` 2 (EndTxn v5, KIP-890 part 2) bumps the epoch as it decides."""
        if not transactional_id:
            response_callback(Errors.INVALID_REQUEST, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
            return
        error, prepared, current = self._prepare_end_transaction(
            transactional_id, producer_id, producer_epoch, is_commit, client_transaction_version
        )
        if prepared is None:
            log.debug("Aborting append of %s to transaction log and returning %s error to client for %s's "
                      "EndTransaction request", _result(is_commit), error.name, transactional_id)  # fmt: skip
            response_callback(error, *current)
            return
        coordinator_epoch, new_metadata = prepared

        def send_txn_markers_callback(error: Errors) -> None:
            if error is not Errors.NONE:
                log.info("Aborting sending of transaction markers and returning %s error to client for %s's "
                         "EndTransaction request of %s, since appending %s to transaction log with coordinator "
                         "epoch %d failed", error.name, transactional_id, _result(is_commit), new_metadata,
                         coordinator_epoch)  # fmt: skip
                response_callback(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
                return
            error, complete = self._prepare_complete(
                transactional_id, producer_id, producer_epoch, is_commit, coordinator_epoch
            )
            if complete is None:
                response_callback(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
                return
            txn_metadata, complete_metadata = complete
            # The decision is in the log and cannot be undone: the client is answered now, and the
            # markers follow. Waiting for them would make EndTxn as slow as the slowest partition
            # leader, and gain nothing: a new coordinator would finish them from Prepare* anyway.
            # The answer names the producer id and epoch the producer's next transaction takes:
            # those the completion leaves (a new epoch under transaction version 2).
            response_callback(Errors.NONE, complete_metadata.producer_id, complete_metadata.producer_epoch)
            self.txn_marker_channel_manager.add_txn_markers_to_send(
                transactional_id, coordinator_epoch, is_commit, txn_metadata, complete_metadata
            )

        self.txn_manager.append_transaction_to_log(
            transactional_id, coordinator_epoch, new_metadata, send_txn_markers_callback
        )

    # --8<-- [end:handle_end_transaction]

    def _prepare_end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        is_commit: bool,
        client_transaction_version: int,
    ) -> _Prepared:
        error, epoch_and_metadata = self.txn_manager.get_transaction_state(transactional_id)
        if error is not Errors.NONE:
            return error, None, _NO_PRODUCER
        if epoch_and_metadata is None:
            return Errors.INVALID_PRODUCER_ID_MAPPING, None, _NO_PRODUCER
        txn_metadata = epoch_and_metadata.transaction_metadata
        with txn_metadata.lock:
            if TV_2 in (txn_metadata.client_transaction_version, client_transaction_version):
                error = _kafka_4_0_check_end_txn_producer(txn_metadata, producer_id, producer_epoch)
            else:
                error = _check_producer(txn_metadata, producer_id, producer_epoch)
            if error is not Errors.NONE:
                return error, None, _NO_PRODUCER
            state = txn_metadata.state
            if state is TxnState.ONGOING:
                # Phase one: the decision, appended before any marker is written (see the module's
                # docstring for why).
                next_state = TxnState.PREPARE_COMMIT if is_commit else TxnState.PREPARE_ABORT
                now = self.time.milliseconds()
                if client_transaction_version >= TV_2:
                    next_producer_id = (
                        self.producer_id_manager.generate_producer_id()
                        if txn_metadata.is_producer_epoch_exhausted()
                        else NO_PRODUCER_ID
                    )
                    transit = txn_metadata.kafka_4_0_prepare_abort_or_commit(
                        next_state, next_producer_id, now
                    )
                else:
                    transit = txn_metadata.prepare_abort_or_commit(next_state, now)
                return Errors.NONE, (epoch_and_metadata.coordinator_epoch, transit), _NO_PRODUCER
            # A retry of an EndTxn already decided: done (Complete*), or being completed (Prepare*).
            same_result = {
                TxnState.COMPLETE_COMMIT: (is_commit, Errors.NONE),
                TxnState.COMPLETE_ABORT: (not is_commit, Errors.NONE),
                TxnState.PREPARE_COMMIT: (is_commit, Errors.CONCURRENT_TRANSACTIONS),
                TxnState.PREPARE_ABORT: (not is_commit, Errors.CONCURRENT_TRANSACTIONS),
            }
            if state in same_result:
                matches, answer = same_result[state]
                if not matches:
                    return self._invalid_state(transactional_id, state, is_commit), None, _NO_PRODUCER
                # a retry answered NONE learns the producer id and epoch the next transaction takes
                current = (txn_metadata.producer_id, txn_metadata.producer_epoch)
                return answer, None, current if answer is Errors.NONE else _NO_PRODUCER
            if state is TxnState.EMPTY:
                return self._invalid_state(transactional_id, state, is_commit), None, _NO_PRODUCER
            raise IllegalStateException(
                f"Found transactionalId {transactional_id} with state {state}. "
                "This is illegal as we should never have transitioned to this state."
            )

    def _prepare_complete(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        is_commit: bool,
        coordinator_epoch: int,
    ) -> tuple[Errors, tuple[TransactionMetadata, TxnTransitMetadata] | None]:
        """After Prepare* is in the log: the Complete* transition to write once the markers are."""
        error, epoch_and_metadata = self.txn_manager.get_transaction_state(transactional_id)
        if error is not Errors.NONE:
            return error, None
        if epoch_and_metadata is None:
            raise IllegalStateException(
                f"The coordinator still owns the transaction partition for {transactional_id}, but there is "
                "no metadata in the cache; this is not expected"
            )
        if epoch_and_metadata.coordinator_epoch != coordinator_epoch:
            # The partition moved (and perhaps came back) while Prepare* was being written: another
            # coordinator, loading the log, owns the markers now; writing them here too could race it.
            return Errors.NOT_COORDINATOR, None
        txn_metadata = epoch_and_metadata.transaction_metadata
        with txn_metadata.lock:
            # the decision just written may have bumped the epoch (transaction version 2)
            bumped = _kafka_4_0_end_txn_epoch_bumped(txn_metadata, producer_epoch)
            error = _check_producer(
                txn_metadata, producer_id, producer_epoch + 1 if bumped else producer_epoch
            )
            if error is not Errors.NONE:
                return error, None
            expected = TxnState.PREPARE_COMMIT if is_commit else TxnState.PREPARE_ABORT
            if txn_metadata.state is not expected:
                return self._invalid_state(transactional_id, txn_metadata.state, is_commit), None
            now = self.time.milliseconds()
            if txn_metadata.client_transaction_version >= TV_2:
                return Errors.NONE, (txn_metadata, txn_metadata.kafka_4_0_prepare_complete(now))
            return Errors.NONE, (txn_metadata, txn_metadata.prepare_complete(now))

    @staticmethod
    def _invalid_state(transactional_id: str, state: TransactionState, is_commit: bool) -> Errors:
        log.debug("TransactionalId: %s's state is %s, but received transaction marker result to send: %s",
                  transactional_id, state, _result(is_commit))  # fmt: skip
        return Errors.INVALID_TXN_STATE

    # -- timed-out transactions, start-up and shutdown -------------------------------------------------

    def abort_timed_out_transactions(self) -> None:
        """Abort every transaction open longer than its timeout, as its producer would with EndTxn.

        A producer that dies mid-transaction leaves its partitions' last stable offset where the
        transaction began: read_committed consumers of those partitions stop there until the
        transaction ends. The timeout (``transaction.timeout.ms``, which the producer chooses and the
        broker caps) bounds how long one dead producer can hold them back."""
        for txn in self.txn_manager.timed_out_transactions():

            def on_abort(
                error: Errors, _producer_id: int, _epoch: int, txn_id: str = txn.transactional_id
            ) -> None:
                if error is Errors.NONE:
                    log.info(
                        "Completed rollback ongoing transaction of transactionalId: %s due to timeout", txn_id
                    )
                elif error in (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.INVALID_PRODUCER_EPOCH,
                               Errors.CONCURRENT_TRANSACTIONS):  # fmt: skip
                    log.debug("Rolling back ongoing transaction of transactionalId: %s has aborted due to %s",
                              txn_id, error.name)  # fmt: skip
                else:
                    log.warning("Rolling back ongoing transaction of transactionalId: %s failed due to %s",
                                txn_id, error.name)  # fmt: skip

            self.handle_end_transaction(
                txn.transactional_id, txn.producer_id, txn.producer_epoch, False, on_abort
            )

    def startup(
        self, abort_timed_out_transactions_interval_ms: int, enable_transactional_id_expiration: bool = True
    ) -> None:
        log.info("Starting up.")
        self.scheduler.schedule(
            "transaction-abort",
            self.abort_timed_out_transactions,
            delay_ms=abort_timed_out_transactions_interval_ms,
            period_ms=abort_timed_out_transactions_interval_ms,
        )
        if enable_transactional_id_expiration:
            self.txn_manager.enable_transactional_id_expiration()
        self.txn_marker_channel_manager.start()
        self._is_active.set()
        log.info("Startup complete.")

    def shutdown(self) -> None:
        log.info("Shutting down.")
        self._is_active.clear()
        self.txn_manager.shutdown()
        self.txn_marker_channel_manager.shutdown()
        log.info("Shutdown complete.")


def _check_producer(txn_metadata: TransactionMetadata, producer_id: int, producer_epoch: int) -> Errors:
    """What every request about a transaction checks first, under the metadata's lock: the id's
    producer id, its current epoch (an older one is fenced), and no transition on its way."""
    if txn_metadata.producer_id != producer_id:
        return Errors.INVALID_PRODUCER_ID_MAPPING
    if txn_metadata.producer_epoch != producer_epoch:
        return Errors.INVALID_PRODUCER_EPOCH
    if txn_metadata.pending_transition_in_progress():
        return Errors.CONCURRENT_TRANSACTIONS
    return Errors.NONE


def _kafka_4_0_end_txn_epoch_bumped(txn_metadata: TransactionMetadata, producer_epoch: int) -> bool:
    """Kafka 4.0's ``endTxnEpochBumped``: under transaction version 2 every EndTxn bumps the epoch,
    so the producer's epoch one below the coordinator's is that of the EndTxn that bumped it, being
    retried, and not a fenced producer."""
    return (
        txn_metadata.client_transaction_version >= TV_2 and txn_metadata.producer_epoch == producer_epoch + 1
    )


def _kafka_4_0_check_end_txn_producer(
    txn_metadata: TransactionMetadata, producer_id: int, producer_epoch: int
) -> Errors:
    """KIP-890 part 2 (Kafka 4.0's ``endTransaction``): an EndTxn for an id whose last EndTxn bumped
    the epoch. The same epoch no longer means a retry, it means the next transaction's EndTxn; a
    retry carries the epoch before the bump (or, once the epochs ran out and the completion gave
    the producer a new id, the old id at the epoch before the last). Anything else is fenced.

    Kafka 4.0 takes these rules when the transaction's last transition was of version 2; kafka_lite
    also when the EndTxn is. The difference is a transaction the coordinator aborted itself, past
    its timeout, under 0.11's rule (kafka_lite's producers add their partitions with 0.11's
    AddPartitionsToTxn, so only an EndTxn says version 2): 0.11 answers the producer's EndTxn for
    it as a retry, NONE, with the epoch unchanged, and the producer would start its next
    transaction at that epoch with its sequences at 0, which the partitions read as duplicates of
    the last one. Here that EndTxn is fenced."""
    state = txn_metadata.state
    retry_on_overflow = (
        txn_metadata.previous_producer_id == producer_id
        and producer_epoch == SHORT_MAX - 1
        and txn_metadata.producer_epoch == 0
    )
    retry_on_epoch_bump = _kafka_4_0_end_txn_epoch_bumped(txn_metadata, producer_epoch)
    if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        valid_epoch = retry_on_epoch_bump
    elif state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        valid_epoch = retry_on_epoch_bump or retry_on_overflow
    else:
        valid_epoch = producer_epoch == txn_metadata.producer_epoch
    if txn_metadata.producer_id != producer_id and not retry_on_overflow:
        return Errors.INVALID_PRODUCER_ID_MAPPING
    if not valid_epoch:
        return Errors.INVALID_PRODUCER_EPOCH  # 4.0's PRODUCER_FENCED, under 0.11's name
    if txn_metadata.pending_transition_in_progress():
        return Errors.CONCURRENT_TRANSACTIONS
    return Errors.NONE


def _result(is_commit: bool) -> str:
    return "COMMIT" if is_commit else "ABORT"
