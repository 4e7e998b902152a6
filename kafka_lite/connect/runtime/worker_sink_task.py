"""A sink task in the worker: a consumer in group ``connect-<name>``, records put, then offsets committed.

Mirrors: org.apache.kafka.connect.runtime.WorkerSinkTask and WorkerSinkTaskContext
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerSinkTask.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: besides the wakeup, each iteration compares the consumer's pause with the target state
         (a wakeup can be used up by a commit during a rebalance, and the pause would be lost).

Each iteration of the task's thread commits if ``offset.flush.interval.ms`` has passed, then
polls the consumer (for at most the time to the next commit), converts the records' bytes to
Connect data with the converters, and hands them to the task's ``put``. ``current_offsets``
follows what was put: for each partition, the offset after its last record.

A commit hands ``current_offsets`` to the task's ``pre_commit`` and commits what it returns: by
default the task flushes and returns them all, but a task that tracks what is really durable may
return less, or ``{}`` to commit nothing. The worker commits a returned offset only for a partition
it owns and no further than what was put, and skips the commit when nothing changed since the last.
A task whose ``pre_commit`` fails is rewound to the offsets last committed, so the records it may
have lost are consumed again: at-least-once, like the source side.

All of it runs on the task's thread, the consumer being single-threaded; ``stop`` from the
herder's thread only sets the flag and calls ``consumer.wakeup()`` to cut a poll short, and so does
``transition_to``. A paused task pauses every partition of its consumer (``pause_all``) and asks
for a commit, so the offsets of what was put are stored; it keeps polling, which returns nothing
but keeps it in the group, and ``put`` is not called. On a
rebalance the consumer calls ``HandleRebalance``: before partitions are taken away their offsets
are committed (synchronously, through ``pre_commit`` too), and the task opens the ones it is given
and may ask, through ``context.offset``, to start them from offsets it stored itself.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from kafka_lite.common.errors import KafkaException, WakeupException
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.connect.errors import ConnectException, RetriableException
from kafka_lite.connect.runtime.abstract_status import TaskStatus
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.transformation_chain import TransformationChain
from kafka_lite.connect.runtime.worker_config import (
    OFFSET_COMMIT_INTERVAL_MS_CONFIG,
    OFFSET_COMMIT_TIMEOUT_MS_CONFIG,
    WorkerConfig,
)
from kafka_lite.connect.runtime.worker_task import WorkerTask
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.sink.sink_task import TOPICS_CONFIG, SinkTask, SinkTaskContext
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

log = logging.getLogger(__name__)


class WorkerSinkTaskContext(SinkTaskContext):
    """What a sink task may ask of the worker. Every request is recorded here and acted on by the
    worker's loop on the same thread, between two polls, where the consumer may be touched."""

    def __init__(self, consumer: KafkaConsumer) -> None:
        self.consumer = consumer
        self.offsets: dict[TopicPartition, int] = {}  # where to seek before the next poll
        self.timeout_ms = -1  # the next poll's limit, for a task that wants to retry sooner
        # The task's own pauses, kept apart from the worker's: resuming after a redelivery or a
        # connector pause must not resume a partition the task paused itself.
        self.paused_partitions: set[TopicPartition] = set()
        self.commit_requested = False

    def request_commit(self) -> None:
        self.commit_requested = True

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self.offsets.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return self.consumer.assignment()

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused_partitions.update(partitions)
        self.consumer.pause(*partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused_partitions.difference_update(partitions)
        self.consumer.resume(*partitions)


class WorkerSinkTask(WorkerTask):
    def __init__(
        self,
        id: ConnectorTaskId,
        task: SinkTask,
        status_listener: TaskStatus.Listener,
        initial_state: TargetState,
        worker_config: WorkerConfig,
        key_converter: Converter,
        value_converter: Converter,
        transformation_chain: TransformationChain[SinkRecord],
        time: Time,
    ) -> None:
        super().__init__(id, status_listener, initial_state)
        self.task = task
        self.worker_config = worker_config
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.transformation_chain = transformation_chain
        self.time = time
        self.task_config: dict[str, str] = {}
        # Converted records not yet accepted by put: kept across polls while a put is retried.
        self.message_batch: list[SinkRecord] = []
        # Two views of each partition: what Kafka has committed, and what the task has been given.
        # A failed pre_commit goes back from the second to the first.
        self.last_committed_offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.current_offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.next_commit = 0
        self.committing = False
        # Each commit is numbered, so the callback of one that timed out (and was given up on) cannot
        # change the state of the commit after it.
        self.commit_seqno = 0
        self.commit_started = -1
        self.commit_failures = 0
        self.paused_for_redelivery = False
        self.paused = False  # whether pause_all was applied for a PAUSED target state
        self.rebalance_exception: BaseException | None = None
        self.consumer: KafkaConsumer | None = None
        self.context: WorkerSinkTaskContext | None = None

    def initialize(self, task_config: dict[str, str]) -> None:
        try:
            self.task_config = task_config
            self.consumer = self._create_consumer()
            self.context = WorkerSinkTaskContext(self.consumer)
        except Exception as e:
            log.error("Task %s failed initialization and will not be started.", self, exc_info=True)
            raise ConnectException(f"Failed to create consumer: {e}") from e

    def stop(self) -> None:
        # Only the flag and a wakeup: everything else belongs to the task's thread.
        super().stop()
        if self.consumer is not None:
            self.consumer.wakeup()

    def transition_to(self, state: TargetState) -> None:
        super().transition_to(state)
        if self.consumer is not None:
            self.consumer.wakeup()  # the poll ends; the next iteration applies the state

    def close(self) -> None:
        # The task's stop() is called here, on its own thread, after its last commit.
        # autocommit=False: the consumer must not commit positions past what the task has flushed.
        try:
            self.task.stop()
        finally:
            if self.consumer is not None:
                self.consumer.close(autocommit=False)
            self.transformation_chain.close()

    def execute(self) -> None:
        self.initialize_and_start()
        try:
            while not self.is_stopping():
                self.iteration()
        finally:
            # The partitions are given up as at a rebalance: a last, synchronous commit and the
            # task's close, so the next owner starts after what this task wrote.
            self.close_partitions()

    def iteration(self) -> None:
        try:
            now = self.time.milliseconds()
            # Commit if it is time; the first iteration commits nothing (no offsets yet).
            if not self.committing and (self.context.commit_requested or now >= self.next_commit):
                self.commit_offsets(now, closing=False)
                self.next_commit += self.worker_config.get(OFFSET_COMMIT_INTERVAL_MS_CONFIG)
                self.context.commit_requested = False
            commit_timeout = self.commit_started + self.worker_config.get(OFFSET_COMMIT_TIMEOUT_MS_CONFIG)
            if self.committing and now >= commit_timeout:
                log.warning("Commit of %s offsets timed out", self)
                self.commit_failures += 1
                self.committing = False
            if self.should_pause() != self.paused:
                self._apply_target_state()
            # No longer than the time to the next commit, so a quiet topic does not delay it.
            self.poll(max(self.next_commit - now, 0))
        except WakeupException:
            # stop() or transition_to() woke the consumer.
            if self.is_stopping():
                return
            self._apply_target_state()

    def _apply_target_state(self) -> None:
        # A paused sink keeps polling with every partition paused: the polls fetch nothing but keep
        # the consumer in its group, so the partitions are not handed to another task meanwhile.
        if self.should_pause():
            self._pause_all()
            self.paused = True
            self.on_pause()
            self.context.request_commit()  # store the offsets of what was put before the pause
        elif not self.paused_for_redelivery:
            self._resume_all()
            self.paused = False
            self.on_resume()

    def initialize_and_start(self) -> None:
        topics = self.task_config.get(TOPICS_CONFIG)
        if not topics:
            raise ConnectException("Sink tasks require a list of topics.")
        # Subscribed, not assigned: the tasks of a connector share the group connect-<name>, and the
        # group coordinator spreads the topics' partitions over them, moving them as tasks come and go.
        self.consumer.subscribe(topics.split(","), listener=HandleRebalance(self))
        self.task.initialize(self.context)
        self.task.start(self.task_config)
        self.next_commit = self.time.milliseconds() + self.worker_config.get(OFFSET_COMMIT_INTERVAL_MS_CONFIG)
        log.info("Sink task %s finished initialization and start", self)

    def poll(self, timeout_ms: int) -> None:
        self.rewind()
        # A timeout the task set (after a RetriableException, say) holds for this one poll only.
        if self.context.timeout_ms > 0:
            timeout_ms = min(timeout_ms, self.context.timeout_ms)
            self.context.timeout(-1)
        msgs = self._poll_consumer(timeout_ms)
        self.convert_messages(msgs)
        self.deliver_messages()

    def _poll_consumer(self, timeout_ms: int) -> list:
        msgs = self.consumer.poll(timeout_ms)
        # The rebalance listener runs inside poll, and the consumer only logs what a listener raises;
        # so the listener parks its exception, and it ends the task from here.
        if self.rebalance_exception is not None:
            e, self.rebalance_exception = self.rebalance_exception, None
            raise e
        return [record for records in msgs.values() for record in records]

    def convert_messages(self, msgs: list) -> None:
        for msg in msgs:
            key_and_schema = self.key_converter.to_connect_data(msg.topic, msg.key)
            value_and_schema = self.value_converter.to_connect_data(msg.topic, msg.value)
            no_timestamp = msg.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE
            record = SinkRecord(
                msg.topic, msg.partition, key_and_schema.schema, key_and_schema.value,
                value_and_schema.schema, value_and_schema.value, msg.offset,
                None if no_timestamp else msg.timestamp, msg.timestamp_type,
            )  # fmt: skip
            # The connector's transformations see Connect data, after the converters; a record
            # one of them drops never reaches put.
            record = self.transformation_chain.apply(record)
            if record is not None:
                self.message_batch.append(record)

    def deliver_messages(self) -> None:
        if not self.message_batch and not self.paused_for_redelivery:
            return
        try:
            # A copy: the batch is kept for a retry, and the task may hold on to the list it was given.
            self.task.put(list(self.message_batch))
            # Only records put count toward a commit; offset + 1 is the next record to read.
            for record in self.message_batch:
                tp = TopicPartition(record.topic, record.kafka_partition)
                self.current_offsets[tp] = OffsetAndMetadata(record.kafka_offset + 1)
            self.message_batch.clear()
            if self.paused_for_redelivery:
                if not self.should_pause():
                    self._resume_all()
                self.paused_for_redelivery = False
        except RetriableException:
            # The sink is briefly unavailable (a database restarting). The same batch is handed again
            # after the next poll; with every partition paused that poll fetches nothing new, but it
            # still runs, so the consumer keeps its place in the group and its partitions while the
            # sink recovers, and the batch is not read twice.
            log.error("RetriableException from SinkTask %s:", self.id, exc_info=True)
            self.paused_for_redelivery = True
            self._pause_all()
        except Exception as e:
            # Anything else is the task's bug or a lasting failure: the task ends FAILED, its offsets
            # left at the last commit, until a user restarts it.
            raise ConnectException("Exiting WorkerSinkTask due to unrecoverable exception.") from e

    def _pause_all(self) -> None:
        self.consumer.pause(*self.consumer.assignment())

    def _resume_all(self) -> None:
        for tp in self.consumer.assignment():
            if tp not in self.context.paused_partitions:
                self.consumer.resume(tp)

    def rewind(self) -> None:
        """Seek to the offsets the task asked for through its context."""
        # Both views move there: the task knows where its data ends, and the next commit starts from
        # that point, not from where the consumer was.
        offsets, self.context.offsets = self.context.offsets, {}
        for tp, offset in offsets.items():
            self.consumer.seek(tp, offset)
            self.last_committed_offsets[tp] = OffsetAndMetadata(offset)
            self.current_offsets[tp] = OffsetAndMetadata(offset)

    # --8<-- [start:commit_offsets]
    def commit_offsets(self, now: int, closing: bool) -> None:
        """Ask the task which offsets are safe (``pre_commit``) and commit those it may commit."""
        # put may only have buffered the records; an offset committed before the sink has them
        # durably would, after a crash, skip them. So the task flushes first (pre_commit's default),
        # and only the offsets it vouches for are committed.
        if not self.current_offsets:
            return
        self.committing = True
        self.commit_seqno += 1
        self.commit_started = now
        try:
            # The task gets a copy: what it returns is compared with current_offsets below.
            task_provided_offsets = self.task.pre_commit(dict(self.current_offsets))
        except Exception as e:
            if closing:
                # The partitions are going: nothing to rewind, their next owner starts from the last commit.
                log.warning("%s Offset commit failed during close", self)
                self._on_commit_completed(e, self.commit_seqno)
            else:
                # What the task was given since the last commit may be lost: consume it again.
                log.error("%s Offset commit failed, rewinding to last committed offsets", self, exc_info=True)
                for tp, committed in self.last_committed_offsets.items():
                    log.debug("%s Rewinding topic partition %s to offset %s", self.id, tp, committed.offset)
                    self.consumer.seek(tp, committed.offset)
                self.current_offsets = dict(self.last_committed_offsets)
                self._on_commit_completed(e, self.commit_seqno)
            return
        finally:
            if closing:
                self.task.close(list(self.current_offsets))

        if not task_provided_offsets:
            # A task that stores its offsets in the sink itself commits none to Kafka.
            log.debug("%s Skipping offset commit, task opted-out", self)
            self._on_commit_completed(None, self.commit_seqno)
            return

        # Start from the last commit, so a partition the task says nothing about keeps its offset;
        # take only what the task returns for a partition this task owns, and no further than was put.
        commitable_offsets = dict(self.last_committed_offsets)
        for tp, task_provided_offset in task_provided_offsets.items():
            if tp in commitable_offsets:
                if task_provided_offset.offset <= self.current_offsets[tp].offset:
                    commitable_offsets[tp] = task_provided_offset
                else:
                    log.warning("Ignoring invalid task provided offset %s/%s -- not yet consumed", tp,
                                task_provided_offset)  # fmt: skip
            else:
                log.warning("Ignoring invalid task provided offset %s/%s -- partition not assigned", tp,
                            task_provided_offset)  # fmt: skip

        if commitable_offsets == self.last_committed_offsets:
            log.debug("%s Skipping offset commit, no change since last commit", self)
            self._on_commit_completed(None, self.commit_seqno)
            return

        log.debug("%s Offsets to commit: %s", self, commitable_offsets)
        self._do_commit(commitable_offsets, closing, self.commit_seqno)

    # --8<-- [end:commit_offsets]

    def _do_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata], closing: bool, seqno: int) -> None:
        log.info("%s Committing offsets", self)
        if closing:
            # Synchronously: the partitions are about to go, and their next owner reads these offsets.
            self._do_commit_sync(offsets, seqno)
        else:
            # Asynchronously: the loop goes on putting records while the broker answers, and a failed
            # commit costs only a redelivery, since the next commit covers the same partitions.

            def on_complete(committed, error) -> None:
                if error is None:
                    self.last_committed_offsets = offsets
                self._on_commit_completed(error, seqno)

            self.consumer.commit_async(offsets, on_complete)

    def _do_commit_sync(self, offsets: dict[TopicPartition, OffsetAndMetadata], seqno: int) -> None:
        try:
            self.consumer.commit_sync(offsets)
            self.last_committed_offsets = offsets
            self._on_commit_completed(None, seqno)
        except WakeupException:
            # The wakeup stop() sent for a poll landed here instead; it is used up, so commit
            # again. (Kafka then throws it on, for its poll loop; the closing commit is the last call.)
            self._do_commit_sync(offsets, seqno)
        except KafkaException as e:
            self._on_commit_completed(e, seqno)

    def _on_commit_completed(self, error: BaseException | None, seqno: int) -> None:
        if self.commit_seqno != seqno:
            log.debug("Got callback for timed out commit %s: %s, but most recent commit is %s", self, seqno,
                      self.commit_seqno)  # fmt: skip
            return
        if error is not None:
            log.error("Commit of %s offsets threw an unexpected exception: %s", self, error)
            self.commit_failures += 1
        else:
            log.debug("Finished %s offset commit successfully in %d ms", self,
                      self.time.milliseconds() - self.commit_started)  # fmt: skip
            self.commit_failures = 0
        self.committing = False

    def close_partitions(self) -> None:
        self.commit_offsets(self.time.milliseconds(), closing=True)

    # The worker commits (auto-commit off), and only after the task has flushed; a connector with no
    # committed offsets starts at the beginning of its topics (earliest), not missing what was written
    # before it was created.
    def _create_consumer(self) -> KafkaConsumer:
        props = {
            "group.id": f"connect-{self.id.connector}",
            "bootstrap.servers": ",".join(self.worker_config.get("bootstrap.servers")),
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            **self.worker_config.originals_with_prefix("consumer."),
        }
        return KafkaConsumer(**props)

    def __str__(self) -> str:
        return f"WorkerSinkTask{{id={self.id}}}"


