"""The group metadata manager: the coordinator's storage, which appends groups and offsets to
``__consumer_offsets`` and loads them back.

Mirrors: class kafka.coordinator.GroupMetadataManager (the groups cache, loading and unloading a
         partition's groups, storing groups and offsets, fetching offsets, expiring them (and
         removing a deleted topic's, as 0.11 does), and partitionFor; core/src/main/scala/kafka/coordinator/GroupMetadataManager.scala, Kafka
         0.10.1), kafka.common.OffsetMetadataAndError (in
         core/src/main/scala/kafka/common/OffsetMetadataAndError.scala), OffsetConfig
         (kafka/coordinator/OffsetConfig.scala) and DelayedStore, as GroupMetadataManager.scala
         declares it. The records' format, which Kafka keeps in the manager's companion object, is
         ``offsets_topic_records``.
Book:    chapter 3, 3.5.2-3.5.5 (offsets committed to the internal topic, the coordinator found
         from the group's partition, offsets cached from the topic); chapter 5, 5.2.2 (the
         consumer and group metadata the coordinator keeps, committing offsets); chapter 7, 7.2.3
         (a new leader loads the partition's groups from its log, the old one unloads them)
Differs: the manager fills in an offset's unset commit time and expiry (-1) itself, where Kafka's
         ``KafkaApis`` fills them in before calling the coordinator; it puts a loaded group's
         offsets in before the group is visible, as Kafka 0.11 does; it counts a partition as owned
         and loading from the moment its load is scheduled, so that requests meanwhile get
         COORDINATOR_LOAD_IN_PROGRESS (in 0.10.1 the partition is owned only once loaded, and they
         get NOT_COORDINATOR_FOR_GROUP). Expiry appends a dead group's tombstone in the same batch
         as its offsets' (0.10.1 appends it separately).

SyncGroup's assignment is stored as the group's record, and OffsetCommit as one record per
partition, appended through the replica manager with ``offsets.commit.required.acks`` (-1: every
in-sync replica has them before the answer). When the broker becomes the leader of a partition of
the topic, a task on the scheduler reads the partition's log from its start to the high watermark,
the last value per key winning and a tombstone deleting, and caches the groups; meanwhile requests
for them get COORDINATOR_LOAD_IN_PROGRESS. Every ``offsets.retention.check.interval.ms`` the
offsets whose expiry passed are removed and tombstoned, and an Empty group left without offsets
dies; a deleted topic's offsets go the same way as soon as the broker learns of the deletion
(Kafka 0.10.2's ``cleanupGroupMetadata(deletedTopicPartitions)``, read here in its 0.11 form).

``partition_for`` is how every broker, and every tool, finds a group's partition without asking
anyone: Java's ``String.hashCode`` of the group id, made non-negative by Kafka's ``Utils.abs``,
modulo ``offsets.topic.num.partitions``. The leader of that partition is the group's coordinator.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from kafka_lite.common.errors import Errors, IllegalStateException, KafkaException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import ControlRecordType
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic import GROUP_METADATA_TOPIC_NAME
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import abs_int, java_string_hash
from kafka_lite.coordinator.group_metadata import GroupMetadata, GroupState
from kafka_lite.coordinator.member_metadata import MemberMetadata
from kafka_lite.coordinator.offset_and_metadata import NO_METADATA, OffsetAndMetadata
from kafka_lite.coordinator.offsets_topic_records import (
    GroupTopicPartition,
    OffsetKey,
    StoredGroupMetadata,
    StoredMemberMetadata,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from kafka_lite.utils.scheduler import Scheduler

if TYPE_CHECKING:
    from kafka_lite.server.replica_manager import PartitionResponse, ReplicaManager

log = logging.getLogger(__name__)

NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID: an offset commit outside a transaction
NO_PRODUCER_EPOCH = -1


# --8<-- [start:partition_for]
def partition_for(group_id: str, partition_count: int) -> int:
    """The ``__consumer_offsets`` partition that holds ``group_id`` (Kafka's ``partitionFor``):
    ``Utils.abs(groupId.hashCode) % offsets.topic.num.partitions``."""
    if partition_count < 1:
        raise ValueError(f"__consumer_offsets needs at least 1 partition, not {partition_count}")
    return abs_int(java_string_hash(group_id)) % partition_count


# --8<-- [end:partition_for]


@dataclass(frozen=True)
class OffsetConfig:
    """The broker's offset settings, Kafka 0.10.1's defaults: ``offset.metadata.max.bytes``,
    ``offsets.retention.minutes`` (as ms), ``offsets.retention.check.interval.ms``,
    ``offsets.topic.num.partitions``, ``offsets.topic.segment.bytes``,
    ``offsets.commit.timeout.ms`` and ``offsets.commit.required.acks``."""

    max_metadata_size: int = 4096
    offsets_retention_ms: int = 24 * 60 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offset_commit_timeout_ms: int = 5000
    offset_commit_required_acks: int = -1

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"OffsetConfig: {name} must be an int, not {value!r}")
        for name in (
            "offsets_retention_ms",
            "offsets_retention_check_interval_ms",
            "offsets_topic_num_partitions",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"OffsetConfig: {name} must be at least 1, not {getattr(self, name)}")
        if self.offset_commit_required_acks not in (-1, 1):
            raise ValueError(
                f"OffsetConfig: offset_commit_required_acks must be -1 or 1, not {self.offset_commit_required_acks}"
            )

    def offsets_topic_configs(self) -> dict[str, Any]:
        """The topic settings ``__consumer_offsets`` is created with: compacted, so that the latest
        value per key stays, with its own segment size (Kafka's ``offsetsTopicConfigs``)."""
        return {
            "cleanup.policy": "compact",
            "segment.bytes": self.offsets_topic_segment_bytes,
            "compression.type": "producer",
        }


class OffsetMetadataAndError(NamedTuple):
    """One partition of an OffsetFetch answer (Kafka's ``OffsetMetadataAndError``): -1 and no
    metadata when the group has no offset for it."""

    offset: int
    metadata: str = NO_METADATA
    error: Errors = Errors.NONE


NO_OFFSET = OffsetMetadataAndError(-1)

# What a failed append to __consumer_offsets answers, Kafka's putCacheCallback mappings (shared by
# groups and offsets except for the size errors and the timeout, which differ per caller).
_APPEND_ERRORS = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_FOR_PARTITION: Errors.NOT_COORDINATOR,
}
_TOO_LARGE = (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE)


@dataclass
class DelayedStore:
    """Records to append to one ``__consumer_offsets`` partition and what to do with the answer
    (Kafka's ``DelayedStore``): prepared under the group's lock, appended after it is released."""

    entries: dict[TopicPartition, MemoryRecords]
    callback: Callable[[dict[TopicPartition, PartitionResponse]], None]


class GroupMetadataManager:
    """The groups and offsets of the ``__consumer_offsets`` partitions this broker leads, cached
    here and stored in the partitions' logs through the replica manager."""

    def __init__(
        self,
        broker_id: int,
        config: OffsetConfig,
        replica_manager: ReplicaManager,
        time: Time,
        scheduler: Scheduler,
    ) -> None:
        if not isinstance(config, OffsetConfig):
            raise TypeError(f"GroupMetadataManager: config must be an OffsetConfig, not {config!r}")
        self.broker_id = broker_id
        self.config = config
        self.replica_manager = replica_manager
        self.time = time
        self.scheduler = scheduler
        self._groups_cache: dict[str, GroupMetadata] = {}
        # the partitions whose groups are being read from the log, and those whose groups are here,
        # and the cache, under one lock; a group's lock is taken before this one, never after it
        self._partition_lock = threading.RLock()
        self._loading_partitions: set[int] = set()
        self._owned_partitions: set[int] = set()
        self._shutting_down = False
        # Kafka's constructor schedules the expiration at once, then every check interval
        scheduler.schedule(
            "delete-expired-group-metadata",
            self.cleanup_group_metadata,
            period_ms=config.offsets_retention_check_interval_ms,
        )

    def shutdown(self) -> None:
        self._shutting_down = True

    # -- the cache ---------------------------------------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.config.offsets_topic_num_partitions)

    def is_group_local(self, group_id: str) -> bool:
        with self._partition_lock:
            return self.partition_for(group_id) in self._owned_partitions

    def is_group_loading(self, group_id: str) -> bool:
        with self._partition_lock:
            return self.partition_for(group_id) in self._loading_partitions

    def is_loading(self) -> bool:
        """Some partition of this broker's is still loading its groups."""
        with self._partition_lock:
            return bool(self._loading_partitions)

    def current_groups(self) -> list[GroupMetadata]:
        with self._partition_lock:
            return list(self._groups_cache.values())

    def get_group(self, group_id: str) -> GroupMetadata | None:
        with self._partition_lock:
            return self._groups_cache.get(group_id)

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """Add ``group`` unless one by its id is cached; return the one cached."""
        with self._partition_lock:
            return self._groups_cache.setdefault(group.group_id, group)

    def _offsets_partition(self, group_id: str) -> TopicPartition:
        return (GROUP_METADATA_TOPIC_NAME, self.partition_for(group_id))

    # -- storing groups ----------------------------------------------------------------------------------

    # --8<-- [start:prepare_store_group]
    def prepare_store_group(
        self,
        group: GroupMetadata,
        group_assignment: Mapping[str, bytes],
        response_callback: Callable[[Errors], None],
    ) -> DelayedStore:
        """The group's metadata record, its members with ``group_assignment``, ready to append."""
        members = [
            StoredMemberMetadata(
                m.member_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                m.metadata(group.protocol),
                group_assignment[m.member_id],
            )
            for m in group.all_member_metadata()
        ]
        value = group_metadata_value(
            group.protocol_type, group.generation_id, group.protocol, group.leader_id, members
        )
        key = group_metadata_key(group.group_id)
        tp = self._offsets_partition(group.group_id)
        records = MemoryRecords.with_records([(self.time.milliseconds(), key, value)])

        def put_cache_callback(responses: dict[TopicPartition, PartitionResponse]) -> None:
            error = responses[tp].error
            if error is not Errors.NONE:
                log.debug(
                    "Metadata from group %s with generation %d failed when appending to log due to %s",
                    group.group_id, group.generation_id, error.name,
                )  # fmt: skip
                if error in _APPEND_ERRORS:
                    error = _APPEND_ERRORS[error]
                elif error is Errors.REQUEST_TIMED_OUT:
                    error = Errors.REBALANCE_IN_PROGRESS
                elif error in _TOO_LARGE:
                    error = Errors.UNKNOWN
            response_callback(error)

        return DelayedStore({tp: records}, put_cache_callback)

    # --8<-- [end:prepare_store_group]

    def store(self, delayed_store: DelayedStore) -> None:
        """Append, waiting for ``offsets.commit.required.acks``, then call the store's callback."""
        self.replica_manager.append_records(
            self.config.offset_commit_timeout_ms,
            self.config.offset_commit_required_acks,
            True,  # internal topics allowed
            delayed_store.entries,
            delayed_store.callback,
            is_from_client=False,  # the coordinator's own records: no sequence check (Kafka 0.11)
        )

    # -- storing offsets ---------------------------------------------------------------------------------

    def validate_offset_metadata_length(self, metadata: str | None) -> bool:
        return metadata is None or len(metadata) <= self.config.max_metadata_size

    def prepare_store_offsets(
        self,
        group: GroupMetadata,
        offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
        response_callback: Callable[[dict[TopicPartition, Errors]], None],
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
    ) -> DelayedStore:
        """The group's offset records, staged in the group as pending until the append answers.
        Call with the group's lock held. An offset whose metadata is longer than
        ``offsets.metadata.max.bytes`` is not written and answers OFFSET_METADATA_TOO_LARGE.
        With a producer id (TxnOffsetCommit, Kafka 0.11) the records go in a transactional batch
        of that producer and epoch, and stay pending for the producer until its transaction ends."""
        is_txn_offset_commit = producer_id != NO_PRODUCER_ID
        now = self.time.milliseconds()
        filtered = {}
        for tp, offset in offset_metadata.items():
            if not self.validate_offset_metadata_length(offset.metadata):
                continue
            commit = offset.commit_timestamp if offset.commit_timestamp >= 0 else now
            expire = (
                offset.expire_timestamp
                if offset.expire_timestamp >= 0
                else commit + self.config.offsets_retention_ms
            )
            filtered[tp] = OffsetAndMetadata(offset.offset, offset.metadata, commit, expire)
        records = [
            (now, offset_commit_key(group.group_id, tp), offset_commit_value(offset))
            for tp, offset in filtered.items()
        ]
        offsets_tp = self._offsets_partition(group.group_id)
        entries = {}
        if records:
            # Kafka's builder gives a transactional batch base sequence 0; the log does not check
            # the sequence of the coordinator's own appends
            entries[offsets_tp] = MemoryRecords.with_records(
                records,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                base_sequence=0 if is_txn_offset_commit else -1,
                is_transactional=is_txn_offset_commit,
            )

        def put_cache_callback(responses: dict[TopicPartition, PartitionResponse]) -> None:
            error = responses[offsets_tp].error if records else Errors.NONE
            base_offset = responses[offsets_tp].base_offset if records else -1
            with group.lock:
                for tp, offset in filtered.items():
                    if is_txn_offset_commit:
                        if error is Errors.NONE:
                            group.on_txn_offset_commit_append(producer_id, tp, offset, base_offset)
                        else:
                            group.fail_pending_txn_offset_commit(producer_id, tp)
                    elif error is Errors.NONE:
                        if group.not_(GroupState.DEAD):
                            group.complete_pending_offset_write(tp, offset, base_offset)
                    else:
                        group.fail_pending_offset_write(tp, offset)
            if error is not Errors.NONE:
                log.debug(
                    "Offset commit %s from group %s failed with %s", filtered, group.group_id, error.name
                )
                if error in _APPEND_ERRORS:
                    error = _APPEND_ERRORS[error]
                elif error in _TOO_LARGE:
                    error = Errors.INVALID_COMMIT_OFFSET_SIZE
            response_callback(
                {tp: error if tp in filtered else Errors.OFFSET_METADATA_TOO_LARGE for tp in offset_metadata}
            )

        if is_txn_offset_commit:
            group.prepare_txn_offset_commit(producer_id, filtered)
        else:
            group.prepare_offset_commit(filtered)
        return DelayedStore(entries, put_cache_callback)

    def store_offsets(self, delayed_store: DelayedStore) -> None:
        """``store``, or the answer at once when no offset was valid (nothing to append)."""
        if delayed_store.entries:
            self.store(delayed_store)
        else:
            delayed_store.callback({})

    # -- completing transactions -------------------------------------------------------------------------

    def handle_txn_completion(
        self,
        producer_id: int,
        offsets_partitions: set[int],
        is_commit: bool,
        on_complete: Callable[[], None] | None = None,
    ) -> None:
        """A transaction's marker is on ``offsets_partitions``: its offsets become the groups' on
        commit, or are dropped on abort (Kafka 0.11's ``handleTxnCompletion``), on the scheduler, as
        Kafka does, away from the thread that appended the marker (which may hold a partition's
        lock that a group's offset commit also takes). ``on_complete`` runs after, whatever happens:
        the WriteTxnMarkers handler answers only then (see its docstring)."""

        def complete() -> None:
            try:
                with self._partition_lock:
                    groups = [
                        g
                        for g in self._groups_cache.values()
                        if self.partition_for(g.group_id) in offsets_partitions
                    ]
                for group in groups:
                    with group.lock:
                        if group.has_pending_offset_commits_from_producer(producer_id):
                            group.complete_pending_txn_offset_commit(producer_id, is_commit)
            finally:
                if on_complete is not None:
                    on_complete()

        self.scheduler.schedule(f"handle-txn-completion-{producer_id}", complete)

    # -- fetching offsets --------------------------------------------------------------------------------

    def get_offsets(
        self, group_id: str, topic_partitions: Iterable[TopicPartition] | None
    ) -> dict[TopicPartition, OffsetMetadataAndError]:
        """The group's committed offsets for ``topic_partitions``, or all of them for ``None``."""
        if not self.is_group_local(group_id):
            error = OffsetMetadataAndError(-1, NO_METADATA, Errors.NOT_COORDINATOR)
            return {tp: error for tp in topic_partitions or ()}
        group = self.get_group(group_id)
        if group is None:
            return {tp: NO_OFFSET for tp in topic_partitions or ()}
        with group.lock:
            if group.is_(GroupState.DEAD):
                return {tp: NO_OFFSET for tp in topic_partitions or ()}
            if topic_partitions is None:
                return {
                    tp: OffsetMetadataAndError(o.offset, o.metadata) for tp, o in group.all_offsets().items()
                }
            answer = {}
            for tp in topic_partitions:
                offset = group.offset(tp)
                answer[tp] = (
                    NO_OFFSET if offset is None else OffsetMetadataAndError(offset.offset, offset.metadata)
                )
            return answer

    # -- loading and unloading a partition ---------------------------------------------------------------

    def load_groups_for_partition(
        self, offsets_partition: int, on_group_loaded: Callable[[GroupMetadata], None]
    ) -> None:
        """This broker leads ``offsets_partition`` now: read its groups and offsets from the log on
        the scheduler, the partition counted as loading until they are cached."""
        with self._partition_lock:
            if offsets_partition in self._loading_partitions:
                log.info(
                    "Offset load from %s-%d already in progress.",
                    GROUP_METADATA_TOPIC_NAME,
                    offsets_partition,
                )
                return
            # owned at once and loading: requests get COORDINATOR_LOAD_IN_PROGRESS, not NOT_COORDINATOR
            self._owned_partitions.add(offsets_partition)
            self._loading_partitions.add(offsets_partition)
        self.scheduler.schedule(
            f"{GROUP_METADATA_TOPIC_NAME}-{offsets_partition}",
            lambda: self._load_groups_and_offsets(offsets_partition, on_group_loaded),
        )

    def _load_groups_and_offsets(
        self, offsets_partition: int, on_group_loaded: Callable[[GroupMetadata], None]
    ) -> None:
        tp = (GROUP_METADATA_TOPIC_NAME, offsets_partition)
        start_ms = self.time.milliseconds()
        try:
            partition = self.replica_manager.get_partition(tp)
            log_ = partition.log if partition is not None else None
            if log_ is None:
                log.warning("Attempted to load offsets and group metadata from %s-%d, but found no log", *tp)
                return
            # To the log's end, not the high watermark (Kafka 0.11's bound; 0.10 stopped at the HW):
            # a commit the old leader acknowledged is on every in-sync replica, but the new leader
            # learns the HW that covers it only from the old leader's next fetch answer, which a
            # crash prevents. The new leader's log is the one its followers now truncate to, so its
            # tail stays, and a load up to the HW would lose that commit for good.
            loaded_offsets, loaded_groups, removed_groups, pending_offsets = self._read_partition(
                log_, log_.log_end_offset
            )
            self._cache_loaded(
                offsets_partition,
                loaded_offsets,
                loaded_groups,
                removed_groups,
                pending_offsets,
                on_group_loaded,
            )
            log.info(
                "Finished loading offsets from %s-%d in %d milliseconds.",
                *tp,
                self.time.milliseconds() - start_ms,
            )
        except Exception:
            log.exception("Error loading offsets from %s-%d", *tp)
        finally:
            with self._partition_lock:
                self._owned_partitions.add(offsets_partition)
                self._loading_partitions.discard(offsets_partition)

    # --8<-- [start:read_partition]
    def _read_partition(self, log_: Any, end_offset: int) -> tuple[
        dict[GroupTopicPartition, tuple[OffsetAndMetadata, int]], dict[str, StoredGroupMetadata], set[str],
        dict[int, dict[GroupTopicPartition, tuple[OffsetAndMetadata, int]]],
    ]:  # fmt: skip
        """Every record from the log's start to ``end_offset``, the last value per key winning and a
        tombstone deleting what came before it. Offsets of a transaction (a transactional batch)
        wait per producer for its marker (a control batch): a commit applies them where no later
        plain commit wrote the partition, an abort drops them (Kafka 0.11's loadGroupsAndOffsets).
        Those whose marker is not in the log yet are returned still pending. Each offset comes
        with the log offset of its record's batch."""
        loaded_offsets: dict[GroupTopicPartition, OffsetAndMetadata] = {}
        loaded_at: dict[GroupTopicPartition, int] = {}  # the batch each loaded offset came from
        pending_offsets: dict[int, dict[GroupTopicPartition, tuple[OffsetAndMetadata, int]]] = {}
        loaded_groups: dict[str, StoredGroupMetadata] = {}
        removed_groups: set[str] = set()
        offset = log_.log_start_offset
        while offset < end_offset and not self._shutting_down:
            batches = read_batches(log_, offset, 5 * 1024 * 1024, max_offset=end_offset)
            if not batches:
                break
            for batch in batches:
                if batch.last_offset < offset or batch.base_offset >= end_offset:
                    continue
                if batch.is_control_batch:
                    committed = pending_offsets.pop(batch.producer_id, {})
                    if ControlRecordType.parse(next(iter(batch)).key) is ControlRecordType.COMMIT:
                        for key, (value, at) in committed.items():
                            if loaded_at.get(key, -1) < at:
                                loaded_offsets[key], loaded_at[key] = value, at
                    continue
                for record in batch:
                    if record.offset < offset or record.offset >= end_offset:
                        continue
                    key = read_message_key(record.key)
                    if isinstance(key, OffsetKey):
                        value = read_offset_message_value(record.value)
                        if batch.is_transactional:
                            producer_offsets = pending_offsets.setdefault(batch.producer_id, {})
                            if value is None:
                                producer_offsets.pop(key.key, None)
                            else:
                                producer_offsets[key.key] = (value, batch.base_offset)
                        elif value is None:
                            loaded_offsets.pop(key.key, None)
                        else:
                            loaded_offsets[key.key], loaded_at[key.key] = value, batch.base_offset
                    else:
                        group = read_group_message_value(key.key, record.value)
                        if group is None:
                            loaded_groups.pop(key.key, None)
                            removed_groups.add(key.key)
                        else:
                            loaded_groups[key.key] = group
                            removed_groups.discard(key.key)
            offset = batches[-1].next_offset
        loaded = {key: (value, loaded_at[key]) for key, value in loaded_offsets.items()}
        return loaded, loaded_groups, removed_groups, pending_offsets

    # --8<-- [end:read_partition]

    def _cache_loaded(
        self,
        offsets_partition: int,
        loaded_offsets: dict[GroupTopicPartition, tuple[OffsetAndMetadata, int]],
        loaded_groups: dict[str, StoredGroupMetadata],
        removed_groups: set[str],
        pending_offsets: dict[int, dict[GroupTopicPartition, tuple[OffsetAndMetadata, int]]],
        on_group_loaded: Callable[[GroupMetadata], None],
    ) -> None:
        # (offset, log position of its record) per partition, per group
        offsets_by_group: dict[str, dict[TopicPartition, tuple[OffsetAndMetadata, int]]] = {}
        for group_tp, offset in loaded_offsets.items():
            offsets_by_group.setdefault(group_tp.group, {})[group_tp.topic_partition] = offset
        # open transactions' offsets, per group and producer: their marker may still come
        pending_by_group: dict[str, dict[int, dict[TopicPartition, tuple[OffsetAndMetadata, int]]]] = {}
        for producer_id, offsets in pending_offsets.items():
            for group_tp, offset in offsets.items():
                by_producer = pending_by_group.setdefault(group_tp.group, {})
                by_producer.setdefault(producer_id, {})[group_tp.topic_partition] = offset
        for group_id, stored in loaded_groups.items():
            group = _group_from_stored(stored)
            self._load_group(
                group, offsets_by_group.get(group_id, {}), pending_by_group.get(group_id, {}), on_group_loaded
            )
        # offsets of groups with no metadata record: groups that only store offsets here
        for group_id in offsets_by_group.keys() | pending_by_group.keys():
            if group_id not in loaded_groups:
                group = GroupMetadata(group_id)
                self._load_group(
                    group,
                    offsets_by_group.get(group_id, {}),
                    pending_by_group.get(group_id, {}),
                    on_group_loaded,
                )
        for group_id in removed_groups:
            if group_id not in offsets_by_group and self.get_group(group_id) is not None:
                raise IllegalStateException(
                    f"Unexpected unload of active group {group_id} while loading partition "
                    f"{GROUP_METADATA_TOPIC_NAME}-{offsets_partition}"
                )

    def _load_group(
        self,
        group: GroupMetadata,
        offsets: dict[TopicPartition, tuple[OffsetAndMetadata, int]],
        pending_txn_offsets: dict[int, dict[TopicPartition, tuple[OffsetAndMetadata, int]]],
        on_group_loaded: Callable[[GroupMetadata], None],
    ) -> None:
        # the offsets go in before the group is visible, so no request sees it without them
        for tp, (offset, position) in offsets.items():
            group.complete_pending_offset_write(tp, offset, position)
        for producer_id, txn_offsets in pending_txn_offsets.items():
            group.prepare_txn_offset_commit(producer_id, {tp: o for tp, (o, _) in txn_offsets.items()})
            for tp, (offset, position) in txn_offsets.items():
                group.on_txn_offset_commit_append(producer_id, tp, offset, position)
        current = self.add_group(group)
        if current is not group:
            log.debug(
                "Attempt to load group %s from log with generation %d failed because there is already a "
                "cached group with generation %d", group.group_id, group.generation_id, current.generation_id,
            )  # fmt: skip
            return
        log.info("Loaded group metadata for group %s with generation %d", group.group_id, group.generation_id)
        on_group_loaded(group)

    def remove_groups_for_partition(
        self, offsets_partition: int, on_group_unloaded: Callable[[GroupMetadata], None]
    ) -> None:
        """This broker no longer leads ``offsets_partition``: drop its groups, on the scheduler."""

        def remove_groups_and_offsets() -> None:
            with self._partition_lock:
                self._owned_partitions.discard(offsets_partition)
                self._loading_partitions.discard(offsets_partition)
                removed = [
                    g
                    for g in self._groups_cache.values()
                    if self.partition_for(g.group_id) == offsets_partition
                ]
                for group in removed:
                    del self._groups_cache[group.group_id]
            # unloaded outside the partition lock: a group's lock is taken before it, never after
            for group in removed:
                on_group_unloaded(group)
            log.info(
                "Removed %d groups from %s-%d", len(removed), GROUP_METADATA_TOPIC_NAME, offsets_partition
            )

        self.scheduler.schedule(f"{GROUP_METADATA_TOPIC_NAME}-{offsets_partition}", remove_groups_and_offsets)

    # -- expiring offsets, and those of deleted topics --------------------------------------------------

    # --8<-- [start:cleanup_group_metadata]
    def cleanup_group_metadata(self, deleted_topic_partitions: Sequence[TopicPartition] | None = None) -> int:
        """Remove the offsets whose expiry passed, or with ``deleted_topic_partitions`` those of a
        deleted topic's partitions; write their tombstones, and drop (with a group tombstone) an
        Empty group left without offsets. Returns how many offsets went.

        The one method serves both, as Kafka 0.11's ``cleanupGroupMetadata(deletedTopicPartitions)``
        does (KAFKA-2000, Kafka 0.10.2; 0.10.1 has only the expiry and keeps a deleted topic's
        offsets until they expire)."""
        start_ms = self.time.milliseconds()
        removed_count = 0
        with self._partition_lock:
            groups = list(self._groups_cache.values())
        for group in groups:
            with group.lock:
                if group.is_(GroupState.DEAD):
                    continue
                if deleted_topic_partitions is None:
                    removed = group.remove_expired_offsets(start_ms)
                else:
                    removed = group.remove_offsets(deleted_topic_partitions)
                if group.is_(GroupState.EMPTY) and not group.has_offsets():
                    log.info(
                        "Group %s transitioned to Dead in generation %d", group.group_id, group.generation_id
                    )
                    group.transition_to(GroupState.DEAD)
                tombstones = [(start_ms, offset_commit_key(group.group_id, tp), None) for tp in removed]
                if group.is_(GroupState.DEAD):
                    with self._partition_lock:
                        if self._groups_cache.get(group.group_id) is group:
                            del self._groups_cache[group.group_id]
                    # a group of generation 0 only stored offsets: it never wrote a metadata record
                    if group.generation_id > 0:
                        tombstones.append((start_ms, group_metadata_key(group.group_id), None))
            removed_count += len(removed)
            if tombstones:
                tp = self._offsets_partition(group.group_id)
                partition = self.replica_manager.get_partition(tp)
                try:
                    if partition is None:
                        raise KafkaException(f"this broker has no partition {tp[0]}-{tp[1]}")
                    partition.append_records_to_leader(MemoryRecords.with_records(tombstones))
                except KafkaException as e:
                    log.error(
                        "Failed to mark %d expired/deleted offsets for deletion in %s-%d: %s",
                        len(removed),
                        *tp,
                        e,
                    )
        log.info(
            "Removed %d expired/deleted offsets in %d milliseconds.",
            removed_count,
            self.time.milliseconds() - start_ms,
        )
        return removed_count

    # --8<-- [end:cleanup_group_metadata]


def read_batches(log_: Any, offset: int, max_length: int, max_offset: int | None = None) -> list:
    """The whole batches of ``log_`` from the one holding ``offset``, about ``max_length`` bytes
    (at least one batch), below ``max_offset``: how a coordinator reads its internal topic's log
    when it loads a partition (the ``__consumer_offsets`` and ``__transaction_state`` loaders)."""
    records = log_.read(offset, max_length, max_offset=max_offset, min_one_message=True).records
    data = records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())
    return list(MemoryRecords(data).batches(allow_partial_tail=True))


def _group_from_stored(stored: StoredGroupMetadata) -> GroupMetadata:
    """A ``GroupMetadata`` from its record: Empty without members, Stable with them (Kafka's
    ``readGroupMessageValue``)."""
    state = GroupState.STABLE if stored.members else GroupState.EMPTY
    group = GroupMetadata(stored.group_id, initial_state=state)
    group.protocol_type = stored.protocol_type or None
    group.generation_id = stored.generation
    group.protocol = stored.protocol
    for m in stored.members:
        member = MemberMetadata(
            m.member_id,
            stored.group_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout,
            m.session_timeout,
            stored.protocol_type,
            [(stored.protocol, m.subscription)],
        )
        member.assignment = m.assignment
        group.add(member)
    group.leader_id = stored.leader
    return group
