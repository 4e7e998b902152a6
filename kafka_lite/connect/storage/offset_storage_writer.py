"""Source offsets on their way to the store: collected as records are sent, flushed as one snapshot.

Mirrors: org.apache.kafka.connect.storage.OffsetStorageWriter
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/OffsetStorageWriter.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the flush id that lets Kafka ignore a late callback of a cancelled flush is kept; the
         future is a ``concurrent.futures.Future``.

The writer holds two maps. ``offset()`` puts the latest offset of a partition in ``data``, as each
record goes to the producer. A commit is two steps, because the worker must first wait for the
producer to have written every record those offsets cover: ``begin_flush`` moves ``data`` aside
into ``to_flush`` (new records keep going into a fresh ``data``), the worker waits for the
producer, then ``do_flush`` writes ``to_flush``. ``cancel_flush`` puts ``to_flush`` back under any
newer offsets, so that nothing is lost and nothing is written before its records are in Kafka.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from typing import Any

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.offset_backing_store import OffsetBackingStore
from kafka_lite.connect.storage.offset_storage_reader import frozen_partition
from kafka_lite.connect.util.callback import Callback

log = logging.getLogger(__name__)


class OffsetStorageWriter:
    def __init__(
        self,
        backing_store: OffsetBackingStore,
        namespace: str,
        key_converter: Converter,
        value_converter: Converter,
    ) -> None:
        self.backing_store = backing_store
        self.namespace = namespace
        self.key_converter = key_converter
        self.value_converter = value_converter
        self._lock = threading.Lock()  # Kafka's methods are synchronized
        # frozen partition -> (partition, offset): the latest offset of each partition since the last flush
        self.data: dict[Any, tuple[dict, dict]] = {}
        self.to_flush: dict[Any, tuple[dict, dict]] | None = None
        self.current_flush_id = 0

    def offset(self, partition: dict[str, Any], offset: dict[str, Any]) -> None:
        with self._lock:
            self.data[frozen_partition(partition)] = (partition, offset)

    def begin_flush(self) -> bool:
        """Snapshot the offsets to write; False when there is nothing to write."""
        with self._lock:
            if self.to_flush is not None:
                log.error("Invalid call to OffsetStorageWriter flush() while already flushing, the "
                          "framework should not allow this")  # fmt: skip
                raise ConnectException("OffsetStorageWriter is already flushing")
            if not self.data:
                return False
            self.to_flush, self.data = self.data, {}
            return True

    def do_flush(self, callback: Callback) -> Future | None:
        """Write the snapshot; the returned future completes when the store has it."""
        with self._lock:
            flush_id = self.current_flush_id
            try:
                offsets_serialized = {}
                for partition, offset in self.to_flush.values():
                    # Offsets are keyed by namespace and partition, so many connectors share a store.
                    key = self.key_converter.from_connect_data(
                        self.namespace, None, [self.namespace, partition]
                    )
                    value = self.value_converter.from_connect_data(self.namespace, None, offset)
                    offsets_serialized[key] = value
            except Exception as e:
                # Bad offsets (a type the converter cannot write) fail the flush, not the task.
                log.error("CRITICAL: Failed to serialize offset data, making it impossible to commit "
                          "offsets under namespace %s. This likely won't recover unless the "
                          "unserializable partition or offset information is overwritten.", self.namespace)  # fmt: skip
                callback(e, None)
                return None

        def on_set(error: BaseException | None, result: Any) -> None:
            with self._lock:
                stale = flush_id != self.current_flush_id
            if not stale:
                if error is not None:
                    self.cancel_flush()
                else:
                    self._complete_flush()
                callback(error, result)

        return self.backing_store.set(offsets_serialized, on_set)

    def cancel_flush(self) -> None:
        """Put the snapshot back, under any offsets recorded since: they are newer."""
        with self._lock:
            if self.to_flush is not None:
                self.to_flush.update(self.data)
                self.data, self.to_flush = self.to_flush, None
                self.current_flush_id += 1

    def _complete_flush(self) -> None:
        with self._lock:
            self.to_flush = None
            self.current_flush_id += 1
