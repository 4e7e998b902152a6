"""The log manager: every partition's log on this broker, and the jobs that keep them in shape.

Mirrors: kafka.log.LogManager (core/src/main/scala/kafka/log/LogManager.scala, Kafka 0.10.1)
Book:    chapter 6, 6.1.5 (log management)
Differs: logs load one after another (Kafka loads each directory with its own thread pool,
         ``num.recovery.threads.per.data.dir``); no ``.lock`` file guards the directory against a
         second broker.

What it runs on its scheduler (names as Kafka's):

* ``kafka-log-retention`` every ``log.retention.check.interval.ms``: delete segments past
  ``retention.ms`` / ``retention.bytes``;
* ``kafka-log-flusher`` every ``log.flush.scheduler.interval.ms``: fsync logs not flushed for
  ``flush.ms``;
* ``kafka-recovery-point-checkpoint`` every ``log.flush.offset.checkpoint.interval.ms``: write each
  directory's ``recovery-point-offset-checkpoint``, the offsets below which a restart need not
  re-check the log;
* the log cleaner (compaction), when ``log.cleaner.enable``.

A clean shutdown writes ``.kafka_cleanshutdown`` in each directory; the next start sees it and skips
recovery altogether.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.log.checkpoint import read_checkpoint, write_checkpoint
from kafka_lite.log.log import CLEAN_SHUTDOWN_FILE, Log, parse_topic_partition
from kafka_lite.log.log_cleaner import LogCleaner
from kafka_lite.log.log_config import LogConfig
from kafka_lite.utils.scheduler import Scheduler

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"  # Kafka 0.11 (KIP-107)
log = logging.getLogger(__name__)

# A KRaft node's metadata log (chapter 12), owned by its Raft manager even in one of log.dirs.
METADATA_TOPIC = "__cluster_metadata"


class LogManager:
    def __init__(
        self,
        log_dirs: list[str | os.PathLike],
        default_config: LogConfig,
        scheduler: Scheduler,
        topic_configs: Mapping[str, LogConfig] | None = None,
        flush_check_ms: int = LONG_MAX,
        flush_checkpoint_ms: int = 60_000,
        retention_check_ms: int = 300_000,
        cleaner_enable: bool = True,
        cleaner_backoff_ms: int = 15_000,
        time: Time = SYSTEM,
        initial_task_delay_ms: int = 30_000,
    ) -> None:
        self.log_dirs = [Path(d) for d in log_dirs]
        if len({d.resolve() for d in self.log_dirs}) != len(self.log_dirs):
            raise KafkaException(f"Duplicate log directory found: {', '.join(map(str, self.log_dirs))}")
        self.default_config = default_config
        self.topic_configs = dict(topic_configs or {})
        self.scheduler = scheduler
        self.flush_check_ms = flush_check_ms
        self.flush_checkpoint_ms = flush_checkpoint_ms
        self.retention_check_ms = retention_check_ms
        self.initial_task_delay_ms = initial_task_delay_ms  # Kafka's InitialTaskDelayMs
        self.time = time
        self._lock = threading.RLock()
        self._logs: dict[TopicPartition, Log] = {}
        self._dir_of: dict[TopicPartition, Path] = {}
        self.cleaner = LogCleaner(self, backoff_ms=cleaner_backoff_ms, time=time) if cleaner_enable else None
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
        self._load_logs()

    # -- loading ------------------------------------------------------------------------------------------

    def _load_logs(self) -> None:
        for d in self.log_dirs:
            recovery_points = read_checkpoint(d / RECOVERY_POINT_CHECKPOINT_FILE)
            log_start_offsets = read_checkpoint(d / LOG_START_OFFSET_CHECKPOINT_FILE)
            for partition_dir in sorted(p for p in d.iterdir() if p.is_dir()):
                tp = parse_topic_partition(partition_dir)
                if tp[0] == METADATA_TOPIC:
                    # A KRaft node's metadata log may share a log dir: its Raft manager owns it
                    # (Kafka 3.3's loadLogs skips it too), and it is no replica to load or delete.
                    continue
                config = self.topic_configs.get(tp[0], self.default_config)
                log_ = Log(
                    partition_dir, config, recovery_point=recovery_points.get(tp, 0), time=self.time,
                    log_start_offset=log_start_offsets.get(tp, 0),
                )  # fmt: skip
                if tp in self._logs:
                    raise KafkaException(
                        f"Duplicate log directories found: {partition_dir}, {self._dir_of[tp]}"
                    )
                self._logs[tp] = log_
                self._dir_of[tp] = d
            # The marker said "the last stop was clean"; from now on it is not, until shutdown says so.
            (d / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)

    # -- lifecycle ------------------------------------------------------------------------------------------

    def startup(self) -> None:
        """Start the background jobs (retention, flush, checkpoint, cleaner) on the scheduler."""
        delay = self.initial_task_delay_ms
        self.scheduler.schedule("kafka-log-retention", self.cleanup_logs, delay, self.retention_check_ms)
        self.scheduler.schedule("kafka-log-flusher", self.flush_dirty_logs, delay, self.flush_check_ms)
        self.scheduler.schedule(
            "kafka-recovery-point-checkpoint", self.checkpoint_recovery_point_offsets,
            self.flush_checkpoint_ms, self.flush_checkpoint_ms,
        )  # fmt: skip
        self.scheduler.schedule(
            "kafka-log-start-offset-checkpoint", self.checkpoint_log_start_offsets,
            self.flush_checkpoint_ms, self.flush_checkpoint_ms,
        )  # fmt: skip
        if self.cleaner is not None:
            self.cleaner.startup(self.scheduler)

    def shutdown(self) -> None:
        """Flush and close every log, checkpoint recovery points, and mark each directory clean."""
        with self._lock:
            for log_ in self._logs.values():
                log_.flush()
                log_.close()
            self.checkpoint_recovery_point_offsets()
            self.checkpoint_log_start_offsets()
            for d in self.log_dirs:
                (d / CLEAN_SHUTDOWN_FILE).touch()

    # -- logs ----------------------------------------------------------------------------------------------

    def get_log(self, tp: TopicPartition) -> Log | None:
        return self._logs.get(tp)

    def all_logs(self) -> list[Log]:
        with self._lock:
            return list(self._logs.values())

    def logs_by_dir(self) -> dict[Path, dict[TopicPartition, Log]]:
        with self._lock:
            result: dict[Path, dict[TopicPartition, Log]] = {d: {} for d in self.log_dirs}
            for tp, log_ in self._logs.items():
                result[self._dir_of[tp]][tp] = log_
            return result

    def create_log(self, tp: TopicPartition, config: LogConfig | None = None) -> Log:
        """The log for ``tp``, created in the directory holding the fewest logs if it is new."""
        with self._lock:
            existing = self._logs.get(tp)
            if existing is not None:
                return existing
            counts = {d: 0 for d in self.log_dirs}
            for d in self._dir_of.values():
                counts[d] += 1
            d = min(self.log_dirs, key=lambda x: counts[x])  # Kafka's nextLogDir
            config = config or self.topic_configs.get(tp[0], self.default_config)
            log_ = Log(d / f"{tp[0]}-{tp[1]}", config, time=self.time)
            self._logs[tp] = log_
            self._dir_of[tp] = d
            return log_

    def update_topic_config(self, topic: str, config: LogConfig) -> int:
        """A topic's new settings, for the logs it has here and those created later; returns how
        many logs took them (``TopicConfigHandler`` calls this when the topic's overrides change)."""
        with self._lock:
            self.topic_configs[topic] = config
            logs = [log_ for tp, log_ in self._logs.items() if tp[0] == topic]
            for log_ in logs:
                log_.config = config  # read afresh by every append, roll, retention and cleaner pass
            return len(logs)

    def delete_log(self, tp: TopicPartition) -> None:
        with self._lock:
            log_ = self._logs.pop(tp, None)
            self._dir_of.pop(tp, None)
        if log_ is not None:
            if self.cleaner is not None:
                self.cleaner.forget(tp)
            log_.delete()

    def truncate_to(self, offsets: Mapping[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            log_ = self._logs.get(tp)
            if log_ is not None:
                log_.truncate_to(offset)
        self.checkpoint_recovery_point_offsets()

    # -- the scheduled jobs ------------------------------------------------------------------------------------

    def cleanup_logs(self) -> int:
        """One retention pass over every log whose policy includes delete; returns segments deleted."""
        return sum(log_.delete_old_segments() for log_ in self.all_logs() if log_.config.delete)

    def flush_dirty_logs(self) -> None:
        now = self.time.milliseconds()
        for log_ in self.all_logs():
            if now - log_.last_flushed_time >= log_.config.flush_ms:
                log_.flush()

    def checkpoint_log_start_offsets(self) -> None:
        """Each directory's ``log-start-offset-checkpoint``: the logs whose start a DeleteRecords moved
        inside their first segment (elsewhere the first segment's base says it), as Kafka 0.11."""
        for d, logs in self.logs_by_dir().items():
            write_checkpoint(
                d / LOG_START_OFFSET_CHECKPOINT_FILE,
                {
                    tp: log_.log_start_offset
                    for tp, log_ in logs.items()
                    if log_.log_start_offset > log_.log_segments()[0].base_offset
                },
            )

    def checkpoint_recovery_point_offsets(self) -> None:
        for d, logs in self.logs_by_dir().items():
            write_checkpoint(
                d / RECOVERY_POINT_CHECKPOINT_FILE, {tp: log_.recovery_point for tp, log_ in logs.items()}
            )
