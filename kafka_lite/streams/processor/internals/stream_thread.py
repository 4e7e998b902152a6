"""A stream thread: one consumer in the application's group, running the tasks the group gave it.

Mirrors: org.apache.kafka.streams.processor.internals.StreamThread
         (streams/src/main/java/.../processor/internals/StreamThread.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (the thread model)
Differs: the run loop is Kafka 0.11.0's (``process_and_punctuate`` says why): it processes
         everything a poll brought before polling again, where 0.10.1 polls (with a timeout of 0)
         after one record from each task. The thread's states and their listener are 0.11's (0.10.1
         has none); no metrics. The clients are built here from the ``StreamsConfig`` (no
         ``KafkaClientSupplier``). ``commit.interval.ms`` counts from the end of the last commit,
         as in Kafka 2.x (``maybe_commit`` says why).

A thread owns three clients and a set of tasks::

    consumer          subscribed to every source topic of the topology, group = application.id,
                      with the StreamPartitionAssignor: what it is assigned decides the tasks
    restore consumer  no group: assigned the changelog partitions of a task being restored, then
                      of the standby tasks, which it keeps reading
    producer          shared by the thread's tasks for their output and their changelogs; under
                      exactly_once (0.11) there is none: each task has a transactional producer

The run loop (``run_loop``)::

    while running:
        records = consumer.poll(poll.ms)
        each partition's records -> the task that reads it (task.add_records)
        until nothing is buffered:
            for each task: process one record
            every N records (once processing a poll's records outlasts commit.interval.ms):
                           commit if commit.interval.ms has passed
        for each task: punctuate if stream time says so; commit it if a processor asked
        commit.interval.ms after the last commit ended: commit every task (flush stores, flush
                           producer, commit offsets)
        feed the standby tasks what the restore consumer fetched
        every state.cleanup.delay.ms: delete the directories of tasks that moved away

A rebalance happens inside ``consumer.poll``. The listener's ``on_partitions_revoked`` commits every
task and closes it (its stores checkpointed), and ``on_partitions_assigned`` builds the new tasks
(restoring their stores from the changelogs before the first record) and the standby tasks. 0.10.1
closes every task on every rebalance, even one that stays: what is checkpointed makes reopening it
cheap (``on_partitions_revoked`` says what later Kafkas do).
"""

from __future__ import annotations

import enum
import itertools
import logging
import threading
import uuid
from collections.abc import Callable, Collection
from typing import Any

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.commit_failed_exception import CommitFailedException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.internal_topic_manager import InternalTopicManager
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl
from kafka_lite.streams.processor.internals.standby_task import StandbyTask
from kafka_lite.streams.processor.internals.stream_partition_assignor import StreamPartitionAssignor
from kafka_lite.streams.processor.internals.stream_task import StreamTask
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.processor.thread_metadata import TaskMetadata, ThreadMetadata
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.state.internals.offset_checkpoint import CHECKPOINT_FILE_NAME
from kafka_lite.streams.state.internals.thread_cache import ThreadCache
from kafka_lite.streams.state.state_directory import StateDirectory
from kafka_lite.streams.streams_config import (
    APPLICATION_SERVER_CONFIG,
    CACHE_MAX_BYTES_BUFFERING_CONFIG,
    COMMIT_INTERVAL_MS_CONFIG,
    NUM_STANDBY_REPLICAS_CONFIG,
    POLL_MS_CONFIG,
    STATE_CLEANUP_DELAY_MS_CONFIG,
    STATE_DIR_CONFIG,
    StreamsConfig,
)

log = logging.getLogger(__name__)

_STREAM_THREAD_ID_SEQUENCE = itertools.count(1)
_NEVER = 2**63 - 1


UNLIMITED_RECORDS = -1  # no record count: commit by the clock alone


