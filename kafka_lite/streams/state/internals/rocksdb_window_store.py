"""The typed window store: keys, values and timestamps in, binary keys in time segments below.

Mirrors: org.apache.kafka.streams.state.internals.RocksDBWindowStore and WindowStoreIteratorWrapper
         (streams/src/main/java/.../state/internals/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: no key-range fetch. The record cache is a layer of its own, in front (``CachingWindowStore``).

``put`` serializes the key, appends the timestamp and the sequence number (``window_store_utils``)
and hands the binary key to the segmented store; ``fetch`` hands back ``KeyValue(timestamp, value)``.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.serialization import Serde
from kafka_lite.streams.state.internals import window_store_utils
from kafka_lite.streams.state.internals.metered_key_value_store import SerializedKeyValueIterator
from kafka_lite.streams.state.internals.wrapped_state_store import WrappedStateStore
from kafka_lite.streams.state.key_value_store import KeyValue
from kafka_lite.streams.state.state_serdes import StateSerdes
from kafka_lite.streams.state.window_store import WindowStore, WindowStoreIterator


class WindowStoreIteratorWrapper(SerializedKeyValueIterator):
    """Binary-keyed entries as ``KeyValue(timestamp, value)``, the value deserialized."""

    def _entry(self, binary_key: bytes, value: bytes) -> KeyValue:
        return KeyValue(
            window_store_utils.timestamp_from_binary_key(binary_key), self._serdes.value_from(value)
        )


class RocksDBWindowStore(WrappedStateStore, WindowStore[Any, Any]):
    def __init__(
        self,
        bytes_store: Any,
        key_serde: Serde,
        value_serde: Serde,
        retain_duplicates: bool,
        window_size: int,
    ) -> None:
        """``bytes_store`` is a ``RocksDBSegmentedBytesStore``, or its change-logging wrapper."""
        super().__init__(bytes_store)
        self.bytes_store = bytes_store
        self._key_serde = key_serde
        self._value_serde = value_serde
        self.retain_duplicates = retain_duplicates
        self.window_size = window_size
        self.seqnum = 0
        self._context: Any = None
        self.serdes: StateSerdes | None = None

    def init(self, context: Any, root: StateStore) -> None:
        self._context = context
        topic = store_changelog_topic(context.application_id(), self.bytes_store.name)
        self.serdes = StateSerdes(topic, self._key_serde, self._value_serde)
        self.bytes_store.init(context, root)

    def put(self, key: Any, value: Any, timestamp: int | None = None) -> None:
        if timestamp is None:
            timestamp = self._context.timestamp()
        self._maybe_update_seqnum_for_dups()
        binary_key = window_store_utils.to_binary_key(self.serdes.raw_key(key), timestamp, self.seqnum)
        self.bytes_store.put(binary_key, self.serdes.raw_value(value))

    def fetch(self, key: Any, time_from: int, time_to: int) -> WindowStoreIterator[int, Any]:
        bytes_iterator = self.bytes_store.fetch(self.serdes.raw_key(key), time_from, time_to)
        return WindowStoreIteratorWrapper(bytes_iterator, self.serdes)

    def _maybe_update_seqnum_for_dups(self) -> None:
        if self.retain_duplicates:
            self.seqnum = (self.seqnum + 1) & window_store_utils.INT_MAX
