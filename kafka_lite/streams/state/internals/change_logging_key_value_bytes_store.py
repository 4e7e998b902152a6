"""A key-value bytes store whose every write also goes to its changelog topic.

Mirrors: org.apache.kafka.streams.state.internals.ChangeLoggingKeyValueBytesStore
         (streams/src/main/java/.../state/internals/ChangeLoggingKeyValueBytesStore.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4

Reads pass straight through; each put, put_all and delete writes the inner store first, then sends
the change. A delete is logged as a put of None, a tombstone. ``put_if_absent`` and ``delete`` are
built from ``get`` and ``put`` of this store (``KeyValueStore.put_if_absent``), not passed
down, so that they are logged too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.internals.store_change_logger import StoreChangeLogger
from kafka_lite.streams.state.internals.wrapped_state_store import WrappedStateStore
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator, KeyValueStore


class ChangeLoggingKeyValueBytesStore(WrappedStateStore, KeyValueStore[bytes, bytes]):
    def __init__(self, inner: KeyValueStore[bytes, bytes]) -> None:
        super().__init__(inner)
        self.inner: KeyValueStore[bytes, bytes] = inner
        self._change_logger: StoreChangeLogger | None = None

    def init(self, context: Any, root: StateStore) -> None:
        self.inner.init(context, root)
        self._change_logger = StoreChangeLogger(self.inner.name, context)

    # --8<-- [start:put]
    def put(self, key: bytes, value: bytes | None) -> None:
        self.inner.put(key, value)
        self._change_logger.log_change(key, value)

    # --8<-- [end:put]

    def put_all(self, entries: Iterable[KeyValue | tuple[bytes, bytes]]) -> None:
        entries = list(entries)
        self.inner.put_all(entries)
        for key, value in entries:
            self._change_logger.log_change(key, value)

    def delete(self, key: bytes) -> bytes | None:
        old_value = self.inner.get(key)
        self.put(key, None)
        return old_value

    def get(self, key: bytes) -> bytes | None:
        return self.inner.get(key)

    def range(self, from_key: bytes, to_key: bytes) -> KeyValueIterator[bytes, bytes]:
        return self.inner.range(from_key, to_key)

    def all(self) -> KeyValueIterator[bytes, bytes]:
        return self.inner.all()

    def approximate_num_entries(self) -> int:
        return self.inner.approximate_num_entries()