def adjust_records_processed_before_commit(
    previous: int, total_processed: int, process_latency_ms: int, commit_time_ms: int
) -> int:
    """Kafka 0.11's ``adjustRecordsProcessedBeforeCommit``: once processing what one poll brought
    took longer than ``commit.interval.ms``, the thread checks the commit clock every so many
    records, as many as fit in the interval at the rate just measured (at least one); before that,
    it checks only between polls. From then on each batch measured sets the count again (a batch
    too quick to measure in milliseconds clears it)."""
    if process_latency_ms > 0 and (process_latency_ms > commit_time_ms or previous != UNLIMITED_RECORDS):
        return max(1, commit_time_ms * total_processed // process_latency_ms)
    return UNLIMITED_RECORDS


class State(enum.Enum):
    """A stream thread's states (Kafka 0.11's ``StreamThread.State``), with the moves allowed."""

    CREATED = "CREATED"
    RUNNING = "RUNNING"
    PARTITIONS_REVOKED = "PARTITIONS_REVOKED"
    ASSIGNING_PARTITIONS = "ASSIGNING_PARTITIONS"
    PENDING_SHUTDOWN = "PENDING_SHUTDOWN"
    DEAD = "DEAD"

    def is_valid_transition(self, new_state: State) -> bool:
        return new_state in _VALID_TRANSITIONS[self]


_VALID_TRANSITIONS = {
    State.CREATED: {State.RUNNING, State.PENDING_SHUTDOWN},
    State.RUNNING: {State.RUNNING, State.PARTITIONS_REVOKED, State.PENDING_SHUTDOWN},
    State.PARTITIONS_REVOKED: {State.ASSIGNING_PARTITIONS, State.PENDING_SHUTDOWN},
    State.ASSIGNING_PARTITIONS: {State.RUNNING, State.PENDING_SHUTDOWN},
    State.PENDING_SHUTDOWN: {State.DEAD},
    State.DEAD: set(),
}

StateListener = Callable[["StreamThread", State, State], None]


# --8<-- [start:rebalance_listener]
class _RebalanceListener(ConsumerRebalanceListener):
    """The thread's hook into its consumer's rebalances (Kafka's anonymous ``rebalanceListener``)."""

    def __init__(self, thread: StreamThread) -> None:
        self.thread = thread

    def on_partitions_revoked(self, partitions: Collection[TopicPartition]) -> None:
        """Commit and close every task, as 0.10.1 does, even one the next assignment gives back;
        Kafka 0.10.2 suspends them instead, and resumes those it is given again."""
        thread = self.thread
        log.info("%s partitions %s revoked at the beginning of consumer rebalance.",
                 thread.log_prefix, sorted(partitions))  # fmt: skip
        try:
            thread.set_state(State.PARTITIONS_REVOKED)
            thread.last_clean_ms = _NEVER  # no cleaning while no task is assigned
            thread.shutdown_tasks_and_state(rethrow=True)
        except BaseException as e:
            thread.rebalance_exception = e
            raise
        finally:
            thread.remove_stream_tasks()
            thread.remove_standby_tasks()
            # What the assignor's subscription tells the leader: the tasks run until now, and the
            # tasks whose state is on this machine.
            thread.partition_assignor.prev_tasks = set(thread.prev_tasks)
            thread.partition_assignor.cached_tasks = thread.cached_tasks()

    def on_partitions_assigned(self, partitions: Collection[TopicPartition]) -> None:
        thread = self.thread
        log.info("%s New partitions %s assigned at the end of consumer rebalance.",
                 thread.log_prefix, sorted(partitions))  # fmt: skip
        try:
            thread.set_state(State.ASSIGNING_PARTITIONS)
            thread.add_stream_tasks(partitions)
            thread.add_standby_tasks()
            thread.last_clean_ms = thread.time.milliseconds()  # start the cleaning cycle
            if thread.on_assignment_change is not None:
                thread.on_assignment_change(thread.partition_assignor)
            thread.set_state(State.RUNNING)
        except BaseException as e:
            thread.rebalance_exception = e
            raise


# --8<-- [end:rebalance_listener]


def _thread_name(client_id: str) -> str:
    """``<client.id>-StreamThread-<n>``, as Kafka 1.0 names a stream thread (0.10.1: ``StreamThread-<n>``),
    so that a thread's name says which instance it belongs to."""
    return f"{client_id}-StreamThread-{next(_STREAM_THREAD_ID_SEQUENCE)}"


class StreamThread(threading.Thread):
    def __init__(
        self,
        builder: TopologyBuilder,
        config: StreamsConfig,
        application_id: str,
        client_id: str,
        process_id: uuid.UUID,
        time: Time,
        internal_topic_manager: InternalTopicManager | None = None,
    ) -> None:
        super().__init__(name=_thread_name(client_id), daemon=True)
        self.application_id = application_id
        self.builder = builder
        self.config = config
        self.task_config = config.task_config()
        self.time = time
        self.source_topics = sorted(builder.source_topics())
        self.log_prefix = f"stream-thread [{self.name}]"
        thread_client_id = self.name

        self.state_directory = StateDirectory(application_id, config[STATE_DIR_CONFIG], time)
        self.partition_assignor = StreamPartitionAssignor(
            builder,
            process_id,
            thread_name=self.name,
            num_standby_replicas=config[NUM_STANDBY_REPLICAS_CONFIG],
            user_end_point=config[APPLICATION_SERVER_CONFIG] or None,
            cached_tasks=self.cached_tasks(),
            internal_topic_manager=internal_topic_manager,
        )

        self.eos_enabled = config.eos_enabled
        self.thread_client_id = thread_client_id
        # The record cache (KIP-63), shared by this thread's tasks: cache.max.bytes.buffering split
        # equally between the instance's threads.
        if config[CACHE_MAX_BYTES_BUFFERING_CONFIG] < 0:
            log.warning("%s Negative cache size passed in thread. Reverting to cache size of 0 bytes.",
                        self.log_prefix)  # fmt: skip
        self.cache = ThreadCache(thread_client_id, config.cache_size_per_thread())
        # Under exactly_once each task has a producer of its own (its transactional id is the task's):
        # the thread has none.
        self.producer: KafkaProducer | None = None
        if not self.eos_enabled:
            log.info("%s Creating shared producer client", self.log_prefix)
            self.producer = KafkaProducer(time=time, **config.get_producer_configs(thread_client_id))
        log.info("%s Creating consumer client", self.log_prefix)
        self.consumer = KafkaConsumer(
            time=time,
            partition_assignment_strategy=[self.partition_assignor],
            **config.get_consumer_configs(thread_client_id),
        )
        log.info("%s Creating restore consumer client", self.log_prefix)
        self.restore_consumer = KafkaConsumer(
            time=time, **config.get_restore_consumer_configs(thread_client_id)
        )

        self.active_tasks: dict[TaskId, StreamTask] = {}
        self.standby_tasks: dict[TaskId, StandbyTask] = {}
        self.active_tasks_by_partition: dict[TopicPartition, StreamTask] = {}
        self.standby_tasks_by_partition: dict[TopicPartition, StandbyTask] = {}
        self.prev_tasks: set[TaskId] = set()
        self.rebalance_listener = _RebalanceListener(self)

        self.poll_time_ms = config[POLL_MS_CONFIG]
        self.commit_time_ms = config[COMMIT_INTERVAL_MS_CONFIG]
        self.clean_time_ms = config[STATE_CLEANUP_DELAY_MS_CONFIG]
        self.last_commit_ms = time.milliseconds()
        self.last_clean_ms = _NEVER  # the cleaning cycle starts once partitions are assigned
        self.rebalance_exception: BaseException | None = None

        self.running = threading.Event()
        self.running.set()
        self.state = State.CREATED
        self.state_listener: StateListener | None = None
        # KafkaStreams' hook: after each assignment, where every instance's partitions are.
        self.on_assignment_change: Callable[[StreamPartitionAssignor], None] | None = None
        self.uncaught_exception: BaseException | None = None
        self.uncaught_exception_handler: Callable[[StreamThread, BaseException], None] | None = None

    # -- life cycle -------------------------------------------------------------------------------------

    def set_state(self, new_state: State) -> None:
        old_state = self.state
        if not old_state.is_valid_transition(new_state):
            log.warning(
                "%s Unexpected state transition from %s to %s.", self.log_prefix, old_state, new_state
            )
        else:
            log.info("%s State transition from %s to %s.", self.log_prefix, old_state, new_state)
        self.state = new_state
        if self.state_listener is not None:
            self.state_listener(self, new_state, old_state)

    def run(self) -> None:
        log.info("%s Starting", self.log_prefix)
        self.set_state(State.RUNNING)
        try:
            self.run_loop()
        except BaseException as e:
            # A Kafka error is logged where it happened; anything else is the application's.
            log.exception("%s Streams application error during processing", self.log_prefix)
            self.uncaught_exception = e
            if self.uncaught_exception_handler is not None:
                self.uncaught_exception_handler(self, e)
        finally:
            self.shutdown()

    def close(self) -> None:
        """Ask the thread to stop; it finishes its loop, commits and closes (``join`` to wait).

        As 0.10.1, a flag the loop checks: a poll returns within ``poll.ms``, a rebalance when the
        group has settled."""
        log.info("%s Informed thread to shut down", self.log_prefix)
        self.running.clear()

    # --8<-- [start:run_loop]
    def run_loop(self) -> None:
        """Kafka 0.11.0's loop: poll, process everything the poll brought, then punctuate, commit,
        feed the standby tasks and clean up (``process_and_punctuate`` says why not 0.10.1's)."""
        records_processed_before_commit = UNLIMITED_RECORDS
        self.consumer.subscribe(self.source_topics, listener=self.rebalance_listener)
        while self.still_running():
            self.timer_started_ms = self.time.milliseconds()
            records = self.poll_requests()
            if records and self.active_tasks:
                for partition, partition_records in records.items():
                    self.active_tasks_by_partition[partition].add_records(partition, partition_records)
                total_processed = self.process_and_punctuate(records_processed_before_commit)
                if total_processed > 0:
                    process_latency_ms = self.time.milliseconds() - self.timer_started_ms
                    records_processed_before_commit = adjust_records_processed_before_commit(
                        records_processed_before_commit,
                        total_processed,
                        process_latency_ms,
                        self.commit_time_ms,
                    )
            self.maybe_commit()
            self.maybe_update_standby_tasks()
            self.maybe_clean()

    def poll_requests(self) -> dict[TopicPartition, list]:
        """Wait up to ``poll.ms`` for records (a rebalance happens in here); rethrow what the
        rebalance listener caught."""
        records = self.consumer.poll(self.poll_time_ms)
        if self.rebalance_exception is not None:
            raise StreamsException(f"{self.log_prefix} Failed to rebalance") from self.rebalance_exception
        return records

    def process_and_punctuate(self, records_processed_before_commit: int) -> int:
        """One record from each task in turn until no task has anything buffered, committing every
        ``records_processed_before_commit`` records if that is set; then each task punctuates, and
        commits if a processor asked. Returns the records processed since the last commit check.

        This is Kafka 0.11.0's scheduler (KAFKA-4843), the version whose exactly-once kafka_lite's
        tasks run. 0.10.1's loop processes one record from each task and then polls again, with a
        timeout of 0, and checks the commit clock, before the next record of each task: in Java a
        poll that finds records buffered costs little; in Python ``KafkaConsumer.poll`` walks the
        coordinator, the fetcher and the selector, tens of microseconds, which would be paid per
        record. The order the records are processed in is the same: the round robin over the
        tasks, each task taking its partitions' records in timestamp order."""
        processed_since_last_maybe_commit = 0
        processed_each_round = 1
        while processed_each_round:
            processed_each_round = 0
            for task in self.active_tasks.values():
                if task.process():
                    processed_each_round += 1
            processed_since_last_maybe_commit += processed_each_round
            if (
                records_processed_before_commit != UNLIMITED_RECORDS
                and processed_since_last_maybe_commit >= records_processed_before_commit
            ):
                processed_since_last_maybe_commit = 0
                self.maybe_commit()
        for task in list(self.active_tasks.values()):
            self.maybe_punctuate(task)
            if task.commit_needed():
                self.commit_one(task)
        return processed_since_last_maybe_commit

    # --8<-- [end:run_loop]

    def still_running(self) -> bool:
        if not self.running.is_set():
            log.debug("%s Shutting down at user request", self.log_prefix)
            return False
        return True

    def shutdown(self) -> None:
        log.info("%s Shutting down", self.log_prefix)
        self.set_state(State.PENDING_SHUTDOWN)
        self.shutdown_tasks_and_state(rethrow=False)
        for name, client in (
            ("producer", self.producer),
            ("consumer", self.consumer),
            ("restore consumer", self.restore_consumer),
        ):
            if client is None:
                continue
            try:
                client.close()
            except Exception:
                log.exception("%s Failed to close %s", self.log_prefix, name)
        self.remove_stream_tasks()
        self.remove_standby_tasks()
        log.info("%s Stream thread shutdown complete", self.log_prefix)
        self.set_state(State.DEAD)

    def shutdown_tasks_and_state(self, rethrow: bool) -> None:
        """Close the processors, flush the stores and the output, close the stores (checkpointing
        them), and only then commit the input offsets (``_commit_after_state_is_written`` says why
        this is 0.10.2's order)."""
        if self.eos_enabled:
            self._shutdown_tasks_and_state_eos(rethrow)
            return
        self._commit_after_state_is_written(rethrow)
        try:
            self.restore_consumer.assign([])  # let go of the changelog partitions
        except Exception:
            log.exception("%s Failed to un-assign change log partitions", self.log_prefix)
            if rethrow:
                raise

    def _commit_after_state_is_written(self, rethrow: bool) -> None:
        """At-least-once's shutdown in Kafka 0.10.2's order (KAFKA-4561). 0.10.1 commits the offsets
        first and flushes the stores after; with the record cache a store's latest updates are in the
        cache until that flush, so a crash between the two would lose them with their input already
        committed. Here the offsets are committed last, and only if every step before succeeded:
        otherwise the records are processed again, which at-least-once allows."""
        written = self._perform_on_all_tasks(lambda task: task.close_topology(), "close", False)
        written &= self._perform_on_all_tasks(lambda task: task.state_mgr.flush(), "flush state", rethrow)
        # What the flushed caches and the closing processors sent must be acknowledged before the
        # checkpoint or the committed offsets say so.
        self.producer.flush()
        written &= self._perform_on_all_tasks(
            lambda task: task.close_state_manager(), "close state manager", rethrow
        )
        if written:
            self._perform_on_all_tasks(lambda task: task.commit_offsets(), "commit consumer offsets", rethrow)

    def _shutdown_tasks_and_state_eos(self, rethrow: bool) -> None:
        """Exactly_once, in Kafka 0.11's order (StreamTask ``suspend`` then ``close``): the processors
        close first, so what they send belongs to the task's last transaction; then the transaction
        commits (stores flushed, output flushed, offsets in it); then the stores close, checkpointed
        only if that commit happened; last the task's producer, aborting a transaction left open.
        ``close_topology``, not ``close``: the consumed offsets must outlive the processors, or the
        last transaction would commit the output without the offsets of the input that made it."""
        self._perform_on_all_tasks(lambda task: task.close_topology(), "close", False)
        try:
            self._perform_on_all_tasks(
                lambda task: task.commit(start_new_transaction=False), "commit", rethrow
            )
        finally:
            self._perform_on_all_tasks(
                lambda task: task.close_state_manager(), "close state manager", rethrow
            )
            for task in self.active_tasks.values():
                task.close_producer()
            try:
                self.restore_consumer.assign([])
            except Exception:
                log.exception("%s Failed to un-assign change log partitions", self.log_prefix)

    def _perform_on_all_tasks(self, action: Callable[[Any], None], what: str, rethrow: bool) -> bool:
        """``action`` on every task, even after one fails; whether all succeeded."""
        succeeded = True
        for task in [*self.active_tasks.values(), *self.standby_tasks.values()]:
            try:
                action(task)
            except KafkaException:
                log.exception("%s Failed while executing %s %s due to %s",
                              self.log_prefix, type(task).__name__, task.id, what)  # fmt: skip
                succeeded = False
                if rethrow:
                    raise
        return succeeded

    # -- the loop's steps -------------------------------------------------------------------------------

    def maybe_punctuate(self, task: StreamTask) -> None:
        try:
            task.maybe_punctuate()  # by the task's stream time, from its records' timestamps
        except KafkaException:
            log.exception("%s Failed to punctuate active task %s", self.log_prefix, task.id)
            raise

    def maybe_commit(self) -> None:
        now = self.time.milliseconds()
        if self.commit_time_ms >= 0 and self.last_commit_ms + self.commit_time_ms < now:
            log.info("%s Committing all tasks because the commit interval %d ms has elapsed",
                     self.log_prefix, self.commit_time_ms)  # fmt: skip
            self.commit_all()
            # The interval counts from the end of this commit, as Kafka 2.x's StreamThread has it
            # (0.10.1 counted from its start). Under exactly_once every task's commit is a transaction:
            # when committing them all takes longer than the interval, counting from the start would
            # commit again after one record per task, and the thread would do little else.
            self.last_commit_ms = self.time.milliseconds()

    def commit_all(self) -> None:
        for task in [*self.active_tasks.values(), *self.standby_tasks.values()]:
            self.commit_one(task)

    def commit_one(self, task: StreamTask | StandbyTask) -> None:
        log.debug("%s Committing task %s", self.log_prefix, task.id)
        try:
            task.commit()
        except CommitFailedException:
            # The group has moved on (a rebalance): the records are processed again by the next
            # owner, which at-least-once allows.
            log.warning("%s Failed to commit %s %s state", self.log_prefix, type(task).__name__, task.id,
                        exc_info=True)  # fmt: skip
        except KafkaException:
            log.exception("%s Failed to commit %s %s state", self.log_prefix, type(task).__name__, task.id)
            raise

    def maybe_update_standby_tasks(self) -> None:
        """Hand the changelog records the restore consumer fetched to the standby tasks."""
        if not self.standby_tasks:
            return
        records = self.restore_consumer.poll(0)
        for partition, partition_records in records.items():
            task = self.standby_tasks_by_partition.get(partition)
            if task is None:
                raise StreamsException(f"{self.log_prefix} Missing standby task for partition {partition}")
            task.update(partition, partition_records)

    def maybe_clean(self) -> None:
        now = self.time.milliseconds()
        if now > self.last_clean_ms + self.clean_time_ms:
            self.state_directory.clean_removed_tasks(self.clean_time_ms)
            self.last_clean_ms = now

    # -- tasks ------------------------------------------------------------------------------------------

    def cached_tasks(self) -> set[TaskId]:
        """The tasks whose state this machine holds: a task directory with a checkpoint in it."""
        tasks = set()
        for task_dir in self.state_directory.list_task_directories():
            if (task_dir / CHECKPOINT_FILE_NAME).exists():
                tasks.add(TaskId.parse(task_dir.name))
        return tasks

    def create_stream_task(self, task_id: TaskId, partitions: set[TopicPartition]) -> StreamTask:
        log.info("%s Creating active task %s with assigned partitions %s",
                 self.log_prefix, task_id, sorted(partitions))  # fmt: skip
        topology = self.builder.build(task_id.topic_group_id)
        state_mgr = ProcessorStateManager(
            self.application_id,
            task_id,
            sorted(partitions),
            self.restore_consumer,
            False,
            self.state_directory,
            topology.source_store_to_source_topic,
            eos_enabled=self.eos_enabled,
        )
        if not self.eos_enabled:
            return StreamTask(
                task_id, self.application_id, sorted(partitions), topology, self.consumer,
                RecordCollectorImpl(self.producer, str(task_id)), state_mgr, self.task_config,
                cache=self.cache,
            )  # fmt: skip
        producer = KafkaProducer(
            time=self.time, **self.config.get_producer_configs(self.thread_client_id, str(task_id))
        )
        try:
            return StreamTask(
                task_id, self.application_id, sorted(partitions), topology, self.consumer,
                RecordCollectorImpl(producer, str(task_id)), state_mgr, self.task_config, producer,
                self.cache,
            )  # fmt: skip
        except BaseException:
            producer.close()
            state_mgr.close({}, write_checkpoint=False)
            raise

    def add_stream_tasks(self, assignment: Collection[TopicPartition]) -> None:
        partitions_for_task: dict[TaskId, set[TopicPartition]] = {}
        for partition in assignment:
            for task_id in self.partition_assignor.tasks_for_partition(partition):
                partitions_for_task.setdefault(task_id, set()).add(partition)
        for task_id, partitions in sorted(partitions_for_task.items()):
            task = self.create_stream_task(task_id, partitions)
            self.active_tasks[task_id] = task
            for partition in partitions:
                self.active_tasks_by_partition[partition] = task

    def create_standby_task(
        self, task_id: TaskId, partitions: frozenset[TopicPartition]
    ) -> StandbyTask | None:
        topology = self.builder.build(task_id.topic_group_id)
        if not topology.state_stores():
            return None  # nothing to keep warm
        log.info("%s Creating new standby task %s with assigned partitions %s",
                 self.log_prefix, task_id, sorted(partitions))  # fmt: skip
        state_mgr = ProcessorStateManager(
            self.application_id,
            task_id,
            sorted(partitions),
            self.restore_consumer,
            True,
            self.state_directory,
        )
        return StandbyTask(task_id, self.application_id, partitions, topology, state_mgr, self.task_config)

    def add_standby_tasks(self) -> None:
        checkpointed_offsets: dict[TopicPartition, int] = {}
        for task_id, partitions in sorted(self.partition_assignor.standby_tasks().items()):
            task = self.create_standby_task(task_id, partitions)
            if task is None:
                continue
            self.standby_tasks[task_id] = task
            # The standby is fed by changelog partition: that is what its records arrive by.
            for partition in task.changelog_partitions():
                self.standby_tasks_by_partition[partition] = task
            checkpointed_offsets.update(task.checkpointed_offsets)

        # The restore consumer now follows every standby changelog, from its checkpoint.
        self.restore_consumer.assign(sorted(checkpointed_offsets))
        for partition, offset in sorted(checkpointed_offsets.items()):
            if offset >= 0:
                self.restore_consumer.seek(partition, offset)
            else:
                self.restore_consumer.seek_to_beginning(partition)

    def remove_stream_tasks(self) -> None:
        log.info("%s Removing all active tasks %s", self.log_prefix, sorted(self.active_tasks))
        self.prev_tasks = set(self.active_tasks)
        self.active_tasks.clear()
        self.active_tasks_by_partition.clear()

    def remove_standby_tasks(self) -> None:
        log.info("%s Removing all standby tasks %s", self.log_prefix, sorted(self.standby_tasks))
        self.standby_tasks.clear()
        self.standby_tasks_by_partition.clear()

    # -- what others may ask ----------------------------------------------------------------------------

    def get_store(self, task_id: TaskId, name: str) -> StateStore | None:
        task = self.active_tasks.get(task_id)
        return None if task is None else task.get_store(name)

    def thread_metadata(self) -> ThreadMetadata:
        def tasks(task_map: dict[TaskId, Any]) -> frozenset[TaskMetadata]:
            return frozenset(
                TaskMetadata(str(task_id), frozenset(task.partitions)) for task_id, task in task_map.items()
            )

        return ThreadMetadata(
            self.name, self.state.value, tasks(dict(self.active_tasks)), tasks(dict(self.standby_tasks))
        )

    def __repr__(self) -> str:
        lines = [f"StreamsThread appId: {self.application_id}", f"\tStreamsThread threadId: {self.name}"]
        lines += [f"\tActive tasks:\t{sorted(map(str, self.active_tasks))}",
                  f"\tStandby tasks:\t{sorted(map(str, self.standby_tasks))}"]  # fmt: skip
        return "\n".join(lines)
