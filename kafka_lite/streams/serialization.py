"""Serdes: a serializer and a deserializer for one type, the way Kafka Streams names a key or value format.

Mirrors: org.apache.kafka.common.serialization.Serde, Serdes, Serializer, Deserializer,
         LongSerializer/LongDeserializer, IntegerSerializer/IntegerDeserializer,
         StringSerializer/StringDeserializer, ByteArraySerializer/ByteArrayDeserializer
         (clients/src/main/java/org/apache/kafka/common/serialization/, Kafka 0.11.0)
Book:    chapter 9, 9.1 (a topology's sources and sinks name their serdes); 9.1.4 (a store's serdes)
Differs: ``Serdes.Bytes()`` is ``Serdes.ByteArray()``: Kafka's ``Bytes`` wraps a ``byte[]`` only to
         give it ``equals``/``hashCode``/``compareTo``, which Python's ``bytes`` already has.
         ``Serdes.Json()`` is ours (Kafka ships a JSON serde only in Connect and the examples).
         No ``configure(configs, is_key)``: none of these serdes takes a setting but the string's
         encoding, which is a constructor argument.

Streams works on bytes twice over: a record arrives as bytes and leaves as bytes, and a state store
keeps bytes (RocksDB knows nothing else), ordered by those bytes. So a serde decides more than the
format on the wire: ``Serdes.Long()`` writes 8 bytes big-endian, so non-negative longs sort in a
store as numbers do; ``Serdes.String()`` sorts as UTF-8 bytes, which for ASCII is alphabetical.

Every serializer here has Kafka's ``serialize(topic, data)``, which the producer accepts as its
``key_serializer``/``value_serializer`` (``kafka_lite.producer.serialization.check_serializer``), so
one serde writes the same bytes through a ``KafkaProducer`` and through a Streams sink.
"""

from __future__ import annotations

import json
import struct
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

from kafka_lite.common.errors import IllegalArgumentException, SerializationException

T = TypeVar("T")


class Serializer(ABC, Generic[T]):
    """``T`` to bytes; None stays None (a null value is a delete in a changelog or a compacted topic)."""

    @abstractmethod
    def serialize(self, topic: str | None, data: T | None) -> bytes | None: ...

    def close(self) -> None:
        """Nothing to release; Kafka's interface has it, so a caller may call it."""


class Deserializer(ABC, Generic[T]):
    """Bytes back to ``T``; None stays None."""

    @abstractmethod
    def deserialize(self, topic: str | None, data: bytes | None) -> T | None: ...

    def close(self) -> None:
        """Nothing to release; Kafka's interface has it, so a caller may call it."""


class Serde(Generic[T]):
    """A serializer and the deserializer that reverses it (Kafka's ``Serde`` and its ``WrapperSerde``)."""

    def __init__(self, serializer: Serializer[T], deserializer: Deserializer[T]) -> None:
        self._serializer = serializer
        self._deserializer = deserializer

    def serializer(self) -> Serializer[T]:
        return self._serializer

    def deserializer(self) -> Deserializer[T]:
        return self._deserializer

    def close(self) -> None:
        self._serializer.close()
        self._deserializer.close()


class StringSerializer(Serializer[str]):
    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def serialize(self, topic: str | None, data: str | None) -> bytes | None:
        return None if data is None else data.encode(self.encoding)


class StringDeserializer(Deserializer[str]):
    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def deserialize(self, topic: str | None, data: bytes | None) -> str | None:
        if data is None:
            return None
        try:
            return bytes(data).decode(self.encoding)
        except UnicodeDecodeError as e:
            raise SerializationException(
                f"Error when deserializing byte[] to string due to unsupported encoding {self.encoding}: {e}"
            ) from e


class ByteArraySerializer(Serializer[bytes]):
    def serialize(self, topic: str | None, data: bytes | None) -> bytes | None:
        return None if data is None else bytes(data)


class ByteArrayDeserializer(Deserializer[bytes]):
    def deserialize(self, topic: str | None, data: bytes | None) -> bytes | None:
        return None if data is None else bytes(data)


class _FixedWidthSerializer(Serializer[Any]):
    """A number as ``FORMAT.size`` big-endian bytes, as Java's ``ByteBuffer.putLong``/``putInt`` write it."""

    FORMAT: struct.Struct
    TYPE_NAME: str

    def serialize(self, topic: str | None, data: Any) -> bytes | None:
        if data is None:
            return None
        try:
            return self.FORMAT.pack(data)
        except struct.error as e:
            # Java cannot hold an out-of-range number in a long or an int; Python can, so say so here
            # rather than write bytes that would read back as a different number.
            raise SerializationException(
                f"Can't serialize {data!r} as a {self.TYPE_NAME} ({self.FORMAT.size} bytes): {e}"
            ) from e


