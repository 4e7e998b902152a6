"""A store's key and value serdes, bound to its changelog topic.

Mirrors: org.apache.kafka.streams.state.StateSerdes
         (streams/src/main/java/org/apache/kafka/streams/state/StateSerdes.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4

The topic is passed to every ``serialize``/``deserialize`` because a serde may depend on it (a
schema registry's serde looks the schema up by topic); the store's topic is its changelog's.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.serialization import Serde


class StateSerdes:
    def __init__(self, topic: str, key_serde: Serde, value_serde: Serde) -> None:
        self.topic = topic
        self.key_serde = key_serde
        self.value_serde = value_serde
        self._key_serializer = key_serde.serializer()
        self._key_deserializer = key_serde.deserializer()
        self._value_serializer = value_serde.serializer()
        self._value_deserializer = value_serde.deserializer()

    def raw_key(self, key: Any) -> bytes:
        return self._key_serializer.serialize(self.topic, key)

    def raw_value(self, value: Any) -> bytes | None:
        return self._value_serializer.serialize(self.topic, value)

    def key_from(self, raw_key: bytes) -> Any:
        return self._key_deserializer.deserialize(self.topic, raw_key)

    def value_from(self, raw_value: bytes | None) -> Any:
        return self._value_deserializer.deserialize(self.topic, raw_value)
