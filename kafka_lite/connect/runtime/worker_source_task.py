"""A source task in the worker: poll the task, convert its records, send them, commit their offsets.

Mirrors: org.apache.kafka.connect.runtime.WorkerSourceTask and WorkerSourceTaskContext
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerSourceTask.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: outstanding records are kept in dicts keyed by ``identity(record)`` where Kafka uses
         ``IdentityHashMap`` s; Kafka's ``synchronized (this)``, ``wait`` and ``notifyAll`` are one
         ``threading.Condition``.

Two threads meet here. The task's own thread loops in ``execute``: ``poll`` the task, pass each
record through the connector's transformation chain, turn its key and value into bytes with the
converters, ``send`` it, and tell the offset writer
the record's source offset. While the connector is paused the loop stops polling and waits to be
resumed (records already polled are sent after the pause). The committer's thread calls ``commit_offsets`` every
``offset.flush.interval.ms``.

An offset may be stored only once the records before it are in Kafka, or a crash would skip
them. So a commit first snapshots the offsets (``OffsetStorageWriter.begin_flush``), then waits
until every record sent before the snapshot is acknowledged (``outstanding_messages`` empty: each
producer callback removes its record), then writes the snapshot. Meanwhile the task thread keeps
sending; records sent during the wait go to ``outstanding_messages_backlog``, which becomes the
outstanding set once the commit ends. A crash after records are sent but before their offsets
are written sends them again on restart: at-least-once.
"""

from __future__ import annotations

import builtins
import functools
import logging
import threading
from typing import Any

from kafka_lite.common.errors import KafkaException, RetriableException
from kafka_lite.common.time import Time
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime.abstract_status import TaskStatus
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.transformation_chain import TransformationChain
from kafka_lite.connect.runtime.worker_config import OFFSET_COMMIT_TIMEOUT_MS_CONFIG, WorkerConfig
from kafka_lite.connect.runtime.worker_task import WorkerTask
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.source.source_task import SourceTask, SourceTaskContext
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReader
from kafka_lite.connect.storage.offset_storage_writer import OffsetStorageWriter
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.producer.producer_record import ProducerRecord

log = logging.getLogger(__name__)

SEND_FAILED_BACKOFF_MS = 100
PRODUCER_CLOSE_TIMEOUT_S = 30


def identity(producer_record: ProducerRecord) -> int:
    """A record's key in the outstanding maps: the object itself, as in Kafka's ``IdentityHashMap``.
    Two equal records (the same line read twice) are two sends, each awaiting its own callback."""
    return builtins.id(producer_record)


class WorkerSourceTaskContext(SourceTaskContext):
    """A source task's view of the worker: the reader of the offsets its connector stored, from
    which it learns where to resume (a file's position, a table's last id)."""

    def __init__(self, reader: OffsetStorageReader) -> None:
        self.reader = reader

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


