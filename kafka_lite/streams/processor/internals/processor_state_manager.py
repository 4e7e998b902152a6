"""A task's state manager: registers its stores, restores them from their changelogs, checkpoints them.

Mirrors: org.apache.kafka.streams.processor.internals.ProcessorStateManager
         (streams/src/main/java/.../processor/internals/ProcessorStateManager.java, Kafka 0.10.1,
         with 0.11's exactly_once)
Book:    chapter 9, 9.1.4 (state stores, their changelogs, restoring and checkpointing)
Differs: a changelog partition that does not exist is not waited for (0.10.1 asks ``partitionsFor``
         for up to 5 s); ``flush`` sets no current node. The checkpoint is written by
         ``checkpoint``, which ``close`` calls, as 0.11 factors it; 0.10.1 writes it inside ``close``.
         A store whose checkpoint is past its changelog's end is deleted and restored from scratch,
         as Kafka 1.1 reinitializes it (``kafka_1_1_reinitialize_stores_past_changelog_end``);
         0.10.1's restore fails there and stops the application.

What a task's state looks like on disk and in Kafka::

    <state.dir>/<application.id>/0_3/          locked by this state manager while the task lives
        .checkpoint                           app-counts-changelog 3 1500
        rocksdb/counts/                       the persistent store's files
    topic app-counts-changelog, partition 3   every change the task made to "counts", compacted

A store's changelog partition has the number of the task's partition, so the instance that takes
task 0_3 over restores exactly its state from partition 3 of each changelog.

``register`` restores a logged store at once, before the task processes anything: read the
changelog partition from the checkpointed offset (or from its beginning) up to the end offset it
had when restoring began, handing each record to the store's restore callback. A tombstone (null
value) hands over ``None`` and the store deletes the key. The changelog is written only by this
task, which is not running yet, so its end cannot move meanwhile.

A table's store (``KStreamBuilder.table``) has no changelog of its own: the table's source topic is
one, since every record of it is a row of the table. It is restored from that topic, but only up
to the task's committed offset there (its *offset limit*): the records after it are the task's
input, which it is about to process and put in the store itself.

The checkpoint is read once, when the state manager is built, and then deleted: from then on the
stores take writes the file does not account for, and a crash must not be taken for a clean stop.
``close`` writes it again after the stores have closed (flushed to disk), with, for each persistent
logged store, the offset after the last change the producer had acknowledged. An in-memory store is
never checkpointed: its content dies with the process, so it always restores from the beginning.

Under ``exactly_once`` (Kafka 0.11) the changelog is written in the task's transactions and read
back with ``read_committed``, so a restore replays committed changes only. A task directory without a
checkpoint means the last owner stopped uncleanly, perhaps mid-transaction: its persistent stores
may hold writes whose transaction was aborted. Kafka 0.11 replays the changelog over whatever the
store holds; kafka_lite empties the task directory first, because a key written only by an aborted
transaction would survive the replay. And ``close`` writes no checkpoint when the task's last
transaction did not commit.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from typing import Any

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.streams.errors import LockException, ProcessorStateException
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.state.internals.offset_checkpoint import CHECKPOINT_FILE_NAME, OffsetCheckpoint
from kafka_lite.streams.state.internals.rocksdb_store import DB_FILE_DIR
from kafka_lite.streams.state.state_directory import LOCK_FILE_NAME, StateDirectory

log = logging.getLogger(__name__)

STATE_CHANGELOG_TOPIC_SUFFIX = "-changelog"
RestoreCallback = Callable[[bytes, bytes | None], None]


def store_changelog_topic(application_id: str, store_name: str) -> str:
    """``<application.id>-<store>-changelog`` (Kafka's ``ProcessorStateManager.storeChangelogTopic``)."""
    return application_id + "-" + store_name + STATE_CHANGELOG_TOPIC_SUFFIX


class ProcessorStateManager:
    def __init__(
        self,
        application_id: str,
        task_id: TaskId,
        sources: list[TopicPartition],
        restore_consumer: Any,
        is_standby: bool,
        state_directory: StateDirectory,
        source_store_to_source_topic: dict[str, str] | None = None,
        eos_enabled: bool = False,
    ) -> None:
        """``restore_consumer``: assign, seek, seek_to_beginning, seek_to_end, position and poll, as
        kafka_lite's ``KafkaConsumer`` (a stream thread's restore consumer) or ``MockConsumer``;
        ``source_store_to_source_topic``: the tables' stores and the topics they restore from."""
        self.application_id = application_id
        self.task_id = task_id
        self.default_partition = task_id.partition
        self.partition_for_topic = {tp.topic: tp for tp in sources}
        self.restore_consumer = restore_consumer
        self.is_standby = is_standby
        self.state_directory = state_directory
        self.log_prefix = f"task [{task_id}]"
        self.stores: dict[str, StateStore] = {}  # in registration order, as Kafka's LinkedHashMap
        self.logging_enabled: set[str] = set()
        self.restored_offsets: dict[TopicPartition, int] = {}
        self.restored: dict[str, int] = {}  # store name -> changelog records handed to its callback
        # A standby task keeps its callbacks to apply the changelog records its thread fetches.
        self.restore_callbacks: dict[str, RestoreCallback] = {}
        self.source_store_to_source_topic = dict(source_store_to_source_topic or {})
        self.offset_limits: dict[TopicPartition, int] = {}  # set by the task before its stores init
        self.base_dir = state_directory.directory_for_task(task_id)

        # The task may have just moved from another thread that still holds the directory: retry.
        if not state_directory.lock(task_id, 5):
            raise LockException(f"{self.log_prefix} Failed to lock the state directory: {self.base_dir}")

        checkpoint = OffsetCheckpoint(self.base_dir / CHECKPOINT_FILE_NAME)
        clean_stop = checkpoint.file.exists()
        self.checkpointed_offsets = checkpoint.read()
        checkpoint.delete()
        self.eos_enabled = eos_enabled
        if eos_enabled and not clean_stop and not is_standby:
            self._wipe_state()
        elif not is_standby:
            self.kafka_1_1_reinitialize_stores_past_changelog_end()

    def _wipe_state(self) -> None:
        """Delete the task directory's stores (all but the lock): they restore from committed data."""
        wiped = []
        for path in self.base_dir.iterdir():
            if path.name == LOCK_FILE_NAME:
                continue
            shutil.rmtree(path) if path.is_dir() else path.unlink()
            wiped.append(path.name)
        if wiped:
            log.info("%s No checkpoint under exactly_once: wiped %s", self.log_prefix, sorted(wiped))

    def kafka_1_1_reinitialize_stores_past_changelog_end(self) -> None:
        """Wipe each store whose checkpoint is past its changelog's end, so that it restores from the
        beginning. Such a checkpoint comes from a state directory kept across clusters (or across a
        changelog deleted and created again): the store holds state this changelog never had.

        0.10.1 seeks to the checkpoint anyway and its restore fails with "Log end offset should not
        change while restoring", and the application stops. Kafka 1.1's restore consumer has no offset
        reset: a position the changelog cannot serve raises ``InvalidOffsetException``, and
        ``StoreChangelogReader`` then reinitializes the task's stores for those partitions (closes
        them, deletes their directories, drops their checkpoints, restores from the beginning). Here
        the stores are not open yet, so reinitializing is deleting their directories and checkpoints."""
        consumer = self.restore_consumer
        for store_partition, checkpoint in list(self.checkpointed_offsets.items()):
            consumer.assign([store_partition])
            try:
                consumer.seek_to_end(store_partition)
                end_offset = consumer.position(store_partition)
            finally:
                consumer.assign([])
            if checkpoint <= end_offset:
                continue
            store_name = self._store_for(store_partition.topic)
            log.warning(
                "%s Store %s's checkpoint is offset %d, past its changelog's end %d: state from a "
                "changelog this cluster does not have. Deleting the store to restore it from scratch.",
                self.log_prefix, store_name, checkpoint, end_offset,
            )  # fmt: skip
            # A key-value store lives in rocksdb/<name>, a window or session store's segments in <name>.
            for directory in (self.base_dir / DB_FILE_DIR / store_name, self.base_dir / store_name):
                shutil.rmtree(directory, ignore_errors=True)
            del self.checkpointed_offsets[store_partition]

    def _store_for(self, topic: str) -> str:
        """The store a changelog (or a table's source topic) restores."""
        for store_name, source_topic in self.source_store_to_source_topic.items():
            if source_topic == topic:
                return store_name
        return topic.removeprefix(self.application_id + "-").removesuffix(STATE_CHANGELOG_TOPIC_SUFFIX)

    # -- registering and restoring ----------------------------------------------------------------------

    def register(self, store: StateStore, logging_enabled: bool, restore_callback: RestoreCallback) -> None:
        """Keep ``store``; if it is logged, restore it from its changelog partition first (an
        active task) or remember how to (a standby task, for a persistent store)."""
        log.debug("%s Registering state store %s to its state manager", self.log_prefix, store.name)
        if store.name == CHECKPOINT_FILE_NAME:
            raise IllegalArgumentException(f"{self.log_prefix} Illegal store name: {CHECKPOINT_FILE_NAME}")
        if store.name in self.stores:
            raise IllegalArgumentException(
                f"{self.log_prefix} Store {store.name} has already been registered."
            )
        if logging_enabled:
            self.logging_enabled.add(store.name)
            topic = store_changelog_topic(self.application_id, store.name)
        elif store.name in self.source_store_to_source_topic:
            topic = self.source_store_to_source_topic[store.name]
        else:
            self.stores[store.name] = store
            return

        if self.is_standby:
            # Only a persistent store is worth keeping warm: an in-memory one restores fully anyway.
            if store.persistent():
                self.restore_callbacks[topic] = restore_callback
                # Until it reads anything, the standby's position is where its checkpoint left it.
                store_partition = TopicPartition(topic, self._get_partition(topic))
                if store_partition in self.checkpointed_offsets:
                    self.restored_offsets[store_partition] = self.checkpointed_offsets[store_partition]
        else:
            log.debug(
                "%s Restoring state store %s from changelog topic %s", self.log_prefix, store.name, topic
            )
            self.restored[store.name] = self._restore_active_state(topic, restore_callback)
        self.stores[store.name] = store

    # --8<-- [start:restore_active_state]
    def _restore_active_state(self, topic: str, restore_callback: RestoreCallback) -> int:
        """Replay the store's changelog partition into it; return how many records it replayed."""
        store_partition = TopicPartition(topic, self._get_partition(topic))
        consumer = self.restore_consumer
        consumer.assign([store_partition])
        try:
            # The end offset first (0.11 asks end_offsets; 0.10.1 seeks to the end and reads the position).
            consumer.seek_to_end(store_partition)
            end_offset = consumer.position(store_partition)

            # From the checkpoint if the store kept its state on disk, else from the beginning.
            if store_partition in self.checkpointed_offsets:
                checkpoint = self.checkpointed_offsets[store_partition]
                consumer.seek(store_partition, checkpoint)
            else:
                consumer.seek_to_beginning(store_partition)

            # A table's source topic is read only up to where the task's own processing starts.
            limit = min(end_offset, self.offset_limits.get(store_partition, end_offset))
            restored = 0
            while consumer.position(store_partition) < limit:
                for record in consumer.poll(100).get(store_partition, ()):
                    if record.offset >= limit:
                        break
                    restore_callback(record.key, record.value)
                    restored += 1
            # Only this task writes a changelog; a table's source topic others may append to meanwhile.
            is_changelog = topic not in self.source_store_to_source_topic.values()
            if is_changelog and consumer.position(store_partition) > end_offset:
                raise IllegalStateException(
                    f"{self.log_prefix} Log end offset should not change while restoring"
                )

            self.restored_offsets[store_partition] = min(consumer.position(store_partition), limit)
            return restored
        finally:
            consumer.assign([])  # the restore consumer is shared by the thread's tasks: let go

    # --8<-- [end:restore_active_state]

    def put_offset_limit(self, partition: TopicPartition, limit: int) -> None:
        """How far a table's source partition may be restored: the task's committed offset there."""
        self.offset_limits[partition] = limit

    # -- standby tasks ----------------------------------------------------------------------------------

    def checkpointed(self) -> dict[TopicPartition, int]:
        """Where a standby task starts reading each changelog: the checkpointed offset, or -1 (none)."""
        partitions = (TopicPartition(topic, self._get_partition(topic)) for topic in self.restore_callbacks)
        return {tp: self.checkpointed_offsets.get(tp, -1) for tp in partitions}

    def update_standby_states(self, store_partition: TopicPartition, records: list[ConsumerRecord]) -> None:
        """Apply changelog records a standby task's thread fetched to the store they belong to."""
        restore_callback = self.restore_callbacks[store_partition.topic]
        last_offset = -1
        for record in records:
            try:
                restore_callback(record.key, record.value)
            except Exception as e:
                raise ProcessorStateException(
                    f"{self.log_prefix} exception caught while trying to restore state from {store_partition}"
                ) from e
            last_offset = record.offset
        self.restored_offsets[store_partition] = last_offset + 1

    # -- the task's calls -------------------------------------------------------------------------------

    def get_store(self, name: str) -> StateStore | None:
        return self.stores.get(name)

    def flush(self) -> None:
        if self.stores:
            log.debug("%s Flushing all stores registered in the state manager", self.log_prefix)
        for store in self.stores.values():
            try:
                store.flush()
            except Exception as e:
                raise ProcessorStateException(
                    f"{self.log_prefix} Failed to flush state store {store.name}"
                ) from e

    def close(self, ack_offsets: dict[TopicPartition, int], write_checkpoint: bool = True) -> None:
        """Close every store, then checkpoint (unless told the stores hold uncommitted writes); the
        directory lock is released whatever happens."""
        try:
            if self.stores:
                log.debug("%s Closing its state manager and all the registered state stores", self.log_prefix)
                for name, store in self.stores.items():
                    try:
                        store.close()
                    except Exception as e:
                        raise ProcessorStateException(
                            f"{self.log_prefix} Failed to close state store {name}"
                        ) from e
                # Written only once every store closed cleanly: the file says "the disk holds this".
                if write_checkpoint:
                    self.checkpoint(ack_offsets)
        finally:
            self.state_directory.unlock(self.task_id)

    # --8<-- [start:checkpoint]
    def checkpoint(self, ack_offsets: dict[TopicPartition, int]) -> None:
        """Write ``.checkpoint``: for each persistent logged store, the changelog offset after the last
        change the producer acknowledged (``ack_offsets`` holds the last offset itself, hence + 1), or
        where restoring ended if the task wrote nothing to it."""
        offsets = {}
        for name, store in self.stores.items():
            if not (store.persistent() and name in self.logging_enabled):
                continue
            topic = store_changelog_topic(self.application_id, name)
            tp = TopicPartition(topic, self._get_partition(topic))
            if tp in ack_offsets:
                offsets[tp] = ack_offsets[tp] + 1
            elif tp in self.restored_offsets:
                offsets[tp] = self.restored_offsets[tp]
        log.debug("%s Writing checkpoint: %s", self.log_prefix, offsets)
        OffsetCheckpoint(self.base_dir / CHECKPOINT_FILE_NAME).write(offsets)

    # --8<-- [end:checkpoint]

    def _get_partition(self, topic: str) -> int:
        # A changelog is not a source topic, so this is the task's partition.
        tp = self.partition_for_topic.get(topic)
        return self.default_partition if tp is None else tp.partition