class _FixedWidthDeserializer(Deserializer[Any]):
    """``FORMAT.size`` big-endian bytes back to a number; any other length is an error, worded as Kafka's."""

    FORMAT: struct.Struct

    def deserialize(self, topic: str | None, data: bytes | None) -> Any:
        if data is None:
            return None
        if len(data) != self.FORMAT.size:
            raise SerializationException(
                f"Size of data received by {type(self).__name__} is not {self.FORMAT.size}"
            )
        return self.FORMAT.unpack(data)[0]


_LONG, _INT, _DOUBLE = struct.Struct(">q"), struct.Struct(">i"), struct.Struct(">d")


class LongSerializer(_FixedWidthSerializer):
    """A signed 64-bit integer as 8 bytes, big-endian (1 -> ``00 00 00 00 00 00 00 01``)."""

    FORMAT, TYPE_NAME = _LONG, "long"


class LongDeserializer(_FixedWidthDeserializer):
    FORMAT = _LONG


class IntegerSerializer(_FixedWidthSerializer):
    """A signed 32-bit integer as 4 bytes, big-endian."""

    FORMAT, TYPE_NAME = _INT, "int"


class IntegerDeserializer(_FixedWidthDeserializer):
    FORMAT = _INT


class DoubleSerializer(_FixedWidthSerializer):
    """An IEEE 754 double as 8 bytes, big-endian (Java's ``Double.doubleToLongBits``, then as a long)."""

    FORMAT, TYPE_NAME = _DOUBLE, "double"


class DoubleDeserializer(_FixedWidthDeserializer):
    FORMAT = _DOUBLE


class JsonSerializer(Serializer[Any]):
    """Any JSON value as compact UTF-8 JSON, keys sorted so equal values give equal bytes (ours).

    Equal bytes matter for a key: a store finds a key by its bytes and the partitioner hashes them,
    so ``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` must serialize alike to be the same key.
    """

    def serialize(self, topic: str | None, data: Any) -> bytes | None:
        if data is None:
            return None
        try:
            return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        except (TypeError, ValueError) as e:
            raise SerializationException(f"Can't serialize {type(data).__name__} as JSON: {e}") from e


class JsonDeserializer(Deserializer[Any]):
    def deserialize(self, topic: str | None, data: bytes | None) -> Any:
        if data is None:
            return None
        try:
            return json.loads(bytes(data))
        except ValueError as e:
            raise SerializationException(f"Can't deserialize {len(data)} bytes as JSON: {e}") from e


class Serdes:
    """The built-in serdes, by type (Kafka's ``Serdes``; method names kept as Kafka spells them)."""

    @staticmethod
    def serde_from(serializer: Serializer[T], deserializer: Deserializer[T]) -> Serde[T]:
        """A serde of a serializer and a deserializer written apart (Kafka's ``serdeFrom``)."""
        if serializer is None:
            raise IllegalArgumentException("serializer must not be null")
        if deserializer is None:
            raise IllegalArgumentException("deserializer must not be null")
        return Serde(serializer, deserializer)

    @staticmethod
    def String(encoding: str = "utf-8") -> Serde[str]:
        return Serde(StringSerializer(encoding), StringDeserializer(encoding))

    @staticmethod
    def ByteArray() -> Serde[bytes]:
        return Serde(ByteArraySerializer(), ByteArrayDeserializer())

    @staticmethod
    def Bytes() -> Serde[bytes]:
        """Kafka's ``Bytes`` serde; in Python the same as ``ByteArray()`` (see the module's Differs)."""
        return Serdes.ByteArray()

    @staticmethod
    def Long() -> Serde[int]:
        return Serde(LongSerializer(), LongDeserializer())

    @staticmethod
    def Integer() -> Serde[int]:
        return Serde(IntegerSerializer(), IntegerDeserializer())

    @staticmethod
    def Double() -> Serde[float]:
        return Serde(DoubleSerializer(), DoubleDeserializer())

    @staticmethod
    def Json() -> Serde[Any]:
        """Ours, not Kafka's: JSON values as compact UTF-8 (see ``JsonSerializer``)."""
        return Serde(JsonSerializer(), JsonDeserializer())
