"""One transactional id as its coordinator holds it: producer id and epoch, state, partitions.

Mirrors: kafka.coordinator.transaction.TransactionMetadata, TxnTransitMetadata and TransactionState
         (core/src/main/scala/kafka/coordinator/transaction/TransactionMetadata.scala, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98)
Differs: the metadata carries its own lock, where Kafka synchronizes on the object; a refused
         transition raises with the table's valid previous states in the message. Kafka 4.0's
         transaction version 2 (KIP-890 part 2: the ``kafka_4_0_*`` methods, and the fields of the
         epoch bump on the metadata and its transitions) is kept out of 0.11's transitions, which
         lab 16 asks for, and is not written to ``__transaction_state``.
Labs:    lab 16, stage 2 (``is_valid_transition``, ``_prepare_transition_to``, ``complete_transition_to``,
         ``pending_transition_in_progress``)

A transaction moves through seven states; the byte is what ``__transaction_state`` stores:

    Empty (0)          the id has a producer id and epoch, and no transaction is open
    Ongoing (1)        partitions were added (AddPartitionsToTxn / AddOffsetsToTxn): a transaction is open
    PrepareCommit (2)  EndTxn(commit) is in the log: the commit is decided, its markers are being written
    PrepareAbort (3)   EndTxn(abort), or a timeout or a newer producer, decided an abort
    CompleteCommit (4) every partition has its commit marker
    CompleteAbort (5)  every partition has its abort marker
    Dead (6)           the id expired and is being removed

Every change goes in two steps, because the state is only changed once ``__transaction_state``
holds the new value: ``prepare_*`` checks the transition against ``VALID_PREVIOUS_STATES`` and
returns the target as a ``TxnTransitMetadata`` (recording it as ``pending_state``, which refuses a
second change meanwhile: CONCURRENT_TRANSACTIONS); ``complete_transition_to`` applies it after the
append succeeded. Prepare* is the point of no return: once it is in the log, a coordinator that takes
over after a crash finishes the commit or abort from the log alone.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition

log = logging.getLogger(__name__)

NO_PRODUCER_EPOCH = -1  # RecordBatch.NO_PRODUCER_EPOCH
NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID
# The transaction versions (the ``transaction.version`` feature): 0 is Kafka 0.11's protocol, 2 bumps
# the producer's epoch at the end of every transaction. Level 1 changes only how
# ``__transaction_state`` is written, which kafka_lite does not take.
TV_0 = 0
TV_2 = 2
SHORT_MAX = 2**15 - 1


class TransactionState(enum.Enum):
    """A transaction's state; the value is the byte ``__transaction_state`` stores (``state.byte``)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6

    @property
    def byte(self) -> int:
        return self.value

    @property
    def kafka_name(self) -> str:
        """Kafka's name for the state (``PrepareCommit``), as its logs and tools print it."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    def __str__(self) -> str:
        return self.kafka_name


TxnState = TransactionState
_ENDING_STATES = frozenset(
    {TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}
)

# --8<-- [start:table]
# A transition to the key is legal only from the states listed (Kafka's ``validPreviousStates``).
VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    TxnState.EMPTY: frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}),
    TxnState.ONGOING: frozenset(
        {TxnState.ONGOING, TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}
    ),
    TxnState.PREPARE_COMMIT: frozenset({TxnState.ONGOING}),
    TxnState.PREPARE_ABORT: frozenset({TxnState.ONGOING}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.PREPARE_COMMIT}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.PREPARE_ABORT}),
    TxnState.DEAD: frozenset({TxnState.EMPTY, TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT}),
}
# What moves a transaction along each edge, for the chapter's picture.
TRANSITION_EVENTS: dict[tuple[TransactionState, TransactionState], str] = {
    (TxnState.EMPTY, TxnState.EMPTY): "InitProducerId",
    (TxnState.COMPLETE_COMMIT, TxnState.EMPTY): "InitProducerId",
    (TxnState.COMPLETE_ABORT, TxnState.EMPTY): "InitProducerId",
    (TxnState.EMPTY, TxnState.ONGOING): "AddPartitionsToTxn",
    (TxnState.ONGOING, TxnState.ONGOING): "more partitions",
    (TxnState.COMPLETE_COMMIT, TxnState.ONGOING): "AddPartitionsToTxn",
    (TxnState.COMPLETE_ABORT, TxnState.ONGOING): "AddPartitionsToTxn",
    (TxnState.ONGOING, TxnState.PREPARE_COMMIT): "EndTxn(commit)",
    (TxnState.ONGOING, TxnState.PREPARE_ABORT): "EndTxn(abort),\ntimeout, fencing",
    (TxnState.PREPARE_COMMIT, TxnState.COMPLETE_COMMIT): "markers written",
    (TxnState.PREPARE_ABORT, TxnState.COMPLETE_ABORT): "markers written",
    (TxnState.EMPTY, TxnState.DEAD): "id expired",
    (TxnState.COMPLETE_COMMIT, TxnState.DEAD): "id expired",
    (TxnState.COMPLETE_ABORT, TxnState.DEAD): "id expired",
}
# --8<-- [end:table]


def byte_to_state(byte: int) -> TransactionState:
    """The state stored as ``byte`` (Kafka's ``byteToState``)."""
    try:
        return TransactionState(byte)
    except ValueError:
        raise IllegalStateException(
            f"Unknown transaction state byte {byte} from the transaction status message"
        ) from None


def is_valid_transition(old_state: TransactionState, new_state: TransactionState) -> bool:
    """Whether the table lets a transaction move from ``old_state`` to ``new_state`` (Kafka's
    ``TransactionMetadata.isValidTransition``)."""
    # BEGIN SOLUTION
    return old_state in VALID_PREVIOUS_STATES[new_state]
    # END SOLUTION


@dataclass(frozen=True)
class TxnTransitMetadata:
    """The value a transition will give the metadata once it is in the log (Kafka's
    ``TxnTransitMetadata``): what ``__transaction_state`` is written with."""

    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    # the epoch bump's (``kafka_4_0_*`` below); their defaults are 0.11's transitions
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    next_producer_id: int = NO_PRODUCER_ID
    prev_producer_id: int = NO_PRODUCER_ID
    client_transaction_version: int = TV_0

    def supports_epoch_bump(self) -> bool:
        return self.client_transaction_version >= TV_2


class TransactionMetadata:
    """A transactional id's producer id, epoch, timeout, state and partitions. Change it only with
    its ``lock`` held, and only through ``prepare_*`` then ``complete_transition_to``."""

    def __init__(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        txn_timeout_ms: int,
        state: TransactionState,
        topic_partitions: Iterable[TopicPartition] = (),
        txn_start_timestamp: int = -1,
        txn_last_update_timestamp: int = -1,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.txn_timeout_ms = txn_timeout_ms
        self.state = state
        self.topic_partitions: set[TopicPartition] = set(topic_partitions)
        self.txn_start_timestamp = txn_start_timestamp
        self.txn_last_update_timestamp = txn_last_update_timestamp
        # the state this metadata is going to, while its log append is on the way
        self.pending_state: TransactionState | None = None
        # Transaction version 2's: the transaction version of the producer's last EndTxn; the epoch
        # before the last bump (a retried EndTxn still carries it); the producer id the next one
        # takes when the epochs run out, and the one before it (a retry may carry that).
        self.client_transaction_version = TV_0
        self.last_producer_epoch = NO_PRODUCER_EPOCH
        self.next_producer_id = NO_PRODUCER_ID
        self.previous_producer_id = NO_PRODUCER_ID
        self.lock = threading.RLock()

    def add_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        self.topic_partitions.update(partitions)

    def remove_partition(self, tp: TopicPartition) -> None:
        """A partition's marker is written: it no longer waits (only while the transaction is prepared)."""
        if self.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise IllegalStateException(
                f"Transaction metadata's current state is {self.state}, and its pending state is "
                f"{self.pending_state} while trying to remove partitions whose txn marker has been sent, "
                "this is not expected"
            )
        self.topic_partitions.discard(tp)

    # -- preparing a transition ------------------------------------------------------------------------

    def prepare_no_transit(self) -> TxnTransitMetadata:
        """The metadata as it is, without a pending state."""
        return self._transit(self.state, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
                             self.topic_partitions, self.txn_start_timestamp, self.txn_last_update_timestamp)  # fmt: skip

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """Bump the epoch at once, so that the abort markers of the open transaction fence the
        producer that opened it (an InitProducerId found it Ongoing). No pending state: the abort
        that follows sets its own."""
        if self.producer_epoch == SHORT_MAX:
            raise IllegalStateException(
                "Cannot fence producer with epoch equal to Short.MaxValue since this would overflow"
            )
        self.producer_epoch += 1
        return self.prepare_no_transit()

    def prepare_increment_producer_epoch(
        self, new_txn_timeout_ms: int, update_timestamp: int
    ) -> TxnTransitMetadata:
        """InitProducerId for an id with no open transaction: the next epoch, Empty."""
        if self.is_producer_epoch_exhausted():
            raise IllegalStateException(
                f"Cannot allocate any more producer epochs for producerId {self.producer_id}"
            )
        next_epoch = 0 if self.producer_epoch == NO_PRODUCER_EPOCH else self.producer_epoch + 1
        return self._prepare_transition_to(
            TxnState.EMPTY,
            self.producer_id,
            next_epoch,
            new_txn_timeout_ms,
            frozenset(),
            -1,
            update_timestamp,
        )

    def prepare_producer_id_rotation(
        self, new_producer_id: int, new_txn_timeout_ms: int, update_timestamp: int
    ) -> TxnTransitMetadata:
        """The epochs of the producer id ran out: a new producer id, epoch 0."""
        if self.state in (TxnState.ONGOING, TxnState.PREPARE_ABORT, TxnState.PREPARE_COMMIT):
            raise IllegalStateException("Cannot rotate producer ids while a transaction is still pending")
        return self._prepare_transition_to(
            TxnState.EMPTY, new_producer_id, 0, new_txn_timeout_ms, frozenset(), -1, update_timestamp
        )

    def prepare_add_partitions(
        self, added: Iterable[TopicPartition], update_timestamp: int
    ) -> TxnTransitMetadata:
        """Ongoing with ``added`` too; the transaction starts now if none was open."""
        if self.state in (TxnState.EMPTY, TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT):
            new_start = update_timestamp
        else:
            new_start = self.txn_start_timestamp
        return self._prepare_transition_to(
            TxnState.ONGOING, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
            frozenset(self.topic_partitions | set(added)), new_start, update_timestamp,
        )  # fmt: skip

    def prepare_abort_or_commit(
        self, new_state: TransactionState, update_timestamp: int
    ) -> TxnTransitMetadata:
        return self._prepare_transition_to(
            new_state, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
            frozenset(self.topic_partitions), self.txn_start_timestamp, update_timestamp,
        )  # fmt: skip

    # --8<-- [start:kafka_4_0_prepare_abort_or_commit]
    def kafka_4_0_prepare_abort_or_commit(
        self, new_state: TransactionState, next_producer_id: int, update_timestamp: int
    ) -> TxnTransitMetadata:
        """KIP-890 part 2 (Kafka 4.0's ``prepareAbortOrCommit`` with transaction version 2): the decision
        carries the producer's next epoch, so the markers written from it fence every write and
        every EndTxn still on its way with the old one. Under 0.11's rule the epoch stays, and a
        Produce delayed past the end of its transaction, or a retried EndTxn, lands in the
        producer's next transaction, which has the same epoch. ``next_producer_id``: the epochs
        ran out, and the transaction's completion gives the producer that id, at epoch 0."""
        transit = self._prepare_transition_to(
            new_state, self.producer_id, self.producer_epoch + 1, self.txn_timeout_ms,
            frozenset(self.topic_partitions), self.txn_start_timestamp, update_timestamp,
        )  # fmt: skip
        return dataclasses.replace(
            transit, last_producer_epoch=self.producer_epoch, next_producer_id=next_producer_id,
            client_transaction_version=TV_2,
        )  # fmt: skip

    # --8<-- [end:kafka_4_0_prepare_abort_or_commit]

    def kafka_4_0_prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        """Complete* after a transaction version 2 decision: the epoch it bumped to stays; if the
        epochs ran out, the producer id the decision set aside takes over, at epoch 0."""
        rotated = self.next_producer_id != NO_PRODUCER_ID
        producer_id, epoch = (
            (self.next_producer_id, 0) if rotated else (self.producer_id, self.producer_epoch)
        )
        new_state = (
            TxnState.COMPLETE_COMMIT if self.state is TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
        )
        transit = self._prepare_transition_to(
            new_state, producer_id, epoch, self.txn_timeout_ms, frozenset(), self.txn_start_timestamp,
            update_timestamp,
        )  # fmt: skip
        return dataclasses.replace(
            transit, last_producer_epoch=self.producer_epoch,
            prev_producer_id=self.producer_id if rotated else self.previous_producer_id,
            client_transaction_version=TV_2,
        )  # fmt: skip

    def kafka_4_0_complete_epoch_bump(self, transit: TxnTransitMetadata) -> None:
        """After ``complete_transition_to``: what a transaction version 2 transition changes beyond
        0.11's. Kafka 4.0 does this inside ``completeTransitionTo``; kafka_lite keeps that method as
        Kafka 0.11 has it (lab 16 asks for it) and applies the bump here."""
        self.client_transaction_version = transit.client_transaction_version
        if not transit.supports_epoch_bump() or transit.txn_state not in _ENDING_STATES:
            return
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.next_producer_id = transit.next_producer_id
        if transit.txn_state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            self.producer_id = transit.producer_id
            self.previous_producer_id = transit.prev_producer_id

    def prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        new_state = (
            TxnState.COMPLETE_COMMIT if self.state is TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
        )
        return self._prepare_transition_to(
            new_state, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
            frozenset(), self.txn_start_timestamp, update_timestamp,
        )  # fmt: skip

    def prepare_dead(self) -> TxnTransitMetadata:
        return self._prepare_transition_to(
            TxnState.DEAD, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
            frozenset(), self.txn_start_timestamp, self.txn_last_update_timestamp,
        )  # fmt: skip

    def is_producer_epoch_exhausted(self) -> bool:
        """Short.MaxValue is never handed out, so the coordinator can always fence once more."""
        return self.producer_epoch >= SHORT_MAX - 1

    def pending_transition_in_progress(self) -> bool:
        # BEGIN SOLUTION
        return self.pending_state is not None
        # END SOLUTION

    # --8<-- [start:prepare_transition_to]
    def _prepare_transition_to(
        self,
        new_state: TransactionState,
        new_producer_id: int,
        new_epoch: int,
        new_txn_timeout_ms: int,
        new_topic_partitions: frozenset[TopicPartition],
        new_txn_start_timestamp: int,
        update_timestamp: int,
    ) -> TxnTransitMetadata:
        # BEGIN SOLUTION
        if self.pending_state is not None:
            raise IllegalStateException(
                f"Preparing transaction state transition to {new_state} while it already a pending state "
                f"{self.pending_state}"
            )
        if new_producer_id < 0:
            raise ValueError(f"Illegal new producer id {new_producer_id}")
        if new_epoch < 0:
            raise ValueError(f"Illegal new producer epoch {new_epoch}")
        if not is_valid_transition(self.state, new_state):
            valid = ", ".join(sorted(str(s) for s in VALID_PREVIOUS_STATES[new_state]))
            raise IllegalStateException(
                f"Preparing transaction state transition to {new_state} failed since the target state "
                f"{new_state} is not a valid previous state of the current state {self.state} "
                f"(TransactionalId {self.transactional_id}; {new_state} is reached only from [{valid}])"
            )
        transit = self._transit(new_state, new_producer_id, new_epoch, new_txn_timeout_ms,
                                new_topic_partitions, new_txn_start_timestamp, update_timestamp)  # fmt: skip
        log.debug(
            "TransactionalId %s prepare transition from %s to %s", self.transactional_id, self.state, transit
        )
        self.pending_state = new_state
        return transit
        # END SOLUTION

    # --8<-- [end:prepare_transition_to]

    @staticmethod
    def _transit(state, producer_id, epoch, timeout_ms, partitions, start, update) -> TxnTransitMetadata:
        return TxnTransitMetadata(producer_id, epoch, timeout_ms, state, frozenset(partitions), start, update)

    # -- completing it ---------------------------------------------------------------------------------

    # --8<-- [start:complete_transition_to]
    def complete_transition_to(self, transit: TxnTransitMetadata) -> None:
        """Apply ``transit`` now that the log holds it, after checking it is the one prepared: the
        pending state, an epoch that is the same (or, for Empty, bumped or restarted with a new
        producer id), partitions that only grow while Ongoing."""
        # BEGIN SOLUTION
        to_state = self.pending_state
        if to_state is None:
            raise IllegalStateException(
                f"TransactionalId {self.transactional_id} completing transaction state transition while "
                "it does not have a pending state"
            )
        if to_state is not transit.txn_state:
            self._throw_state_transition_failure(transit)
        if to_state is TxnState.EMPTY:  # from InitProducerId
            if (
                (
                    self.producer_epoch != transit.producer_epoch
                    and not self._valid_producer_epoch_bump(transit)
                )
                or transit.topic_partitions
                or transit.txn_start_timestamp != -1
            ):
                self._throw_state_transition_failure(transit)
            self.txn_timeout_ms = transit.txn_timeout_ms
            self.producer_epoch = transit.producer_epoch
            self.producer_id = transit.producer_id
        elif to_state is TxnState.ONGOING:  # from AddPartitionsToTxn
            if (
                not self._valid_producer_epoch(transit)
                or not self.topic_partitions <= transit.topic_partitions
                or self.txn_timeout_ms != transit.txn_timeout_ms
                or self.txn_start_timestamp > transit.txn_start_timestamp
            ):
                self._throw_state_transition_failure(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.add_partitions(transit.topic_partitions)
        elif to_state in (TxnState.PREPARE_ABORT, TxnState.PREPARE_COMMIT):  # from EndTxn
            if (
                not self._valid_producer_epoch(transit)
                or self.topic_partitions != transit.topic_partitions
                or self.txn_timeout_ms != transit.txn_timeout_ms
                or self.txn_start_timestamp != transit.txn_start_timestamp
            ):
                self._throw_state_transition_failure(transit)
        elif to_state in (TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT):  # every marker written
            if (
                not self._valid_producer_epoch(transit)
                or self.txn_timeout_ms != transit.txn_timeout_ms
                or transit.txn_start_timestamp == -1
            ):
                self._throw_state_transition_failure(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.topic_partitions.clear()
        else:  # Dead: an expired id leaves the cache; its Dead state is never written
            raise IllegalStateException(
                f"TransactionalId {self.transactional_id} is trying to complete a transition to {to_state}. "
                "This means that the transactionalId was being expired, and the only acceptable completion "
                "of this operation is to remove the transaction metadata from the cache, not to persist the "
                f"{to_state} in the log."
            )
        log.debug(
            "TransactionalId %s complete transition from %s to %s", self.transactional_id, self.state, transit
        )
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None
        self.state = to_state
        # END SOLUTION

    # --8<-- [end:complete_transition_to]

    def _valid_producer_epoch(self, transit: TxnTransitMetadata) -> bool:
        """The transition keeps this producer id and epoch. A transaction version 2 decision (KIP-890
        part 2, Kafka 4.0's ``validProducerEpoch``) is compared by the epoch it bumped from, and a
        completion that took a new producer id by the id and epoch it came from."""
        epoch, producer_id = transit.producer_epoch, transit.producer_id
        if transit.supports_epoch_bump():
            completing = transit.txn_state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
            if completing and transit.producer_epoch == 0:  # only a new producer id starts at 0
                epoch, producer_id = transit.last_producer_epoch, transit.prev_producer_id
            elif transit.txn_state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                epoch = transit.last_producer_epoch
        return epoch == self.producer_epoch and producer_id == self.producer_id

    def _valid_producer_epoch_bump(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch + 1 or (
            transit.producer_epoch == 0 and transit.producer_id != self.producer_id
        )

    def _throw_state_transition_failure(self, transit: TxnTransitMetadata) -> None:
        log.error("%s's transition to %s failed: this should not happen", self, transit)
        raise IllegalStateException(
            f"TransactionalId {self.transactional_id} failed transition to state {transit} due to unexpected metadata"
        )

    def __repr__(self) -> str:
        return (
            f"TransactionMetadata(transactionalId={self.transactional_id}, producerId={self.producer_id}, "
            f"producerEpoch={self.producer_epoch}, txnTimeoutMs={self.txn_timeout_ms}, state={self.state}, "
            f"pendingState={self.pending_state}, topicPartitions={sorted(self.topic_partitions)}, "
            f"txnStartTimestamp={self.txn_start_timestamp}, txnLastUpdateTimestamp={self.txn_last_update_timestamp})"
        )
