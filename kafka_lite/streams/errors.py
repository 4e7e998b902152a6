"""The errors Kafka Streams raises: a failure while processing, and a topology that cannot be built.

Mirrors: org.apache.kafka.streams.errors.StreamsException and TopologyBuilderException
         (streams/src/main/java/org/apache/kafka/streams/errors/, Kafka 0.10.1)
Book:    chapter 9, 9.1.1 (building the topology), 9.1.2 (a task processing records)

A ``TopologyBuilderException`` is raised while the topology is described, before any record
flows, and its message names the node or store at fault, prefixed as Kafka prefixes it
("Invalid topology building: ..."). A ``StreamsException`` wraps whatever goes wrong while a task
runs (a key that cannot be deserialized, a processor that fails to initialise), naming the task,
the node and the record's place so that the log line says where to look.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException


class StreamsException(KafkaException):
    """A failure inside Kafka Streams' runtime (Kafka's ``StreamsException``)."""


class TopologyBuilderException(StreamsException):
    """A topology described wrongly: a duplicate name, an unknown parent or store, a topic sourced twice."""

    def __init__(self, message: str | None = None) -> None:
        # Kafka's constructor prefixes every message the same way.
        super().__init__("Invalid topology building" + ("" if message is None else ": " + message))
