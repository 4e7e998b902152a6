"""Run a topology in one call per input record, with no broker: pipe records in, read records out.

Mirrors: org.apache.kafka.streams.TopologyTestDriver
         (streams/test-utils/src/main/java/org/apache/kafka/streams/TopologyTestDriver.java, Kafka 1.1,
         KIP-247), over 0.10.1's task
Book:    chapter 9, 9.1.2-9.1.4 (a topology, its task, its stores, stepped record by record)
Differs: punctuation follows stream time only, as 0.10.1's task does: ``advance_wall_clock_time``
         moves the driver's ``MockTime`` (which a ``WallclockTimestampExtractor`` given that clock
         reads) but fires nothing; Kafka 1.1's driver also fires wall-clock punctuations, which 1.0
         introduced. ``pipe_input`` takes the key and value bytes directly (Kafka 1.1 takes a
         ``ConsumerRecord`` made by a ``ConsumerRecordFactory``). ``commit_after_each_record=False``
         leaves the commits to ``commit()``, so that many records can fall in one commit interval
         and the record cache be watched (Kafka's driver commits after each record).

What runs is the real ``StreamTask`` with the whole topology (every sub-topology in one task, as
Kafka 1.1's driver builds it), reading partitions ``0 .. partitions-1`` of every source topic. Only
its collaborators are stand-ins:

    pipe_input(topic, key, value, ts)
        --> a ConsumerRecord at the partition's next offset
        --> StreamTask.add_records, process (one record), maybe_punctuate, commit
                                   commit_sync, pause, resume --> DriverConsumer (remembers them)
    read_output(topic) <-- DriverProducer <-- RecordCollectorImpl <-- sink nodes (and logging stores)
    stores register    --> ProcessorStateManager --> MockConsumer (empty changelogs: nothing to restore)

Each ``pipe_input`` is one turn of a stream thread's loop with a commit after every record, so
after it returns, every output the record caused can be read and every store reflects it. The task
has a record cache of its own, ``cache.max.bytes.buffering`` in the config (10 MB by default), as
Kafka 1.1's driver gives it: a cached store forwards at the commit, one record per key updated. With
``commit_after_each_record=False`` the updates of many records gather in the cache until
``commit()`` (or an eviction, when the cache is full).

A record written to a topic the topology also reads (an internal repartition topic, or the topic of
a ``through``) is piped back in at once, as Kafka 1.1's driver does, and stays readable with
``read_output``: so a DSL aggregation after a ``group_by`` has counted the record when
``pipe_input`` returns, as if a broker sat between the repartition sink and its source.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

from kafka_lite.clients.metadata import PartitionInfo
from kafka_lite.common.record.constants import NO_TIMESTAMP, TimestampType
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import NULL_SIZE, ConsumerRecord
from kafka_lite.consumer.deserialization import check_deserializer
from kafka_lite.consumer.mock_consumer import MockConsumer
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.producer.default_partitioner import murmur2, to_positive
from kafka_lite.producer.future_record_metadata import (
    FutureRecordMetadata,
    ProduceRequestResult,
    RecordMetadata,
)
from kafka_lite.producer.producer_record import ProducerRecord
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl
from kafka_lite.streams.processor.internals.stream_task import StreamTask
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.state.internals.thread_cache import ThreadCache
from kafka_lite.streams.state.state_directory import StateDirectory
from kafka_lite.streams.streams_config import (
    CACHE_MAX_BYTES_BUFFERING_CONFIG,
    DEFAULT_CACHE_MAX_BYTES_BUFFERING,
)

APPLICATION_ID_CONFIG = "application.id"
STATE_DIR_CONFIG = "state.dir"


class DriverConsumer:
    """The consumer calls a task makes (``pause``, ``resume``, ``commit_sync``), remembered in memory
    (the part of Kafka's ``MockConsumer`` the driver needs)."""

    def __init__(self) -> None:
        self.committed_offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.paused_partitions: set[TopicPartition] = set()

    def commit_sync(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.committed_offsets.update(offsets)

    def committed(self, partition: TopicPartition) -> OffsetAndMetadata | None:
        return self.committed_offsets.get(partition)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused_partitions.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused_partitions.difference_update(partitions)

    def paused(self) -> set[TopicPartition]:
        return set(self.paused_partitions)


class DriverProducer:
    """A producer that keeps every record it is sent, acknowledged at once with offsets 0, 1, 2 ...
    per partition as a broker would give them (the part of Kafka's ``MockProducer`` with
    ``autoComplete`` that the driver needs). A record with no partition goes where the default
    partitioner puts a keyed record (murmur2 of the key), or to partition 0 without a key."""

    def __init__(self, num_partitions: int) -> None:
        self.num_partitions = num_partitions
        self.history: dict[str, deque[ProducerRecord]] = defaultdict(deque)
        self.unseen: deque[ProducerRecord] = deque()  # sent, not yet looked at by the driver
        self.next_offsets: dict[TopicPartition, int] = defaultdict(int)

    def partitions_for(self, topic: str) -> list[PartitionInfo]:
        return [PartitionInfo(topic, p, None, (), ()) for p in range(self.num_partitions)]

    def send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        callback: Callable[[RecordMetadata | None, BaseException | None], object] | None = None,
    ) -> FutureRecordMetadata:
        if partition is None:
            partition = 0 if key is None else to_positive(murmur2(key)) % self.num_partitions
        record = ProducerRecord(topic, value, key, partition, timestamp_ms)
        self.history[topic].append(record)
        self.unseen.append(record)
        tp = TopicPartition(topic, partition)
        result = ProduceRequestResult(tp)
        result.set(self.next_offsets[tp], NO_TIMESTAMP, None)
        result.done()
        self.next_offsets[tp] += 1
        future = FutureRecordMetadata(result, 0, timestamp_ms, None, _size(key), _size(value), NULL_SIZE)
        if callback is not None:
            callback(future.value(), None)  # MockProducer with autoComplete: completed as it is sent
        return future

    def flush(self) -> None:
        pass  # nothing is in flight: every send is acknowledged as it is made

    def close(self) -> None:
        pass


class TopologyTestDriver:
    """Kafka 1.1's ``TopologyTestDriver`` on kafka_lite's 0.10.1-shaped ``StreamTask``."""

    def __init__(
        self,
        builder: TopologyBuilder,
        config: dict[str, Any],
        initial_wall_clock_time_ms: int = 0,
        partitions: int = 1,
        time: MockTime | None = None,
        commit_after_each_record: bool = True,
    ) -> None:
        """``partitions``: how many partitions of each source topic the one task reads; ``time``: the
        driver's clock, by default a new ``MockTime`` at ``initial_wall_clock_time_ms``;
        ``commit_after_each_record``: False to commit only when ``commit()`` is called."""
        if APPLICATION_ID_CONFIG not in config:
            raise ValueError(f"Missing required configuration '{APPLICATION_ID_CONFIG}'")
        self.application_id = config[APPLICATION_ID_CONFIG]
        self.commit_after_each_record = commit_after_each_record
        self.time = MockTime(start_ms=initial_wall_clock_time_ms) if time is None else time
        builder.set_application_id(self.application_id)
        topology = builder.build(None)
        task_id = TaskId(0, 0)
        self.consumer = DriverConsumer()
        self.num_partitions = partitions
        self.producer = DriverProducer(partitions)
        self.partitions = [
            TopicPartition(t, p) for t in sorted(topology.source_topics()) for p in range(partitions)
        ]
        self.offsets = dict.fromkeys(self.partitions, 0)  # the next offset of each input partition
        # The real state manager, over an empty restore consumer (every changelog starts empty, as in
        # Kafka 1.1's driver) and, unless ``state.dir`` is given, a directory removed with the driver.
        self._closed = False
        self._temp_state_dir = tempfile.TemporaryDirectory(prefix="kafka-streams-")
        state_directory = StateDirectory(
            self.application_id, config.get(STATE_DIR_CONFIG, self._temp_state_dir.name), self.time
        )
        self.task = StreamTask(
            task_id,
            self.application_id,
            self.partitions,
            topology,
            self.consumer,
            RecordCollectorImpl(self.producer, str(task_id)),
            ProcessorStateManager(
                self.application_id,
                task_id,
                self.partitions,
                MockConsumer(),
                False,
                state_directory,
                topology.source_store_to_source_topic,
            ),
            config,
            cache=ThreadCache(
                "topology-test-driver",
                max(0, config.get(CACHE_MAX_BYTES_BUFFERING_CONFIG, DEFAULT_CACHE_MAX_BYTES_BUFFERING)),
            ),
        )

    def pipe_input(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        timestamp: int | None = None,
        partition: int = 0,
    ) -> None:
        """Feed one record, as the consumer would return it, and run the task's loop once over it.

        ``timestamp`` defaults to the driver's wall-clock time."""
        tp = TopicPartition(topic, partition)
        if tp not in self.offsets:
            raise StreamsException(
                f"{topic}-{partition} is not an input of this driver: its source topics are "
                f"{sorted({p.topic for p in self.partitions})}, with partitions 0 to {self.num_partitions - 1}"
            )
        self._pipe_record(tp, self.time.milliseconds() if timestamp is None else timestamp, key, value)

    def _pipe_record(
        self, tp: TopicPartition, timestamp: int, key: bytes | None, value: bytes | None
    ) -> None:
        record = _consumer_record(tp, self.offsets[tp], timestamp, key, value)
        self.offsets[tp] += 1
        self.task.add_records(tp, [record])
        self.task.process()
        self.task.maybe_punctuate()
        if self.commit_after_each_record:
            self.task.commit()
        self._capture_output_records()

    def commit(self) -> None:
        """Commit the task, as a stream thread does every ``commit.interval.ms``: its stores' caches
        flush, downstream and to the changelogs; what that writes to a source topic is piped in."""
        self.task.commit()
        self._capture_output_records()

    def _capture_output_records(self) -> None:
        """Pipe back what the record caused to be written to a source topic (Kafka 1.1's
        ``captureOutputRecords``), depth first: each such record is processed, with all it causes,
        before the next one is looked at."""
        output = list(self.producer.unseen)
        self.producer.unseen.clear()
        for record in output:
            tp = TopicPartition(record.topic, record.partition)
            if tp in self.offsets:
                self._pipe_record(tp, record.timestamp_ms, record.key, record.value)

    def read_output(
        self, topic: str, key_deserializer: Any = None, value_deserializer: Any = None
    ) -> ProducerRecord | None:
        """The next record written to ``topic``, its key and value deserialized (bytes without a
        deserializer), or None when there is no more."""
        captured = self.producer.history.get(topic)
        if not captured:
            return None
        record = captured.popleft()
        key_deserializer = check_deserializer("key_deserializer", key_deserializer)
        value_deserializer = check_deserializer("value_deserializer", value_deserializer)
        key = record.key if key_deserializer is None or record.key is None else key_deserializer(record.key)
        value = (
            record.value
            if value_deserializer is None or record.value is None
            else value_deserializer(record.value)
        )
        return ProducerRecord(record.topic, value, key, record.partition, record.timestamp_ms)

    def get_state_store(self, name: str) -> Any:
        """The task's store ``name`` (None if there is none), to assert on its contents."""
        return self.task.get_store(name)

    def advance_wall_clock_time(self, advance_ms: int) -> None:
        """Move the driver's clock. In 0.10.1 punctuation follows stream time, so this fires nothing."""
        self.time.advance(advance_ms)

    def close(self) -> None:
        """Close the processors, then the stores (as a stream thread closes a task), and remove the
        state directory; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.task.close()
        self.task.close_state_manager()
        self._temp_state_dir.cleanup()


def _consumer_record(
    tp: TopicPartition, offset: int, timestamp: int, key: bytes | None, value: bytes | None
) -> ConsumerRecord:
    return ConsumerRecord(
        topic=tp.topic,
        partition=tp.partition,
        leader_epoch=-1,
        offset=offset,
        timestamp=timestamp,
        timestamp_type=TimestampType.CREATE_TIME,
        key=key,
        value=value,
        headers=(),
        checksum=None,
        serialized_key_size=_size(key),
        serialized_value_size=_size(value),
        serialized_header_size=NULL_SIZE,
    )


def _size(data: bytes | None) -> int:
    return NULL_SIZE if data is None else len(data)
