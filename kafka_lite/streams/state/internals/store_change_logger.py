"""Sends a store's writes to its changelog topic, one record per put or delete.

Mirrors: org.apache.kafka.streams.state.internals.StoreChangeLogger
         (streams/src/main/java/.../state/internals/StoreChangeLogger.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (a store is backed by a compacted changelog topic)
Differs: the stores log bytes, already serialized, so the collector gets no serializers.

The record goes to the changelog's partition numbered as the task's: task 0_3 reads partition 3 of
its source topics and writes its stores' changes to partition 3 of each changelog. So whichever
instance takes task 0_3 over restores exactly its state from partition 3. A delete is a record with
a null value (a tombstone), which compaction eventually removes along with the key's older values.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic


class StoreChangeLogger:
    def __init__(self, store_name: str, context: Any) -> None:
        self.topic = store_changelog_topic(context.application_id(), store_name)
        self.partition = context.task_id().partition
        self._context = context
        self._collector = context.record_collector()

    def log_change(self, key: bytes, value: bytes | None) -> None:
        """Send ``key`` -> ``value`` (None: a delete), stamped with the timestamp of the record being processed."""
        if self._collector is not None:
            self._collector.send(
                self.topic, key, value, partition=self.partition, timestamp=self._context.timestamp()
            )
