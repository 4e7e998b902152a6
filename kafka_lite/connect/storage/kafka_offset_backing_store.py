"""The distributed worker's offset store: source offsets as records of a compacted topic.

Mirrors: org.apache.kafka.connect.storage.KafkaOffsetBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/KafkaOffsetBackingStore.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the topic is created if missing with Kafka 0.11's ``offset.storage.partitions`` (25) and
         ``offset.storage.replication.factor`` (3, or fewer on a smaller cluster).

A source task's offsets must survive its worker: after a rebalance another worker runs the task,
and reads where the first one got to. So every worker reads the offsets topic (``offset.storage.topic``)
into a map of key bytes to value bytes, and a ``set`` writes one record per key. The key is the
internal converter's bytes of ``[connector, source partition]``, so the topic's default partitioner
sends every update of one source partition to one topic partition, in order, and compaction keeps
the last.

``get`` reads the log to its end first, so a task that starts right after a rebalance sees what the
previous owner committed. ``set`` completes when every record is acknowledged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection
from concurrent.futures import Future
from typing import Any

from kafka_lite.clients.admin import NewTopic
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.storage.offset_backing_store import OffsetBackingStore
from kafka_lite.connect.util.callback import Callback, FutureCallback
from kafka_lite.connect.util.kafka_based_log import KafkaBasedLog, client_configs

log = logging.getLogger(__name__)

OFFSET_STORAGE_TOPIC_CONFIG = "offset.storage.topic"
OFFSET_STORAGE_PARTITIONS_CONFIG = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG = "offset.storage.replication.factor"
COMPACTED = {"cleanup.policy": "compact"}


class KafkaOffsetBackingStore(OffsetBackingStore):
    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time
        self.data: dict[bytes, bytes] = {}
        self._lock = threading.Lock()  # the work thread writes ``data``; get's callbacks read it
        self.offset_log: KafkaBasedLog | None = None

    def configure(self, config: dict[str, Any]) -> None:
        topic = config.get(OFFSET_STORAGE_TOPIC_CONFIG)
        if not topic:
            raise ConnectException("Offset storage topic must be specified (offset.storage.topic)")
        producer, consumer = client_configs(config, f"connect-offsets-{topic}")
        new_topic = NewTopic(topic, int(config.get(OFFSET_STORAGE_PARTITIONS_CONFIG) or 25),
                             int(config.get(OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG) or 3), configs=COMPACTED)  # fmt: skip
        self.offset_log = KafkaBasedLog(
            topic, producer, consumer, self._consumed_callback, self.time, new_topic
        )

    def start(self) -> None:
        log.info("Starting KafkaOffsetBackingStore")
        self.offset_log.start()
        log.info("Finished reading offsets topic and starting KafkaOffsetBackingStore")

    def stop(self) -> None:
        log.info("Stopping KafkaOffsetBackingStore")
        self.offset_log.stop()
        log.info("Stopped KafkaOffsetBackingStore")

    def get(self, keys: Collection[bytes], callback: Callback | None = None) -> Future:
        future = FutureCallback(callback)

        def on_read_to_end(error: BaseException | None, _: Any) -> None:
            if error is not None:
                future(error, None)
                return
            with self._lock:
                values = {key: self.data[key] for key in keys if key in self.data}
            future(None, values)

        self.offset_log.read_to_end(on_read_to_end)
        return future

    def set(self, values: dict[bytes, bytes], callback: Callback | None = None) -> Future:
        future = SetCallbackFuture(len(values), callback)
        for key, value in values.items():
            self.offset_log.send(key, value, future.on_completion)
        return future

    def _consumed_callback(self, error: BaseException | None, record: Any) -> None:
        if error is not None:
            log.error("Failed to read the offsets topic: %s", error)
            return
        with self._lock:
            if record.value is None:
                self.data.pop(bytes(record.key), None)
            else:
                self.data[bytes(record.key)] = bytes(record.value)


class SetCallbackFuture(Future):
    """Completes when all of a ``set``'s records are acknowledged, or at the first that fails."""

    def __init__(self, num_records: int, callback: Callback | None) -> None:
        super().__init__()
        self.num_left = num_records
        self.callback = callback
        self._lock = threading.Lock()
        self.completed = False
        if num_records == 0:
            self._complete(None)

    def on_completion(self, error: BaseException | None, _metadata: Any) -> None:
        with self._lock:
            if self.completed:
                return
            if error is None:
                self.num_left -= 1
                if self.num_left > 0:
                    return
            self.completed = True
        self._complete(error)

    def _complete(self, error: BaseException | None) -> None:
        if self.callback is not None:
            self.callback(error, None)
        if error is not None:
            self.set_exception(error)
        else:
            self.set_result(None)
