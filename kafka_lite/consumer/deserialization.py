"""Turning the fetched key and value bytes back into objects.

Mirrors: org.apache.kafka.common.serialization (Deserializer, StringDeserializer,
         ByteArrayDeserializer) (clients/src/main/java/org/apache/kafka/common/serialization/,
         Kafka 0.11.0)
Book:    chapter 4, 4.1.5 (the fetcher deserializes each record's key and value)
Differs: a deserializer is any callable ``bytes -> value`` (kafka-python's shape), the counterpart of
         the producer's serializers; Kafka's ``deserialize(topic, data)`` objects are accepted too
         (called with ``topic`` None, as the producer's ``serialize``).
         Without a deserializer the consumer returns the bytes as they are (Kafka's
         ``ByteArrayDeserializer``). Kafka has one ``SerializationException`` in
         ``common.errors`` for both directions; the producer's is its own module's, which the
         consumer's layer may not import, so the consumer's is declared here.

A null key or value (a record with no key, a tombstone) is ``None`` and never reaches the
deserializer, which then only ever sees bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.common.errors import ConfigException, SerializationException

__all__ = ["Deserializer", "SerializationException", "StringDeserializer", "check_deserializer"]

Deserializer = Callable[[bytes], Any]


class StringDeserializer:
    """Bytes to ``str`` in ``encoding`` (Kafka's ``StringDeserializer``, ``deserializer.encoding``)."""

    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def __call__(self, data: bytes) -> str:
        return bytes(data).decode(self.encoding)


def check_deserializer(name: str, deserializer: object) -> Deserializer | None:
    """The deserializer as a ``bytes -> value`` callable; a config error naming ``name`` if it is
    neither a callable nor an object with Kafka's ``deserialize(topic, data)``."""
    if deserializer is None:
        return None
    deserialize = getattr(deserializer, "deserialize", None)
    if callable(deserialize):
        return lambda data: deserialize(None, data)
    if callable(deserializer):
        return deserializer
    raise ConfigException(
        name, deserializer, "Expected a callable taking bytes and returning the value, e.g. bytes.decode"
    )
