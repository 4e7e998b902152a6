"""The typed face of a key-value store: keys and values through the store's serdes, bytes below.

Mirrors: org.apache.kafka.streams.state.internals.MeteredKeyValueStore
         (streams/src/main/java/.../state/internals/MeteredKeyValueStore.java) as Kafka 1.0 shapes it,
         where it is the outermost layer and turns typed keys into bytes for the layers under it;
         in 0.11 that job is done by ``ChangeLoggingKeyValueStore`` and ``SerializedKeyValueIterator``
Book:    chapter 9, 9.1.4
Differs: no sensors: the name is kept because this is the layer Kafka meters.

Why 1.0's layering: with every store kept as bytes, one class serializes for all of them (in memory,
RocksDB, logged or not), and the change-logging layer under it sends the very bytes the store keeps.
0.11 reaches the same stack only for logged or cached stores and lets an unlogged ``RocksDBStore``
serialize for itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.serialization import Serde
from kafka_lite.streams.state.internals.wrapped_state_store import WrappedStateStore
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator, KeyValueStore
from kafka_lite.streams.state.state_serdes import StateSerdes


class SerializedKeyValueIterator(KeyValueIterator[Any, Any]):
    """A bytes iterator's entries, deserialized (Kafka's ``SerializedKeyValueIterator``)."""

    def __init__(self, bytes_iterator: KeyValueIterator[bytes, bytes], serdes: StateSerdes) -> None:
        self._bytes_iterator = bytes_iterator
        self._serdes = serdes

    def __next__(self) -> KeyValue:
        return self._entry(*next(self._bytes_iterator))

    def _entry(self, key: bytes, value: bytes) -> KeyValue:
        return KeyValue(self._serdes.key_from(key), self._serdes.value_from(value))

    def close(self) -> None:
        self._bytes_iterator.close()


class MeteredKeyValueStore(WrappedStateStore, KeyValueStore[Any, Any]):
    def __init__(self, inner: KeyValueStore[bytes, bytes], key_serde: Serde, value_serde: Serde) -> None:
        super().__init__(inner)
        self.inner: KeyValueStore[bytes, bytes] = inner
        self._key_serde = key_serde
        self._value_serde = value_serde
        self.serdes: StateSerdes | None = None

    def init(self, context: Any, root: StateStore) -> None:
        topic = store_changelog_topic(context.application_id(), self.inner.name)
        self.serdes = StateSerdes(topic, self._key_serde, self._value_serde)
        self.inner.init(context, root)

    def get(self, key: Any) -> Any:
        return self.serdes.value_from(self.inner.get(self.serdes.raw_key(key)))

    def put(self, key: Any, value: Any) -> None:
        self.inner.put(self.serdes.raw_key(key), self.serdes.raw_value(value))

    def put_if_absent(self, key: Any, value: Any) -> Any:
        raw = self.inner.put_if_absent(self.serdes.raw_key(key), self.serdes.raw_value(value))
        return self.serdes.value_from(raw)

    def put_all(self, entries: Iterable[KeyValue | tuple[Any, Any]]) -> None:
        self.inner.put_all([KeyValue(self.serdes.raw_key(k), self.serdes.raw_value(v)) for k, v in entries])

    def delete(self, key: Any) -> Any:
        return self.serdes.value_from(self.inner.delete(self.serdes.raw_key(key)))

    def range(self, from_key: Any, to_key: Any) -> KeyValueIterator[Any, Any]:
        raw_range = self.inner.range(self.serdes.raw_key(from_key), self.serdes.raw_key(to_key))
        return SerializedKeyValueIterator(raw_range, self.serdes)

    def all(self) -> KeyValueIterator[Any, Any]:
        return SerializedKeyValueIterator(self.inner.all(), self.serdes)

    def approximate_num_entries(self) -> int:
        return self.inner.approximate_num_entries()
