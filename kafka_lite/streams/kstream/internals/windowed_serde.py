"""The key serde of a windowed table's output: the inner key's bytes, then the window start.

Mirrors: org.apache.kafka.streams.kstream.internals.WindowedSerializer and WindowedDeserializer
         (streams/src/main/java/.../kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.4 (windows)

::

    | inner key's bytes (n) | window start (int64, big-endian) |

Only the start is written, so the deserializer cannot know the window's end: it reads an
``UnlimitedWindow(start)``, as Kafka's does. A reader that knows the window size adds it.
"""

from __future__ import annotations

import struct

from kafka_lite.streams.kstream.windows import UnlimitedWindow, Windowed
from kafka_lite.streams.serialization import Deserializer, Serde, Serializer

TIMESTAMP_SIZE = 8
_START = struct.Struct(">q")


class WindowedSerializer(Serializer[Windowed]):
    def __init__(self, inner: Serializer) -> None:
        self.inner = inner

    def serialize(self, topic: str | None, data: Windowed | None) -> bytes | None:
        if data is None:
            return None
        return self.inner.serialize(topic, data.key) + _START.pack(data.window.start)


class WindowedDeserializer(Deserializer[Windowed]):
    def __init__(self, inner: Deserializer) -> None:
        self.inner = inner

    def deserialize(self, topic: str | None, data: bytes | None) -> Windowed | None:
        if data is None:
            return None
        start = _START.unpack_from(data, len(data) - TIMESTAMP_SIZE)[0]
        return Windowed(self.inner.deserialize(topic, data[:-TIMESTAMP_SIZE]), UnlimitedWindow(start))


def windowed_serde(inner: Serde) -> Serde[Windowed]:
    """The serde of ``Windowed`` keys over ``inner``, the serde of the keys themselves."""
    return Serde(WindowedSerializer(inner.serializer()), WindowedDeserializer(inner.deserializer()))
