"""Commits every source task's offsets on a timer, every ``offset.flush.interval.ms``.

Mirrors: org.apache.kafka.connect.runtime.SourceTaskOffsetCommitter
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/SourceTaskOffsetCommitter.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: kafka_lite's ``KafkaScheduler`` (one thread, a heap of due times) plays Kafka's
         ``ScheduledExecutorService``; it cannot cancel one task's schedule, so ``remove`` takes the
         task out of ``committers`` and its next turn does nothing.

The commit runs on the committer's thread, not the task's: the task keeps polling and sending
while its producer is flushed and its offsets written (see ``WorkerSourceTask.commit_offsets``).
``remove`` waits for a commit in progress, so a task is never committed after it was closed.
"""

from __future__ import annotations

import logging
import threading

from kafka_lite.common.time import Time
from kafka_lite.connect.runtime.worker_config import OFFSET_COMMIT_INTERVAL_MS_CONFIG, WorkerConfig
from kafka_lite.connect.runtime.worker_source_task import WorkerSourceTask
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.utils.scheduler import KafkaScheduler

log = logging.getLogger(__name__)


class SourceTaskOffsetCommitter:
    def __init__(self, config: WorkerConfig, time: Time) -> None:
        self.config = config
        self.committers: dict[ConnectorTaskId, WorkerSourceTask] = {}
        self._lock = threading.Lock()  # held by a commit: remove() waits for it
        self.commit_executor_service = KafkaScheduler("SourceTaskOffsetCommitter", time)
        self.commit_executor_service.startup()

    def close(self, timeout_ms: int) -> None:
        self.commit_executor_service.shutdown()

    def schedule(self, id: ConnectorTaskId, worker_task: WorkerSourceTask) -> None:
        interval = self.config.get(OFFSET_COMMIT_INTERVAL_MS_CONFIG)
        self.committers[id] = worker_task
        self.commit_executor_service.schedule(f"commit-{id}", lambda: self._commit(id), interval, interval)

    def remove(self, id: ConnectorTaskId) -> None:
        with self._lock:
            self.committers.pop(id, None)

    def _commit(self, id: ConnectorTaskId) -> None:
        with self._lock:
            worker_task = self.committers.get(id)
            if worker_task is None:
                return
            try:
                log.debug("Committing offsets for %s", worker_task)
                if not worker_task.commit_offsets():
                    log.error("Failed to commit offsets for %s", worker_task)
            except Exception:
                # Only the offsets are lost for this round; the next turn tries again.
                log.exception("Unhandled exception when committing %s", worker_task)