class HandleRebalance(ConsumerRebalanceListener):
    """Commit before partitions go; start from the consumer's positions when they come."""

    def __init__(self, worker_task: WorkerSinkTask) -> None:
        self.worker_task = worker_task

    def on_partitions_assigned(self, partitions: Collection[TopicPartition]) -> None:
        wt = self.worker_task
        wt.last_committed_offsets = {}
        wt.current_offsets = {}
        for tp in partitions:
            position = wt.consumer.position(tp)
            wt.last_committed_offsets[tp] = OffsetAndMetadata(position)
            wt.current_offsets[tp] = OffsetAndMetadata(position)
        # A pause for redelivery concerned records now discarded: start afresh.
        wt.paused_for_redelivery = False
        # The new partitions are paused too if the task is, and those the task itself paused stay so.
        wt.context.paused_partitions.intersection_update(partitions)
        if wt.should_pause():
            wt._pause_all()
        elif wt.context.paused_partitions:
            wt.consumer.pause(*wt.context.paused_partitions)
        # A failed closing commit (in on_partitions_revoked) is raised from this same poll, which ends
        # the task: its new partitions are not opened. (Kafka also lets a WakeupException through
        # here, which its closing commit rethrows; kafka_lite's uses the wakeup up, see _do_commit_sync.)
        if wt.rebalance_exception is None:
            try:
                wt.task.open(partitions)
                # A task that keeps its own offsets reads them in open and hands them to
                # context.offset(); seek there now, before this poll fetches from the committed ones.
                wt.rewind()
            except Exception as e:
                wt.rebalance_exception = e  # raised from the poll that ran this listener

    def on_partitions_revoked(self, partitions: Collection[TopicPartition]) -> None:
        wt = self.worker_task
        try:
            wt.close_partitions()
        except Exception as e:
            wt.rebalance_exception = e
        # Records not yet put will be fetched again by the partitions' next owner.
        wt.message_batch.clear()
