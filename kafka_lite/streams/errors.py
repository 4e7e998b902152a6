"""The errors Kafka Streams raises: a failure while processing, and a topology that cannot be built.

Mirrors: org.apache.kafka.streams.errors.StreamsException, TopologyBuilderException,
         ProcessorStateException, InvalidStateStoreException and LockException
         (streams/src/main/java/org/apache/kafka/streams/errors/, Kafka 0.10.1 and 0.11.0)
Book:    chapter 9, 9.1.2 (building the topology), 9.1.3 (a task processing records), 9.1.4 (state)

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


class ProcessorStateException(StreamsException):
    """A state store or its directory could not be opened, read or written."""


class InvalidStateStoreException(StreamsException):
    """A store was used while closed (or not yet initialised)."""


class LockException(StreamsException):
    """A task's state directory is locked by another instance or thread."""


class TaskAssignmentException(StreamsException):
    """Assignment data that cannot be read, or a task that finds no client (Kafka's
    ``TaskAssignmentException``)."""
