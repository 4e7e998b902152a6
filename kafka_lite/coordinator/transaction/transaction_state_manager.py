"""The transaction state manager: the coordinator's storage, which appends transactions to
``__transaction_state`` and loads them back.

Mirrors: kafka.coordinator.transaction.TransactionStateManager and TransactionConfig
         (core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98); its model is the group coordinator's
         storage, chapter 5, 5.2.2, and chapter 7, 7.2.3 (a new leader loads the partition)
Differs: one lock (an ``RLock``) guards the cache, where Kafka has a read-write lock; the append is
         made after the cache's and the metadata's locks are released (as ``GroupMetadataManager``
         does with its ``DelayedStore``), because kafka_lite's purgatory completes a delayed produce
         with a blocking lock and the completion takes these locks, so holding them across
         ``append_records`` could deadlock against a follower's fetch. The coordinator epoch is
         checked before and after the append, which catches a partition that moved meanwhile.
         The partition count is ``transaction.state.log.num.partitions`` (Kafka reads the topic's
         count from ZooKeeper when the topic exists). Expiring transactional ids borrows Kafka 3.0's
         two guards (``may_expire``, ``expiration_written``); a load replaces the partition's cached
         transactions, as Kafka 2.5's does, since KRaft loads a partition it already leads again.

Every broker finds a transactional id's partition without asking anyone: Java's
``String.hashCode`` of the id, made non-negative by ``Utils.abs``, modulo the partition count, the
rule ``__consumer_offsets`` uses for groups. The leader of that partition is the id's coordinator.

When the broker becomes a partition's leader it reads the partition's log, the last value per
transactional id winning, and caches the metadata under the partition's *coordinator epoch* (the
partition's leader epoch). A transaction found prepared (PrepareCommit or PrepareAbort) was decided
by the previous coordinator and is finished here: its markers are sent again and its Complete state
written. Meanwhile, requests for the partition's ids get COORDINATOR_LOAD_IN_PROGRESS. When the
broker stops leading the partition its ids are dropped; requests get NOT_COORDINATOR.

A transition is appended with acks=-1 and completes (``complete_transition_to``) only once every
in-sync replica has it, under the coordinator epoch it was prepared in: a result that arrives after
the partition moved is answered NOT_COORDINATOR and changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import abs_int, java_string_hash
from kafka_lite.coordinator.group_metadata_manager import read_batches
from kafka_lite.coordinator.transaction import transaction_log
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafka_lite.utils.scheduler import Scheduler

if TYPE_CHECKING:
    from kafka_lite.server.replica_manager import PartitionResponse, ReplicaManager

log = logging.getLogger(__name__)

TxnState = TransactionState

DEFAULT_TRANSACTIONS_MAX_TIMEOUT_MS = 15 * 60 * 1000
DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS = 7 * 24 * 60 * 60 * 1000
DEFAULT_ABORT_TIMED_OUT_TRANSACTIONS_INTERVAL_MS = 60 * 1000
DEFAULT_REMOVE_EXPIRED_TRANSACTIONAL_IDS_INTERVAL_MS = 60 * 60 * 1000

# What a failed append to __transaction_state answers (Kafka's updateCacheCallback): a timeout too is
# COORDINATOR_NOT_AVAILABLE, so the client retries.
_APPEND_ERRORS = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_FOR_PARTITION: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN,
}


@dataclass(frozen=True)
class TransactionConfig:
    """The broker's transaction settings, Kafka 0.11.0's defaults (``transactional.id.expiration.ms``,
    ``transaction.max.timeout.ms``, ``transaction.state.log.*``,
    ``transaction.abort.timed.out.transaction.cleanup.interval.ms``,
    ``transaction.remove.expired.transaction.cleanup.interval.ms``, ``request.timeout.ms``)."""

    transactional_id_expiration_ms: int = DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS
    transaction_max_timeout_ms: int = DEFAULT_TRANSACTIONS_MAX_TIMEOUT_MS
    transaction_log_num_partitions: int = transaction_log.DEFAULT_NUM_PARTITIONS
    transaction_log_replication_factor: int = transaction_log.DEFAULT_REPLICATION_FACTOR
    transaction_log_segment_bytes: int = transaction_log.DEFAULT_SEGMENT_BYTES
    transaction_log_load_buffer_size: int = transaction_log.DEFAULT_LOAD_BUFFER_SIZE
    transaction_log_min_insync_replicas: int = transaction_log.DEFAULT_MIN_IN_SYNC_REPLICAS
    abort_timed_out_transactions_interval_ms: int = DEFAULT_ABORT_TIMED_OUT_TRANSACTIONS_INTERVAL_MS
    remove_expired_transactional_ids_interval_ms: int = DEFAULT_REMOVE_EXPIRED_TRANSACTIONAL_IDS_INTERVAL_MS
    request_timeout_ms: int = 30_000

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"TransactionConfig: {name} must be a positive int, not {value!r}")


@dataclass
class TxnMetadataCacheEntry:
    coordinator_epoch: int
    metadata_per_transactional_id: dict[str, TransactionMetadata] = field(default_factory=dict)


@dataclass(frozen=True)
class CoordinatorEpochAndTxnMetadata:
    coordinator_epoch: int
    transaction_metadata: TransactionMetadata


@dataclass(frozen=True)
class TransactionalIdAndProducerIdEpoch:
    transactional_id: str
    producer_id: int
    producer_epoch: int


# (the transactional id, the coordinator epoch, commit?, the metadata, the Complete* transition)
SendTxnMarkersCallback = Callable[[str, int, bool, TransactionMetadata, TxnTransitMetadata], None]
# Either an error, or the id's metadata (None: not known here)
StateResult = tuple[Errors, "CoordinatorEpochAndTxnMetadata | None"]


def partition_for(transactional_id: str, partition_count: int) -> int:
    """The ``__transaction_state`` partition of ``transactional_id`` (Kafka's ``partitionFor``):
    ``Utils.abs(transactionalId.hashCode) % transaction.state.log.num.partitions``."""
    return abs_int(java_string_hash(transactional_id)) % partition_count


class TransactionStateManager:
    def __init__(
        self,
        broker_id: int,
        scheduler: Scheduler,
        replica_manager: ReplicaManager,
        config: TransactionConfig,
        time: Time,
    ) -> None:
        self.broker_id = broker_id
        self.scheduler = scheduler
        self.replica_manager = replica_manager
        self.config = config
        self.time = time
        self._shutting_down = threading.Event()
        # the cache and the loading and leaving partitions, under one lock; a metadata's lock is
        # never taken before it by the same thread
        self._state_lock = threading.RLock()
        self._loading_partitions: set[tuple[int, int]] = set()  # (partition, coordinator epoch)
        self._leaving_partitions: set[tuple[int, int]] = set()
        self._transaction_metadata_cache: dict[int, TxnMetadataCacheEntry] = {}
        self.transaction_topic_partition_count = config.transaction_log_num_partitions

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.transaction_topic_partition_count)

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        return 0 < txn_timeout_ms <= self.config.transaction_max_timeout_ms

    def transaction_topic_configs(self) -> dict[str, str]:
        """The settings ``__transaction_state`` is created with: compacted, uncompressed, never an
        unclean leader, its own min ISR and segment size (Kafka's ``transactionTopicConfigs``)."""
        return {
            "unclean.leader.election.enable": "false",
            "compression.type": "uncompressed",
            "cleanup.policy": "compact",
            "min.insync.replicas": str(self.config.transaction_log_min_insync_replicas),
            "segment.bytes": str(self.config.transaction_log_segment_bytes),
        }

    # -- the cache -------------------------------------------------------------------------------------

    def get_transaction_state(self, transactional_id: str) -> StateResult:
        return self._get_and_maybe_add_transaction_state(transactional_id, None)

    def put_transaction_state_if_not_exists(
        self, transactional_id: str, txn_metadata: TransactionMetadata
    ) -> StateResult:
        return self._get_and_maybe_add_transaction_state(transactional_id, txn_metadata)

    def _get_and_maybe_add_transaction_state(
        self, transactional_id: str, created: TransactionMetadata | None
    ) -> StateResult:
        """The id's metadata, or an error if this broker does not own its partition or is still
        loading it; with ``created``, add that if the id is not known."""
        with self._state_lock:
            partition_id = self.partition_for(transactional_id)
            if any(p == partition_id for p, _ in self._loading_partitions):
                return Errors.COORDINATOR_LOAD_IN_PROGRESS, None
            if any(p == partition_id for p, _ in self._leaving_partitions):
                return Errors.NOT_COORDINATOR, None
            entry = self._transaction_metadata_cache.get(partition_id)
            if entry is None:
                return Errors.NOT_COORDINATOR, None
            metadata = entry.metadata_per_transactional_id.get(transactional_id)
            if metadata is None and created is not None:
                metadata = entry.metadata_per_transactional_id.setdefault(transactional_id, created)
            if metadata is None:
                return Errors.NONE, None
            return Errors.NONE, CoordinatorEpochAndTxnMetadata(entry.coordinator_epoch, metadata)

    def owned_partitions(self) -> list[int]:
        with self._state_lock:
            return sorted(self._transaction_metadata_cache)

    # -- timing out transactions, expiring ids --------------------------------------------------------

    def timed_out_transactions(self) -> list[TransactionalIdAndProducerIdEpoch]:
        """Ongoing transactions open longer than their timeout. Best effort: the state is read
        without each metadata's lock; the abort takes it and checks again."""
        now = self.time.milliseconds()
        with self._state_lock:
            leaving = {p for p, _ in self._leaving_partitions}
            entries = [e for p, e in self._transaction_metadata_cache.items() if p not in leaving]
            return [
                TransactionalIdAndProducerIdEpoch(txn_id, m.producer_id, m.producer_epoch)
                for entry in entries
                for txn_id, m in entry.metadata_per_transactional_id.items()
                if not m.pending_transition_in_progress()
                and m.state is TxnState.ONGOING
                and m.txn_start_timestamp + m.txn_timeout_ms < now
            ]

    def enable_transactional_id_expiration(self) -> None:
        self.scheduler.schedule(
            "transactionalId-expiration",
            self.remove_expired_transactional_ids,
            delay_ms=self.config.remove_expired_transactional_ids_interval_ms,
            period_ms=self.config.remove_expired_transactional_ids_interval_ms,
        )

    def remove_expired_transactional_ids(self) -> None:
        """Ids idle (Empty or Complete*) for ``transactional.id.expiration.ms`` are tombstoned in the
        log, then dropped from the cache if nothing touched them meanwhile.

        Why expire at all: every transactional id a producer ever used holds a producer id, an
        epoch and a cache entry on its coordinator, and a record in ``__transaction_state`` that
        compaction keeps. A null value (the tombstone) lets compaction drop the record, and the id
        starts afresh (a new producer id) if it comes back. The id goes Dead first, as a pending
        transition, so that a request arriving meanwhile sees CONCURRENT_TRANSACTIONS rather
        than an id that vanishes under it."""
        now = self.time.milliseconds()
        expired: dict[int, list[tuple[str, int, TxnTransitMetadata]]] = {}
        with self._state_lock:
            for entry in self._transaction_metadata_cache.values():
                for txn_id, m in entry.metadata_per_transactional_id.items():
                    with m.lock:
                        if self.may_expire(m, now):
                            transit = m.prepare_dead()
                            expired.setdefault(self.partition_for(txn_id), []).append(
                                (txn_id, entry.coordinator_epoch, transit)
                            )
        if not expired:
            return
        records = {
            (TRANSACTION_STATE_TOPIC_NAME, partition): MemoryRecords.with_records(
                [(now, transaction_log.key_to_bytes(txn_id), None) for txn_id, _, _ in ids]
            )
            for partition, ids in expired.items()
        }

        def remove_from_cache_callback(responses: dict[TopicPartition, PartitionResponse]) -> None:
            for (_, partition), response in responses.items():
                with self._state_lock:
                    entry = self._transaction_metadata_cache.get(partition)
                    for txn_id, coordinator_epoch, transit in expired[partition]:
                        m = entry.metadata_per_transactional_id.get(txn_id) if entry else None
                        if m is None:
                            continue
                        with m.lock:
                            if self.expiration_written(response.error, entry, coordinator_epoch, m, transit):
                                del entry.metadata_per_transactional_id[txn_id]
                                log.info("Removed expired transactionalId %s", txn_id)

        self.replica_manager.append_records(
            self.config.request_timeout_ms,
            transaction_log.ENFORCED_REQUIRED_ACKS,
            True,
            records,
            remove_from_cache_callback,
            is_from_client=False,
        )

    def may_expire(self, m: TransactionMetadata, now: int) -> bool:
        """Whether the id ``m`` has been idle long enough to expire: Empty or Complete*, last updated
        ``transactional.id.expiration.ms`` ago, and (Kafka 3.0's guard) no transition pending.

        Kafka 0.11.0 checks only the state and the time, and calls ``prepareDead`` on an id whose
        transition (an InitProducerId, say) is still being written: ``prepareDead`` throws, and the
        exception ends the whole pass, so no id of any partition expires until that write is done.
        kafka_lite borrows 3.0's guard, which skips that one id until the next pass."""
        return (
            m.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
            and not m.pending_transition_in_progress()
            and m.txn_last_update_timestamp <= now - self.config.transactional_id_expiration_ms
        )

    @staticmethod
    def expiration_written(
        error: Errors,
        entry: TxnMetadataCacheEntry,
        coordinator_epoch: int,
        m: TransactionMetadata,
        transit: TxnTransitMetadata,
    ) -> bool:
        """After the tombstone's append (call with ``m``'s lock held): whether the id may leave the
        cache. Yes if the append succeeded, this broker still owns the partition at the same
        coordinator epoch, and nothing changed the id meanwhile (still pending Dead, same producer
        epoch). Otherwise its pending Dead is cleared, as Kafka 3.0 does, and the id lives on.

        Kafka 0.11.0 clears it only when the append succeeded and something else changed; after a
        failed append it leaves the id pending Dead, and every later request for the id is answered
        CONCURRENT_TRANSACTIONS until the broker stops owning the partition. kafka_lite borrows 3.0's
        answer so that a failed write (a follower down under ``min.insync.replicas``) costs nothing."""
        if (
            error is Errors.NONE
            and entry.coordinator_epoch == coordinator_epoch
            and m.pending_state is TxnState.DEAD
            and m.producer_epoch == transit.producer_epoch
        ):
            return True
        m.pending_state = None
        return False

    # -- loading and unloading a partition ------------------------------------------------------------

    def load_transactions_for_txn_topic_partition(
        self, partition_id: int, coordinator_epoch: int, send_txn_markers: SendTxnMarkersCallback
    ) -> None:
        """This broker leads ``partition_id`` now (at ``coordinator_epoch``): read its transactions
        on the scheduler, then finish those the previous coordinator left prepared."""
        key = (partition_id, coordinator_epoch)
        with self._state_lock:
            self._leaving_partitions.discard(key)
            self._loading_partitions.add(key)

        def load_transactions() -> None:
            tp = (TRANSACTION_STATE_TOPIC_NAME, partition_id)
            log.info("Loading transaction metadata from %s-%d", *tp)
            loaded = self._load_transaction_metadata(tp, coordinator_epoch)
            pending: list[tuple[str, bool, TransactionMetadata, TxnTransitMetadata]] = []
            with self._state_lock:
                if key not in self._loading_partitions:
                    return  # resigned, or elected again at a newer epoch, while loading
                self._add_loaded_transactions_to_cache(partition_id, coordinator_epoch, loaded)
                for txn_id, m in loaded.items():
                    with m.lock:
                        if m.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                            is_commit = m.state is TxnState.PREPARE_COMMIT
                            pending.append(
                                (txn_id, is_commit, m, m.prepare_complete(self.time.milliseconds()))
                            )
                # loading is over before the markers go, so that their Complete append is not refused
                self._loading_partitions.discard(key)
            for txn_id, is_commit, m, transit in pending:
                send_txn_markers(txn_id, coordinator_epoch, is_commit, m, transit)

        self.scheduler.schedule(
            f"load-txns-for-partition-{TRANSACTION_STATE_TOPIC_NAME}-{partition_id}", load_transactions
        )

    # --8<-- [start:load_transaction_metadata]
    def _load_transaction_metadata(
        self, tp: TopicPartition, coordinator_epoch: int
    ) -> dict[str, TransactionMetadata]:
        """Every record from the log's start to its end, the last value per transactional id
        winning and a tombstone deleting it; stops if the partition stops loading at this epoch."""
        start_ms = self.time.milliseconds()
        loaded: dict[str, TransactionMetadata] = {}
        partition = self.replica_manager.get_partition(tp)
        log_ = partition.log if partition is not None else None
        if log_ is None:
            log.warning("Attempted to load transaction metadata from %s-%d, but found no log", *tp)
            return loaded
        offset = log_.log_start_offset
        try:
            while (
                offset < log_.log_end_offset
                and not self._shutting_down.is_set()
                and self._still_loading(tp[1], coordinator_epoch)
            ):
                batches = read_batches(log_, offset, self.config.transaction_log_load_buffer_size)
                if not batches:
                    break
                for batch in batches:
                    for record in batch:
                        if record.offset < offset:
                            continue
                        txn_id = transaction_log.read_txn_record_key(record.key).transactional_id
                        metadata = transaction_log.read_txn_record_value(txn_id, record.value)
                        if metadata is None:
                            loaded.pop(txn_id, None)
                        else:
                            loaded[txn_id] = metadata
                offset = batches[-1].next_offset
            log.info(
                "Finished loading %d transaction metadata from %s-%d in %d milliseconds",
                len(loaded), *tp, self.time.milliseconds() - start_ms,
            )  # fmt: skip
        except Exception:
            log.exception("Error loading transactions from transaction log %s-%d", *tp)
        return loaded

    # --8<-- [end:load_transaction_metadata]

    def _still_loading(self, partition_id: int, coordinator_epoch: int) -> bool:
        with self._state_lock:
            return (partition_id, coordinator_epoch) in self._loading_partitions

    def _add_loaded_transactions_to_cache(
        self, partition_id: int, coordinator_epoch: int, loaded: dict[str, TransactionMetadata]
    ) -> None:
        """Cache the partition's loaded transactions, replacing what an earlier load left (Kafka 2.5,
        KAFKA-9307).

        Kafka 0.11.0 refuses a second load while an entry is cached (``IllegalStateException``), which
        leaves the partition in loading for good: every request for its ids is answered
        COORDINATOR_LOAD_IN_PROGRESS, and no open transaction of it can end, by its producer or by
        the timeout sweep. A ZooKeeper broker loads only when it becomes a partition's leader (its
        ``ReplicaManager`` reports only new leaders), after resigning it; KRaft's publisher (Kafka
        3.3) elects the coordinator again, without resigning, whenever a partition led here
        changes: its ISR (at the same leader epoch) or a record naming the same leader (the next
        epoch). The log is the truth, so the fresh load replaces the cache, as Kafka does from 2.5
        on."""
        previous = self._transaction_metadata_cache.get(partition_id)
        self._transaction_metadata_cache[partition_id] = TxnMetadataCacheEntry(coordinator_epoch, loaded)
        if previous is not None:
            log.warning("Unloaded %d cached transaction metadata (coordinator epoch %d) from %s-%d as part "
                        "of loading metadata at epoch %d", len(previous.metadata_per_transactional_id),
                        previous.coordinator_epoch, TRANSACTION_STATE_TOPIC_NAME, partition_id,
                        coordinator_epoch)  # fmt: skip

    def remove_transactions_for_txn_topic_partition(self, partition_id: int, coordinator_epoch: int) -> None:
        """This broker no longer leads ``partition_id``: drop its transactions (on the scheduler);
        meanwhile its ids answer NOT_COORDINATOR."""
        key = (partition_id, coordinator_epoch)
        with self._state_lock:
            self._loading_partitions = {k for k in self._loading_partitions if k[0] != partition_id}
            self._leaving_partitions.add(key)

        def remove_transactions() -> None:
            with self._state_lock:
                if key not in self._leaving_partitions:
                    return
                entry = self._transaction_metadata_cache.pop(partition_id, None)
                self._leaving_partitions.discard(key)
            count = len(entry.metadata_per_transactional_id) if entry else 0
            log.info("Removed %d cached transaction metadata for %s-%d on follower transition",
                     count, TRANSACTION_STATE_TOPIC_NAME, partition_id)  # fmt: skip

        self.scheduler.schedule(
            f"remove-txns-for-partition-{TRANSACTION_STATE_TOPIC_NAME}-{partition_id}", remove_transactions
        )

    # -- appending a transition ------------------------------------------------------------------------

    # --8<-- [start:append_transaction_to_log]
    def append_transaction_to_log(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        new_metadata: TxnTransitMetadata,
        response_callback: Callable[[Errors], None],
        retry_on_error: Callable[[Errors], bool] = lambda _: False,
    ) -> None:
        """Append ``new_metadata`` with acks=-1; once every in-sync replica has it, complete the
        transition (if the coordinator epoch is still ``coordinator_epoch``) and answer.

        Why acks=-1 and a minimum ISR: the log is the coordinator's memory. A transition answered
        on the leader's copy alone could be lost with that leader, and the next coordinator, loading
        a log without it, would act as if a commit had never been decided or an epoch never bumped:
        a fenced producer would be let back in. Why the coordinator epoch: it is the partition's
        leader epoch when this broker loaded it, and it changes when leadership moves, even away
        and back; a result carrying an older one belongs to a coordinator that no longer is, and
        must change nothing."""
        key = transaction_log.key_to_bytes(transactional_id)
        value = transaction_log.value_to_bytes(new_metadata)
        tp = (TRANSACTION_STATE_TOPIC_NAME, self.partition_for(transactional_id))
        records = MemoryRecords.with_records([(self.time.milliseconds(), key, value)])

        def update_cache_callback(responses: dict[TopicPartition, PartitionResponse]) -> None:
            status = responses[tp]
            error = status.error
            if error is not Errors.NONE:
                log.debug(
                    "Appending %s's new metadata %s failed due to %s",
                    transactional_id,
                    new_metadata,
                    error.name,
                )
                error = _APPEND_ERRORS.get(error, error)
            response_callback(
                self._complete_append(
                    transactional_id, coordinator_epoch, new_metadata, error, retry_on_error
                )
            )

        error, epoch_and_metadata = self.get_transaction_state(transactional_id)
        if error is Errors.NONE and epoch_and_metadata is None:
            error = Errors.NOT_COORDINATOR  # the partition's metadata was removed
        elif error is Errors.NONE and epoch_and_metadata.coordinator_epoch != coordinator_epoch:
            error = Errors.NOT_COORDINATOR  # the partition moved away and back since the prepare
        if error is not Errors.NONE:
            response_callback(error)
            return
        self.replica_manager.append_records(
            new_metadata.txn_timeout_ms,
            transaction_log.ENFORCED_REQUIRED_ACKS,
            True,  # internal topics allowed
            {tp: records},
            update_cache_callback,
            is_from_client=False,
        )

    # The cache changes only after the log has the transition (two steps, ``prepare_*`` then
    # ``complete_transition_to``): what a client is told, and what the cache holds, are never ahead
    # of what a new coordinator would load.
    def _complete_append(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        new_metadata: TxnTransitMetadata,
        error: Errors,
        retry_on_error: Callable[[Errors], bool],
    ) -> Errors:
        """The append's answer is in: apply the transition, or drop the pending state (unless the
        caller retries), in both cases only if the coordinator epoch did not change."""
        state_error, epoch_and_metadata = self.get_transaction_state(transactional_id)
        if error is Errors.NONE:
            if state_error is not Errors.NONE:
                log.info("Accessing the cached transaction metadata for %s returns %s error; aborting "
                         "transition to the new metadata", transactional_id, state_error.name)  # fmt: skip
                return state_error
            if epoch_and_metadata is None or epoch_and_metadata.coordinator_epoch != coordinator_epoch:
                log.info("The coordinator of %s changed while its new metadata %s was appended; returning "
                         "NOT_COORDINATOR", transactional_id, new_metadata)  # fmt: skip
                return Errors.NOT_COORDINATOR
            metadata = epoch_and_metadata.transaction_metadata
            with metadata.lock:
                metadata.complete_transition_to(new_metadata)
                metadata.kafka_4_0_complete_epoch_bump(new_metadata)
            return Errors.NONE
        if state_error is Errors.NONE and epoch_and_metadata is not None:
            metadata = epoch_and_metadata.transaction_metadata
            with metadata.lock:
                if epoch_and_metadata.coordinator_epoch == coordinator_epoch and not retry_on_error(error):
                    log.info("TransactionalId %s append transaction log for %s transition failed due to %s, "
                             "resetting pending state from %s", transactional_id, new_metadata, error.name,
                             metadata.pending_state)  # fmt: skip
                    metadata.pending_state = None
        return error

    # --8<-- [end:append_transaction_to_log]

    def shutdown(self) -> None:
        self._shutting_down.set()
        with self._state_lock:
            self._loading_partitions.clear()
            self._transaction_metadata_cache.clear()
        log.info("Shutdown complete")
