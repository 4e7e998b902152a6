"""A segmented bytes store whose every put and remove also goes to its changelog topic.

Mirrors: org.apache.kafka.streams.state.internals.ChangeLoggingSegmentedBytesStore
         (streams/src/main/java/.../state/internals/ChangeLoggingSegmentedBytesStore.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4

The changelog's keys are the window store's binary keys (key, timestamp, seqnum), so a restore puts
each back in the segment its timestamp names, and drops those already past retention.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.internals.rocksdb_segmented_bytes_store import RocksDBSegmentedBytesStore
from kafka_lite.streams.state.internals.store_change_logger import StoreChangeLogger
from kafka_lite.streams.state.internals.wrapped_state_store import WrappedStateStore
from kafka_lite.streams.state.key_value_store import KeyValueIterator


class ChangeLoggingSegmentedBytesStore(WrappedStateStore):
    def __init__(self, inner: RocksDBSegmentedBytesStore) -> None:
        super().__init__(inner)
        self.inner: RocksDBSegmentedBytesStore = inner
        self._change_logger: StoreChangeLogger | None = None

    def init(self, context: Any, root: StateStore) -> None:
        self.inner.init(context, root)
        self._change_logger = StoreChangeLogger(self.name, context)

    def fetch(self, key: bytes, time_from: int, time_to: int) -> KeyValueIterator[bytes, bytes]:
        return self.inner.fetch(key, time_from, time_to)

    def put(self, key: bytes, value: bytes | None) -> None:
        self.inner.put(key, value)
        self._change_logger.log_change(key, value)

    def remove(self, key: bytes) -> None:
        self.inner.remove(key)
        self._change_logger.log_change(key, None)

    def get(self, key: bytes) -> bytes | None:
        return self.inner.get(key)
