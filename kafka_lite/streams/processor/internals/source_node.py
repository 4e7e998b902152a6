"""Where records enter a topology: the node that deserializes a source topic's keys and values.

Mirrors: org.apache.kafka.streams.processor.internals.SourceNode
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/SourceNode.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (source, processor and sink nodes)
Differs: a missing deserializer leaves the bytes as they are (kafka-python's convention, as
         kafka_lite's consumer does); Kafka falls back to the ``default.key.serde`` and
         ``default.value.serde`` of the config. A deserializer is a callable ``bytes -> object``,
         or an object with Kafka's ``deserialize(topic, data)``.

A source node has no processor of its own: its ``process`` forwards the record to its children.
The ``RecordQueue`` of each partition calls its ``deserialize_key``/``deserialize_value`` as records
are buffered, so a record that cannot be read fails when it arrives, naming its offset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_lite.consumer.deserialization import check_deserializer
from kafka_lite.streams.processor.internals.processor_node import ProcessorNode

if TYPE_CHECKING:
    from kafka_lite.streams.processor.processor_context import ProcessorContext


class SourceNode(ProcessorNode):
    """Kafka's ``SourceNode``: reads one or more topics, forwards each record to its children."""

    def __init__(
        self, name: str, topics: list[str], key_deserializer: Any = None, value_deserializer: Any = None
    ) -> None:
        super().__init__(name)
        self.topics = list(topics)
        self.key_deserializer = check_deserializer("key_deserializer", key_deserializer)
        self.value_deserializer = check_deserializer("value_deserializer", value_deserializer)
        self.context: ProcessorContext | None = None

    def deserialize_key(self, topic: str, data: bytes | None) -> Any:
        return data if self.key_deserializer is None or data is None else self.key_deserializer(data)

    def deserialize_value(self, topic: str, data: bytes | None) -> Any:
        return data if self.value_deserializer is None or data is None else self.value_deserializer(data)

    def init(self, context: ProcessorContext) -> None:
        self.context = context

    def process(self, key: Any, value: Any) -> None:
        self.context.forward(key, value)

    def close(self) -> None:
        pass  # nothing to release: a source has no processor

    def __repr__(self) -> str:
        return f"{super().__repr__()}topics: [{','.join(self.topics)}] "