class WorkerSourceTask(WorkerTask):
    def __init__(
        self,
        id: ConnectorTaskId,
        task: SourceTask,
        status_listener: TaskStatus.Listener,
        initial_state: TargetState,
        key_converter: Converter,
        value_converter: Converter,
        transformation_chain: TransformationChain[SourceRecord],
        producer: KafkaProducer,
        offset_reader: OffsetStorageReader,
        offset_writer: OffsetStorageWriter,
        worker_config: WorkerConfig,
        time: Time,
    ) -> None:
        super().__init__(id, status_listener, initial_state)
        self.task = task
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.transformation_chain = transformation_chain
        self.producer = producer
        self.offset_reader = offset_reader
        self.offset_writer = offset_writer
        self.worker_config = worker_config
        self.time = time
        self.task_config: dict[str, str] = {}
        # The records of the last poll not yet handed to the producer: after a retriable send error
        # the rest of the batch waits here, so that poll is not called again and nothing is lost.
        self.to_send: list[SourceRecord] | None = None
        self.last_send_failed = False
        # identity(producer record) -> producer record: sent, not yet acknowledged.
        self.outstanding_messages: dict[int, ProducerRecord] = {}
        self.outstanding_messages_backlog: dict[int, ProducerRecord] = {}
        self.flushing = False
        self.monitor = threading.Condition()  # Kafka's synchronized (this) / wait / notifyAll
        # stop() may come while the task is still in start(), on another thread; the task's stop()
        # must not run before its start() has finished, so the thread calls it once start() returns.
        self.finished_start = False
        self.started_shutdown_before_start_completed = False

    def initialize(self, task_config: dict[str, str]) -> None:
        self.task_config = task_config

    def stop(self) -> None:
        super().stop()
        with self.monitor:
            if self.finished_start:
                self.task.stop()  # wakes a poll that waits for data
            else:
                self.started_shutdown_before_start_completed = True

    def close(self) -> None:
        # Bounded: records still unacknowledged after that are not committed, and are sent again by
        # the next run of the task, at least once.
        self.producer.close(PRODUCER_CLOSE_TIMEOUT_S)
        self.transformation_chain.close()

    def execute(self) -> None:
        try:
            self.task.initialize(WorkerSourceTaskContext(self.offset_reader))
            self.task.start(self.task_config)
            log.info("Source task %s finished initialization and start", self)
            with self.monitor:
                if self.started_shutdown_before_start_completed:
                    self.task.stop()
                    return
                self.finished_start = True
            while not self.is_stopping():
                if self.should_pause():
                    self.on_pause()
                    if self.await_unpause():
                        self.on_resume()
                    continue
                # A new poll only once the last batch is all sent: the task is never asked for more
                # while records it gave are still waiting.
                if self.to_send is None:
                    log.debug("Nothing to send to Kafka. Polling source for additional records")
                    self.to_send = self.task.poll() or None
                if self.to_send is None:
                    continue
                log.debug("About to send %d records to Kafka", len(self.to_send))
                # After a retriable send error, a back-off that stop() cuts short.
                if not self.send_records():
                    self._stopping.wait(SEND_FAILED_BACKOFF_MS / 1000)
        finally:
            # What was sent before the stop is committed now, not at the next interval.
            self.commit_offsets()

    # --8<-- [start:send_records]
    def send_records(self) -> bool:
        """Send ``to_send``; False if a retriable error left some of it to send after a back-off."""
        for processed, pre_transform_record in enumerate(self.to_send):
            record = self.transformation_chain.apply(pre_transform_record)
            if record is None:
                # Dropped: nothing to send, and so nothing to wait for; the task hears at once
                # that the record is done with, as it would after the broker's acknowledgement.
                self._commit_task_record(pre_transform_record)
                continue
            key = self.key_converter.from_connect_data(record.topic, record.key_schema, record.key)
            value = self.value_converter.from_connect_data(record.topic, record.value_schema, record.value)
            producer_record = ProducerRecord(
                record.topic, value, key, record.kafka_partition, record.timestamp
            )
            log.debug("Appending record with key %r, value %r", record.key, record.value)
            # Outstanding before send: the callback may run on the I/O thread before send returns.
            # A record resent after a failed send is outstanding already.
            with self.monitor:
                if not self.last_send_failed:
                    outstanding = (
                        self.outstanding_messages_backlog if self.flushing else self.outstanding_messages
                    )
                    outstanding[identity(producer_record)] = producer_record
                    # The offset goes to the writer now; it is written only after this record is acked.
                    self.offset_writer.offset(record.source_partition, record.source_offset)
            try:
                # Kafka's send(record, callback): the callback rides in the record's batch and runs
                # on the producer's I/O thread once the record is acknowledged or has failed.
                self.producer.send(producer_record.topic, value=value, key=key,
                                   partition=producer_record.partition,
                                   timestamp_ms=producer_record.timestamp_ms,
                                   callback=functools.partial(self._on_completion, pre_transform_record,
                                                              producer_record))  # fmt: skip
                self.last_send_failed = False
            except RetriableException:
                log.warning("Failed to send %s, backing off before retrying:", producer_record, exc_info=True)
                self.to_send = self.to_send[processed:]
                self.last_send_failed = True
                return False
            except KafkaException as e:
                raise ConnectException("Unrecoverable exception trying to send") from e
        self.to_send = None
        return True

    def _on_completion(
        self, record: SourceRecord, producer_record: ProducerRecord, metadata: Any, e: BaseException | None
    ) -> None:
        """The producer callback of one record (Kafka's anonymous ``Callback`` in ``sendRecords``).
        ``record`` is the record as the task polled it, before the transformations: the task is
        told of its own record, whatever the chain made of it."""
        if e is not None:
            # As in Kafka 0.10.1: logged, and counted as sent, so a commit does not wait forever.
            log.error("%s failed to send record to %s: %s", self.id, producer_record.topic, e)
        else:
            log.debug("Wrote record successfully: topic %s partition %d offset %d",
                      metadata.topic, metadata.partition, metadata.offset)  # fmt: skip
            self._commit_task_record(record)
        self._record_sent(producer_record)

    # --8<-- [end:send_records]
    def _commit_task_record(self, record: SourceRecord) -> None:
        try:
            self.task.commit_record(record)
        except Exception:
            log.exception("Exception thrown while calling task.commit_record()")

    def _record_sent(self, producer_record: ProducerRecord) -> None:
        with self.monitor:
            removed = self.outstanding_messages.pop(identity(producer_record), None)
            if removed is None and self.flushing:
                removed = self.outstanding_messages_backlog.pop(identity(producer_record), None)
            if removed is None:
                log.error("CRITICAL Saw callback for record that was not present in the outstanding message set: %s",
                          producer_record)  # fmt: skip
            elif self.flushing and not self.outstanding_messages:
                self.monitor.notify_all()  # the commit waiting in commit_offsets can go on

    # --8<-- [start:commit_offsets]
    def commit_offsets(self) -> bool:
        """Wait for the producer to acknowledge what was sent, then write the offsets; False on failure."""
        commit_timeout_ms = self.worker_config.get(OFFSET_COMMIT_TIMEOUT_MS_CONFIG)
        log.debug("%s Committing offsets", self)
        started = self.time.milliseconds()
        timeout = started + commit_timeout_ms
        # Under the monitor send_records records each offset under: no offset slips in between the
        # snapshot and the switch to the backlog, so every record the snapshot covers is outstanding.
        with self.monitor:
            self.flushing = True
            flush_started = self.offset_writer.begin_flush()
            log.debug(
                "%s flushing %d outstanding messages for offset commit", self, len(self.outstanding_messages)
            )
            while self.outstanding_messages:
                timeout_ms = timeout - self.time.milliseconds()
                if timeout_ms <= 0:
                    log.error("Failed to flush %s, timed out while waiting for producer to flush outstanding "
                              "%d messages", self, len(self.outstanding_messages))  # fmt: skip
                    self._finish_failed_flush()
                    return False
                self.monitor.wait(timeout_ms / 1000)
            if not flush_started:
                # Nothing new to write; the records were still waited for, so task.commit() is true.
                self._finish_successful_flush()
                self._commit_source_task()
                return True

        # Outside the monitor: the write goes to the offsets topic (or a file) and may take a while,
        # and the task's thread keeps sending meanwhile, into the backlog.
        flush_future = self.offset_writer.do_flush(
            lambda error, result: (
                log.error("Failed to flush %s offsets to storage: %s", self, error) if error else None
            )
        )
        if flush_future is None:
            self._finish_failed_flush()
            return False
        try:
            flush_future.result(max(timeout - self.time.milliseconds(), 0) / 1000)
        except TimeoutError:
            log.error("Timed out waiting to flush %s offsets to storage", self)
            self._finish_failed_flush()
            return False
        except Exception:
            log.exception("Flush of %s offsets threw an unexpected exception", self)
            self._finish_failed_flush()
            return False
        self._finish_successful_flush()
        log.info("Finished %s commitOffsets successfully in %d ms", self, self.time.milliseconds() - started)
        self._commit_source_task()
        return True

    # --8<-- [end:commit_offsets]

    def _commit_source_task(self) -> None:
        try:
            self.task.commit()
        except Exception:
            log.exception("Exception thrown while calling task.commit()")

    def _finish_failed_flush(self) -> None:
        # The snapshot goes back into the writer (cancel_flush), to be written by the next commit with
        # whatever came since, and every record sent meanwhile is waited for again.
        with self.monitor:
            self.offset_writer.cancel_flush()
            self.outstanding_messages.update(self.outstanding_messages_backlog)
            self.outstanding_messages_backlog.clear()
            self.flushing = False

    def _finish_successful_flush(self) -> None:
        with self.monitor:
            # The backlog (sent during the flush) is what is outstanding now; swap, as Kafka does.
            self.outstanding_messages, self.outstanding_messages_backlog = (
                self.outstanding_messages_backlog, self.outstanding_messages)  # fmt: skip
            self.flushing = False

    def __str__(self) -> str:
        return f"WorkerSourceTask{{id={self.id}}}"
