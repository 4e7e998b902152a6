"""The errors a state store raises.

Mirrors: org.apache.kafka.streams.errors.StreamsException, ProcessorStateException,
         InvalidStateStoreException, LockException
         (streams/src/main/java/org/apache/kafka/streams/errors/, Kafka 0.11.0)
Book:    chapter 9, 9.1.3
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException


class StreamsException(KafkaException):
    """Something went wrong inside Kafka Streams (the base of its errors)."""


class ProcessorStateException(StreamsException):
    """A state store or its directory could not be opened, read or written."""


class InvalidStateStoreException(StreamsException):
    """A store was used while closed (or not yet initialised)."""


class LockException(StreamsException):
    """A task's state directory is locked by another instance or thread."""
