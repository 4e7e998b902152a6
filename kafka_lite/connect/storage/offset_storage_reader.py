"""How a source task finds where it stopped: the last committed offset of each source partition.

Mirrors: org.apache.kafka.connect.storage.OffsetStorageReader and OffsetStorageReaderImpl
         (connect/api/src/main/java/org/apache/kafka/connect/storage/OffsetStorageReader.java and
         connect/runtime/src/main/java/org/apache/kafka/connect/storage/OffsetStorageReaderImpl.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

The store holds bytes. A key is the JSON of ``[connector name, source partition]`` (the
connector's name is the *namespace*: two connectors reading the same file keep two offsets), a
value the JSON of the source offset, both written by the worker's internal converters. The reader
turns the task's partition into those key bytes, asks the store, and turns the answer back.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Collection
from typing import Any

from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.offset_backing_store import OffsetBackingStore

log = logging.getLogger(__name__)

OFFSET_READ_TIMEOUT_S = 30.0


class OffsetStorageReader(ABC):
    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or None if it has none yet."""
        return self.offsets([partition]).get(_frozen(partition))

    @abstractmethod
    def offsets(self, partitions: Collection[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        """Each partition's offset, keyed by the partition as a hashable (``frozen``) value."""


def _frozen(partition: dict[str, Any]) -> tuple:
    """A partition map as a dict key (Java's maps are hashable; Python's dicts are not)."""
    return tuple(sorted(partition.items()))


frozen_partition = _frozen


class OffsetStorageReaderImpl(OffsetStorageReader):
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

    def offsets(self, partitions: Collection[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        serialized_to_original = {}
        for key in partitions:
            # The key is the namespace and the partition, so that the store can be shared.
            serialized = self.key_converter.from_connect_data(self.namespace, None, [self.namespace, key])
            serialized_to_original[serialized] = key
        try:
            raw = self.backing_store.get(list(serialized_to_original)).result(OFFSET_READ_TIMEOUT_S)
        except Exception as e:
            raise ConnectException(f"Failed to fetch offsets: {e}") from e
        result = {}
        for raw_key, raw_value in raw.items():
            try:
                value = self.value_converter.to_connect_data(self.namespace, raw_value).value
                if value is not None and not isinstance(value, dict):
                    raise DataException("Offsets must be specified as a Map")
                result[_frozen(serialized_to_original[raw_key])] = value
            except DataException as e:
                # One bad offset must not stop the task from reading the others, as in Kafka.
                log.error("CRITICAL: Failed to deserialize offset data: %s", e)
        return result
