"""Turning keys and values into bytes before they are partitioned and batched.

Mirrors: org.apache.kafka.common.serialization (Serializer, StringSerializer, ByteArraySerializer)
         and org.apache.kafka.common.errors.SerializationException (clients/src/main/java/..., Kafka 0.11.0)
Book:    chapter 2, 2.1.1 (send serializes the key and value first)
Differs: a serializer is any callable ``value -> bytes`` (kafka-python's shape); Kafka's
         ``serialize(topic, data)`` objects are accepted too. Without a serializer a key or value
         must already be bytes.

The producer serializes before it chooses the partition: the default partitioner hashes the key's
*bytes*, which is why two producers in different languages agree on where a key goes only when they
serialize it the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.common.errors import ConfigException, SerializationException

Serializer = Callable[[Any], bytes | None]
_BYTES = (bytes, bytearray, memoryview)


class StringSerializer:
    """``str`` to bytes in ``encoding`` (Kafka's ``StringSerializer``, ``serializer.encoding``); None stays None."""

    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def __call__(self, data: str | None) -> bytes | None:
        return None if data is None else data.encode(self.encoding)


def check_serializer(name: str, serializer: object) -> Serializer | None:
    """The serializer as a ``value -> bytes`` callable; a config error naming ``name`` if it is neither
    a callable nor an object with Kafka's ``serialize(topic, data)``."""
    if serializer is None:
        return None
    serialize = getattr(serializer, "serialize", None)
    if callable(serialize):
        return lambda data: serialize(None, data)
    if callable(serializer):
        return serializer
    raise ConfigException(
        name, serializer, "Expected a callable taking the value and returning bytes, e.g. str.encode"
    )


def serialize(what: str, topic: str, serializer: Serializer | None, data: object) -> bytes | None:
    """``data`` as bytes (``what`` is "key" or "value", for the error message)."""
    if serializer is not None:
        try:
            data = serializer(data)
        except Exception as e:
            raise SerializationException(
                f"Can't serialize the {what} of a record for topic {topic}: "
                f"{type(e).__name__}: {e} (raised by {what}_serializer)"
            ) from e
    if data is None or type(data) is bytes:
        return data
    if isinstance(data, _BYTES):
        return bytes(data)
    source = f"{what}_serializer returned" if serializer is not None else f"the {what} is"
    raise SerializationException(
        f"Can't send the {what} of a record for topic {topic}: {source} {type(data).__name__}, not bytes"
        + ("" if serializer is not None else f"; pass {what}_serializer (e.g. str.encode) to convert it")
    )
