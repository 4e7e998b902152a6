"""Where records leave a topology: the node that hands them to the task's record collector.

Mirrors: org.apache.kafka.streams.processor.internals.SinkNode
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/SinkNode.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (source, processor and sink nodes)
Differs: a missing serializer means the key or value must already be bytes (as kafka_lite's
         producer requires); Kafka falls back to the config's default serdes. A serializer is a
         callable ``object -> bytes`` or an object with Kafka's ``serialize(topic, data)``.

The record goes out with the timestamp of the record being processed (``context.timestamp()``),
so a result carries the time of the input that caused it; the partition is the ``partitioner``'s
choice (an object with Kafka's ``StreamPartitioner.partition(key, value, num_partitions)``) or,
without one, the producer's (murmur2 of the key bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_lite.producer.serialization import check_serializer
from kafka_lite.streams.processor.internals.processor_node import ProcessorNode

if TYPE_CHECKING:
    from kafka_lite.streams.processor.internals.processor_context_impl import ProcessorContextImpl


class SinkNode(ProcessorNode):
    """Kafka's ``SinkNode``: writes every record it receives to one topic; has no children."""

    def __init__(
        self,
        name: str,
        topic: str,
        key_serializer: Any = None,
        value_serializer: Any = None,
        partitioner: Any = None,
    ) -> None:
        super().__init__(name)
        self.topic = topic
        self.key_serializer = check_serializer("key_serializer", key_serializer)
        self.value_serializer = check_serializer("value_serializer", value_serializer)
        self.partitioner = partitioner
        self.context: ProcessorContextImpl | None = None

    def add_child(self, child: ProcessorNode) -> None:
        raise NotImplementedError("sink node does not allow addChild")

    def init(self, context: ProcessorContextImpl) -> None:
        self.context = context

    def process(self, key: Any, value: Any) -> None:
        self.context.record_collector().send(
            self.topic,
            key,
            value,
            timestamp=self.context.timestamp(),
            key_serializer=self.key_serializer,
            value_serializer=self.value_serializer,
            partitioner=self.partitioner,
        )

    def close(self) -> None:
        pass  # nothing to release: the collector belongs to the task

    def __repr__(self) -> str:
        return f"{super().__repr__()}topic:{self.topic}"
