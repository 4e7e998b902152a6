"""A stream task: one sub-topology working through one partition of each of its source topics.

Mirrors: org.apache.kafka.streams.processor.internals.StreamTask and AbstractTask
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/, Kafka 0.10.1, with
         0.11's exactly_once)
Book:    chapter 9, 9.1.3 (threads and tasks); exactly_once is beyond the book (chapter 10's transactions)
Differs: the record collector and the state manager are passed in (explicit collaborators), where
         Kafka's task builds a ``RecordCollector`` over the producer and a ``ProcessorStateManager``
         itself: so the test driver runs this same task with a collector that captures output. The
         config is a dict of Kafka's names (``buffered.records.per.partition``,
         ``timestamp.extractor``, Kafka 1.0's ``default.deserialization.exception.handler``); there
         is no ``StreamsConfig`` class. No metrics. The current node lives in the context alone
         (0.11).

The stream thread drives a task with four calls, in its run loop:

    add_records(tp, records)   what the consumer fetched for tp -> its RecordQueue; pause tp if the
                               queue holds more than buffered.records.per.partition
    process()                  one record: the partition group picks it (smallest partition time),
                               the source node of its topic forwards it down the graph; resume tp
                               once its queue is back down to the limit
    maybe_punctuate()          fire the punctuations due at the current stream time
    commit()                   when commit.interval.ms has passed or a processor asked for it:
                               flush the stores, flush the producer, then commit the offsets

The order inside ``commit`` is the at-least-once guarantee: the input offsets are committed only
after the state and the output they produced are safely written. Flushing the stores comes first
because of the record cache (KIP-63): the thread's ``ThreadCache``, passed to the task and handed to
its stores through the context, holds each cached store's latest values. Flushing a store flushes
its part of the cache: each dirty key goes to the store, to its changelog and downstream (to the
sinks, so to the record collector) once. Only then does the collector flush what is in flight. A crash before the commit means
the records are processed again after a restart (duplicates possible, loss not). The committed
offset is the last processed offset + 1, the next record to read, as the consumer's convention is.

Exactly once (``processing.guarantee=exactly_once``, Kafka 0.11, KIP-129): the task owns a
transactional producer (``transactional.id=<application.id>-<task id>``). Built, the task calls
``init_transactions``, which fences any older producer of the same task (an instance that died or
was cut off) and aborts its open transaction, then begins a transaction. Its output, its changelog
writes and, at commit, its input offsets (``send_offsets_to_transaction``) all go into that
transaction, so ``commit_transaction`` makes them visible together, and a crash aborts them together:
the next owner starts from the last committed offsets with stores restored from committed changelog
data, and read_committed consumers never see the aborted output.
"""

from __future__ import annotations

import logging
from typing import Any

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.streams.deserialization_exception_handler import default_deserialization_exception_handler
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.min_timestamp_tracker import NOT_KNOWN
from kafka_lite.streams.processor.internals.partition_group import PartitionGroup, RecordInfo
from kafka_lite.streams.processor.internals.processor_context_impl import NONEXIST_TOPIC, ProcessorContextImpl
from kafka_lite.streams.processor.internals.processor_node import ProcessorNode
from kafka_lite.streams.processor.internals.processor_record_context import ProcessorRecordContext
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.processor_topology import ProcessorTopology
from kafka_lite.streams.processor.internals.punctuation_queue import PunctuationQueue, PunctuationSchedule
from kafka_lite.streams.processor.internals.record_collector import RecordCollector
from kafka_lite.streams.processor.internals.record_queue import RecordQueue
from kafka_lite.streams.processor.internals.stamped_record import StampedRecord
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.processor.timestamp_extractor import (
    ConsumerRecordTimestampExtractor,
    TimestampExtractor,
)
from kafka_lite.streams.state.internals.thread_cache import ThreadCache
from kafka_lite.streams.streams_config import (
    CACHE_MAX_BYTES_BUFFERING_CONFIG,
    DEFAULT_CACHE_MAX_BYTES_BUFFERING,
    EXACTLY_ONCE,
    PROCESSING_GUARANTEE_CONFIG,
)

