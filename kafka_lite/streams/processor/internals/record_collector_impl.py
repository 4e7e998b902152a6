"""The record collector over a real producer: serialize, pick the partition, send, remember the offsets.

Mirrors: org.apache.kafka.streams.processor.internals.RecordCollectorImpl
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/RecordCollectorImpl.java,
         Kafka 0.11.0)
Book:    chapter 9, 9.1.3 (a task's output), 9.1.4 (changelog records)
Differs: no retry on a send that times out: kafka_lite's ``KafkaProducer.send`` fails the returned
         future rather than raising, so the failure surfaces where Kafka's 0.11 surfaces a failed
         callback, at the next ``send``, ``flush`` or ``close``.

Sending is asynchronous: ``send`` returns at once, and the producer's callback records the offset
(or the first error) later, on the producer's I/O thread. That is why ``flush`` matters at commit
time: the task commits its input offsets only after ``flush`` has seen its output acknowledged, so
a crash never leaves input committed whose output was lost (at-least-once).
"""

from __future__ import annotations

import logging
from typing import Any

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.future_record_metadata import RecordMetadata
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.producer.serialization import serialize
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.record_collector import RecordCollector

log = logging.getLogger(__name__)


class RecordCollectorImpl(RecordCollector):
    """Kafka's ``RecordCollectorImpl``: a task's collector over a ``KafkaProducer`` of bytes."""

    def __init__(self, producer: KafkaProducer, stream_task_id: str) -> None:
        self.producer = producer
        self._offsets: dict[TopicPartition, int] = {}
        self.log_prefix = f"task [{stream_task_id}]"
        self.send_exception: BaseException | None = None

    def send(
        self,
        topic: str,
        key: Any,
        value: Any,
        partition: int | None = None,
        timestamp: int | None = None,
        key_serializer: Any = None,
        value_serializer: Any = None,
        partitioner: Any = None,
    ) -> None:
        self._check_for_exception()
        key_bytes = serialize("key", topic, key_serializer, key)
        value_bytes = serialize("value", topic, value_serializer, value)
        if partition is None and partitioner is not None:
            partitions = self.producer.partitions_for(topic)
            if not partitions:
                raise StreamsException(
                    f"Could not get partition information for topic '{topic}'. "
                    "This can happen if the topic does not exist."
                )
            partition = partitioner.partition(key, value, len(partitions))
        # Kafka's producer.send(record, callback): the callback travels with the record in its batch.
        self.producer.send(
            topic,
            value_bytes,
            key_bytes,
            partition=partition,
            timestamp_ms=timestamp,
            callback=lambda metadata, exception: self._on_completion(topic, metadata, exception),
        )

    def _on_completion(
        self, topic: str, metadata: RecordMetadata | None, exception: BaseException | None
    ) -> None:
        """The producer callback (Kafka's anonymous ``Callback`` in ``send``): remember the offset, or
        keep the first error to raise at the next call; after an error no offset is recorded."""
        if exception is None:
            if self.send_exception is None:
                self._offsets[TopicPartition(metadata.topic, metadata.partition)] = metadata.offset
        elif self.send_exception is None:
            self.send_exception = exception
            log.error("%s Error sending record to topic %s. No more offsets will be recorded for this task "
                      "and the exception will eventually be thrown", self.log_prefix, topic, exc_info=exception)  # fmt: skip

    def _check_for_exception(self) -> None:
        if self.send_exception is not None:
            raise StreamsException(
                f"{self.log_prefix} exception caught when producing"
            ) from self.send_exception

    def flush(self) -> None:
        log.debug("%s Flushing producer", self.log_prefix)
        self.producer.flush()
        self._check_for_exception()

    def close(self) -> None:
        log.debug("%s Closing producer", self.log_prefix)
        self.producer.close()
        self._check_for_exception()

    def offsets(self) -> dict[TopicPartition, int]:
        return self._offsets
