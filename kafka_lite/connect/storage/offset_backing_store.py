"""Where source offsets are kept: a map of bytes to bytes, read and written off the caller's thread.

Mirrors: org.apache.kafka.connect.storage.OffsetBackingStore and MemoryOffsetBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/MemoryOffsetBackingStore.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: futures are ``concurrent.futures.Future``; a callback is ``callback(error, result)``.

The interface is asynchronous because distributed mode's store is a Kafka topic; the memory store
keeps that shape with a single-thread executor, so gets and sets run in the order they were asked
and ``save`` (a no-op here, a file write in ``FileOffsetBackingStore``) never runs concurrently
with itself.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Collection
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from kafka_lite.connect.util.callback import Callback

log = logging.getLogger(__name__)


class OffsetBackingStore(ABC):
    @abstractmethod
    def configure(self, config: dict[str, Any]) -> None: ...

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def get(self, keys: Collection[bytes], callback: Callback | None = None) -> Future: ...

    @abstractmethod
    def set(self, values: dict[bytes, bytes], callback: Callback | None = None) -> Future: ...


class MemoryOffsetBackingStore(OffsetBackingStore):
    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}
        self.executor: ThreadPoolExecutor | None = None

    def configure(self, config: dict[str, Any]) -> None:
        pass

    def start(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="offset-store")

    def stop(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True)
            self.executor = None

    def get(self, keys: Collection[bytes], callback: Callback | None = None) -> Future:
        def read() -> dict[bytes, bytes]:
            result = {key: self.data[key] for key in keys if key in self.data}
            if callback is not None:
                callback(None, result)
            return result

        return self.executor.submit(read)

    def set(self, values: dict[bytes, bytes], callback: Callback | None = None) -> Future:
        def write() -> None:
            self.data.update(values)
            self.save()
            if callback is not None:
                callback(None, None)

        return self.executor.submit(write)

    def save(self) -> None:
        """Make ``data`` durable: nothing to do in memory."""