log = logging.getLogger(__name__)

BUFFERED_RECORDS_PER_PARTITION_CONFIG = "buffered.records.per.partition"
TIMESTAMP_EXTRACTOR_CLASS_CONFIG = "timestamp.extractor"
DEFAULT_BUFFERED_RECORDS_PER_PARTITION = 1000  # StreamsConfig's default, 0.10.1


class StreamTask:
    """Kafka's ``StreamTask``: buffers, orders and processes the records of its partitions."""

    def __init__(
        self,
        task_id: TaskId,
        application_id: str,
        partitions: list[TopicPartition],
        topology: ProcessorTopology,
        consumer: Any,
        record_collector: RecordCollector,
        state_mgr: ProcessorStateManager,
        config: dict[str, Any],
        producer: Any = None,
        cache: ThreadCache | None = None,
    ) -> None:
        """``producer``: under exactly_once, the task's own transactional producer (the one behind
        ``record_collector``); None under at-least-once, where the thread's producer is shared.
        ``cache``: the thread's record cache; None gives the task one of its own, of the size
        ``cache.max.bytes.buffering`` in ``config`` (as a thread running this task alone would)."""
        self.id = task_id
        self.application_id = application_id
        self.partitions = set(partitions)
        self.topology = topology
        self.consumer = consumer  # pause, resume, commit_sync: a KafkaConsumer
        self.record_collector = record_collector
        self.state_mgr = state_mgr
        self.log_prefix = f"task [{task_id}]"
        self.punctuation_queue = PunctuationQueue()
        self.max_buffered_size = config.get(
            BUFFERED_RECORDS_PER_PARTITION_CONFIG, DEFAULT_BUFFERED_RECORDS_PER_PARTITION
        )
        self.consumed_offsets: dict[TopicPartition, int] = {}
        self.commit_requested = False
        self.commit_offset_needed = False
        self.record_info = RecordInfo()
        self.eos_enabled = config.get(PROCESSING_GUARANTEE_CONFIG) == EXACTLY_ONCE
        self.producer = producer
        self.transaction_in_flight = False
        if self.eos_enabled:
            if producer is None:
                raise StreamsException(f"{self.log_prefix} exactly_once needs the task's own producer")
            # First fence the task's previous owner (its open transaction is aborted), so that what
            # the stores restore and the offsets the task starts from are committed ones.
            producer.init_transactions()
            producer.begin_transaction()
            self.transaction_in_flight = True

        if cache is None:
            cache = ThreadCache(self.log_prefix, max(0, config.get(CACHE_MAX_BYTES_BUFFERING_CONFIG,
                                                                     DEFAULT_CACHE_MAX_BYTES_BUFFERING)))  # fmt: skip
        self.cache = cache
        self.processor_context = ProcessorContextImpl(
            task_id, self, config, record_collector, state_mgr, cache
        )
        # A queue for each partition, read by the source node of the partition's topic; a record its
        # deserializers cannot read goes to the deserialization exception handler (Differs names its
        # version), told the task through the context.
        handler = default_deserialization_exception_handler(config)
        partition_queues = {
            tp: RecordQueue(tp, topology.source(tp.topic), handler, self.processor_context)
            for tp in partitions
        }
        self.partition_group = PartitionGroup(partition_queues, _timestamp_extractor(config))

        self._initialize_offset_limits()
        log.info("%s Initializing state stores", self.log_prefix)
        topology.initialize_state_stores(self.processor_context)
        log.info("%s Initializing processor nodes of the topology", self.log_prefix)
        for node in topology.processors():
            self.processor_context.set_current_node(node)
            try:
                node.init(self.processor_context)
            finally:
                self.processor_context.set_current_node(None)
        self.processor_context.set_initialized()

    def _initialize_offset_limits(self) -> None:
        """A table's store restores from its source topic up to the task's committed offset there
        (0 if none: the task reads the topic from the start and fills the store itself)."""
        table_topics = set(self.topology.source_store_to_source_topic.values())
        for partition in sorted(self.partitions):
            if partition.topic in table_topics:
                committed = self.consumer.committed(partition)
                self.state_mgr.put_offset_limit(partition, 0 if committed is None else committed.offset)

    # -- the stream thread's calls ---------------------------------------------------------------------

    def add_records(self, partition: TopicPartition, records: list[ConsumerRecord]) -> int:
        """Buffer what the consumer fetched for ``partition``; pause it if its queue is over the limit."""
        queue_size = self.partition_group.add_raw_records(partition, records)
        log.debug("%s Added records into the buffered queue of partition %s, new queue size is %d",
                  self.log_prefix, partition, queue_size)  # fmt: skip
        # Back-pressure: stop fetching a partition that is far ahead of the others in the queues.
        if queue_size > self.max_buffered_size:
            self.consumer.pause(partition)
        return queue_size

    # --8<-- [start:process]
    def process(self) -> bool:
        """Process one record, if any is buffered; return whether one was (0.11's answer, which the
        thread's loop counts; 0.10.1 returned how many were still buffered)."""
        record = self.partition_group.next_record(self.record_info)
        if record is None:
            return False
        source = self.record_info.node()
        partition = self.record_info.partition()
        try:
            self._update_processor_context(_record_context(record), source)
            source.process(record.key(), record.value.value)
            # The offset is remembered only now that the record has gone through the whole graph.
            self.consumed_offsets[partition] = record.offset()
            self.commit_offset_needed = True
            # The queue has come back down to the limit: fetch the partition again.
            if self.record_info.queue.size() == self.max_buffered_size:
                self.consumer.resume(partition)
        except KafkaException as e:
            raise StreamsException(
                f"Exception caught in process. taskId={self.id}, processor={source.name}, "
                f"topic={record.topic()}, partition={record.partition()}, offset={record.offset()}"
            ) from e
        finally:
            self._update_processor_context(None, None)
        return True

    # --8<-- [end:process]

    # --8<-- [start:maybe_punctuate]
    def maybe_punctuate(self) -> bool:
        """Fire the punctuations due by stream time; False until every partition has had a record."""
        timestamp = self.partition_group.timestamp()
        # Not enough data yet to know the stream time: some partition has never had a record.
        if timestamp == NOT_KNOWN:
            return False
        return self.punctuation_queue.may_punctuate(timestamp, self)

    # --8<-- [end:maybe_punctuate]

    def punctuate(self, node: ProcessorNode, timestamp: int) -> None:
        """Call ``node``'s processor's ``punctuate`` (the ``Punctuator`` the queue fires through)."""
        if self.processor_context.current_node is not None:
            raise RuntimeError(f"{self.log_prefix} Current node is not null")
        # A punctuation has no record: its context names no topic and carries the stream time.
        self._update_processor_context(ProcessorRecordContext(timestamp, -1, -1, NONEXIST_TOPIC), node)
        log.debug("%s Punctuating processor %s with timestamp %d", self.log_prefix, node.name, timestamp)
        try:
            node.processor.punctuate(timestamp)
        except KafkaException as e:
            raise StreamsException(
                f"Exception caught in punctuate. taskId={self.id} processor={node.name}"
            ) from e
        finally:
            self._update_processor_context(None, None)

    # --8<-- [start:commit]
    def commit(self, start_new_transaction: bool = True) -> None:
        """Flush the stores, flush the collector, then commit the consumed offsets (in that order)."""
        log.debug("%s Committing its state", self.log_prefix)
        # 1) the stores, their caches first: the cached updates go to the changelogs and downstream
        self.state_mgr.flush()
        # 2) what the sinks and the changelogs sent, acknowledged (under exactly_once, in the transaction)
        self.record_collector.flush()
        # 3) the input offsets
        self.commit_offsets(start_new_transaction)

    # --8<-- [end:commit]

    # --8<-- [start:commit_offsets]
    def commit_offsets(self, start_new_transaction: bool = True) -> None:
        """Commit the consumed offsets: through the consumer (at-least-once), or into the task's
        transaction, which then commits (exactly_once); a new one begins unless the task is closing."""
        if self.commit_offset_needed:
            # The next offset to read: the last processed + 1.
            offsets = {tp: OffsetAndMetadata(offset + 1) for tp, offset in self.consumed_offsets.items()}
            if self.eos_enabled:
                self.producer.send_offsets_to_transaction(offsets, self.application_id)
                self.producer.commit_transaction()
                self.transaction_in_flight = False
                if start_new_transaction:
                    self.producer.begin_transaction()
                    self.transaction_in_flight = True
            else:
                self.consumer.commit_sync(offsets)
            self.commit_offset_needed = False
        elif self.eos_enabled and not start_new_transaction and self.transaction_in_flight:
            # Closing with nothing consumed since the last commit: what punctuations sent still commits.
            self.producer.commit_transaction()
            self.transaction_in_flight = False
        self.commit_requested = False

    # --8<-- [end:commit_offsets]

    def close_producer(self) -> None:
        """Exactly_once: close the task's producer, first aborting a transaction that did not commit
        (if the producer was fenced, the coordinator has aborted it already)."""
        if not self.eos_enabled:
            return
        try:
            if self.transaction_in_flight:
                self.producer.abort_transaction()
        except KafkaException:
            log.info("%s Could not abort the open transaction; the coordinator aborts it", self.log_prefix,
                     exc_info=True)  # fmt: skip
        finally:
            self.transaction_in_flight = False
            self.producer.close()

    def commit_needed(self) -> bool:
        """Whether a processor asked for a commit (``context.commit()``) since the last one."""
        return self.commit_requested

    def need_commit(self) -> None:
        self.commit_requested = True

    def schedule(self, interval: int) -> None:
        node = self.processor_context.current_node
        if node is None:
            raise RuntimeError(f"{self.log_prefix} Current node is null")
        self.punctuation_queue.schedule(PunctuationSchedule(node, interval))

    def close(self) -> None:
        """Close every processor, even if one raises (the last error is raised after, as Kafka's),
        and forget the consumed offsets. The thread's shutdown calls ``close_topology`` instead: it
        commits the offsets after the stores are flushed and closed."""
        self.close_topology()
        self.consumed_offsets.clear()

    def close_topology(self) -> None:
        """Close every processor (Kafka 0.11's ``closeTopology``), keeping the consumed offsets: under
        exactly_once the task's last transaction commits them after its processors have closed."""
        log.debug("%s Closing processor topology", self.log_prefix)
        self.partition_group.close()
        exception = None
        for node in self.topology.processors():
            self.processor_context.set_current_node(node)
            try:
                node.close()
            except Exception as e:
                exception = e
            finally:
                self.processor_context.set_current_node(None)
        if exception is not None:
            raise exception

    def close_state_manager(self) -> None:
        """Close the stores, giving the state manager the collector's acknowledged offsets (AbstractTask's).
        Under exactly_once, no checkpoint while a transaction is open: its writes may yet be aborted."""
        committed = not (self.eos_enabled and self.transaction_in_flight)
        self.state_mgr.close(self.record_collector.offsets(), write_checkpoint=committed)

    def get_store(self, name: str) -> Any:
        return self.state_mgr.get_store(name)

    def _update_processor_context(
        self, record_context: ProcessorRecordContext | None, node: ProcessorNode | None
    ) -> None:
        self.processor_context.set_record_context(record_context)
        self.processor_context.set_current_node(node)

    def __repr__(self) -> str:
        return f"StreamsTask taskId:{self.id}\n\t\t\t{self.topology!r}"


def _record_context(record: StampedRecord) -> ProcessorRecordContext:
    return ProcessorRecordContext(record.timestamp, record.offset(), record.partition(), record.topic())


def _timestamp_extractor(config: dict[str, Any]) -> TimestampExtractor:
    """``timestamp.extractor``: an extractor, or a class of one; 0.10.1's default reads the record's timestamp."""
    extractor = config.get(TIMESTAMP_EXTRACTOR_CLASS_CONFIG, ConsumerRecordTimestampExtractor)
    return extractor() if isinstance(extractor, type) else extractor
