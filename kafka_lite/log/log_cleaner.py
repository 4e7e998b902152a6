"""Log compaction: keep the latest record for each key, drop older ones and, eventually, tombstones.

Mirrors: kafka.log.LogCleaner (Cleaner, CleanerThread), LogCleanerManager and OffsetMap
         (core/src/main/scala/kafka/log/LogCleaner*.scala, OffsetMap.scala, Kafka 0.10.1)
Book:    chapter 6, 6.1.6 (log compaction)
Differs: the offset map is a Python dict from key to latest offset, not Kafka's fixed-memory
         ``SkimpyOffsetMap`` of MD5 hashes (which bounds memory with
         ``log.cleaner.dedupe.buffer.size`` and so may clean a dirty section in several passes);
         the cleaner runs as a scheduled task every ``log.cleaner.backoff.ms`` rather than its own
         thread, so MockScheduler can step it.

The picture a compacted log has (book 6.1.6): a *clean* head already compacted, a *dirty* tail
written since, and the active segment, never cleaned. One pass:

1. pick the log with the largest dirty ratio ``dirty bytes / total bytes`` above
   ``min.cleanable.dirty.ratio`` (``grab_filthiest_log``);
2. read the dirty section and map each key to its latest offset (``build_offset_map``);
3. rewrite every segment up to the end of that section, keeping a record only if no later record
   has its key, and keeping a tombstone (null value) only while its segment is newer than the
   *delete horizon* (the clean head's newest timestamp minus ``delete.retention.ms``), so
   consumers have time to see the delete (``clean_segments``);
4. swap each rewritten group in for the old segments (``.cleaned`` -> ``.swap`` -> live), and
   checkpoint where the dirty section ended in ``cleaner-offset-checkpoint``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.common.record import MemoryRecords, MemoryRecordsBuilder
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import MAGIC_VALUE_V2
from kafka_lite.common.record.legacy_record import build_legacy_entries
from kafka_lite.common.record.memory_records import iter_batches
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.log.checkpoint import read_checkpoint, write_checkpoint
from kafka_lite.log.log_segment import LogSegment

if TYPE_CHECKING:
    from kafka_lite.log.log import Log
    from kafka_lite.log.log_manager import LogManager
    from kafka_lite.utils.scheduler import Scheduler

CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
log = logging.getLogger(__name__)


@dataclass
class LogToClean:
    """A compacted log and its sections, as ``LogCleanerManager`` sizes them up."""

    tp: tuple[str, int]
    log: Log
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    dirty_bytes: int

    @property
    def cleanable_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


@dataclass
class CleanerStats:
    tp: tuple[str, int]
    end_offset: int
    records_read: int = 0
    records_kept: int = 0
    bytes_before: int = 0
    bytes_after: int = 0


class LogCleaner:
    """Finds the dirtiest compacted log and cleans it, one pass per ``clean_once``."""

    def __init__(self, log_manager: LogManager, backoff_ms: int = 15_000, time: Time = SYSTEM) -> None:
        self.log_manager = log_manager
        self.backoff_ms = backoff_ms
        self.time = time
        self._lock = threading.Lock()  # one pass at a time

    def startup(self, scheduler: Scheduler) -> None:
        scheduler.schedule("kafka-log-cleaner-thread-0", self.clean_once, self.backoff_ms, self.backoff_ms)

    # -- LogCleanerManager ----------------------------------------------------------------------------

    def _checkpoint_path(self, tp: tuple[str, int]):
        for d, logs in self.log_manager.logs_by_dir().items():
            if tp in logs:
                return d / CLEANER_CHECKPOINT_FILE
        return None

    def cleanable_logs(self) -> list[LogToClean]:
        """Every compacted log with its clean and dirty sections measured."""
        now = self.time.milliseconds()
        result = []
        for d, logs in self.log_manager.logs_by_dir().items():
            checkpoint = read_checkpoint(d / CLEANER_CHECKPOINT_FILE)
            for tp, log_ in logs.items():
                if not log_.config.compact:
                    continue
                first_dirty = max(checkpoint.get(tp, log_.log_start_offset), log_.log_start_offset)
                first_uncleanable = _first_uncleanable_offset(log_, now)
                first_dirty = min(first_dirty, first_uncleanable)
                clean = sum(
                    s.size_in_bytes()
                    for s in log_.log_segments(log_.log_start_offset, first_dirty)
                    if s.base_offset < first_dirty
                )
                dirty = sum(s.size_in_bytes() for s in log_.log_segments(first_dirty, first_uncleanable))
                result.append(LogToClean(tp, log_, first_dirty, first_uncleanable, clean, dirty))
        return result

    def grab_filthiest_log(self) -> LogToClean | None:
        candidates = [
            c
            for c in self.cleanable_logs()
            if c.dirty_bytes > 0 and c.cleanable_ratio > c.log.config.min_cleanable_ratio
        ]
        return max(candidates, key=lambda c: c.cleanable_ratio, default=None)

    def forget(self, tp: tuple[str, int]) -> None:
        """Drop a deleted log's checkpoint entry."""
        path = self._checkpoint_path(tp)
        if path is not None:
            offsets = read_checkpoint(path)
            if offsets.pop(tp, None) is not None:
                write_checkpoint(path, offsets)

    # -- one pass ----------------------------------------------------------------------------------------------

    def clean_once(self) -> CleanerStats | None:
        """Clean the filthiest log, if any is dirty enough; return what was done."""
        with self._lock:
            candidate = self.grab_filthiest_log()
            if candidate is None:
                return None
            stats = Cleaner(self.time).clean(candidate)
            path = self._checkpoint_path(candidate.tp)
            offsets = read_checkpoint(path)
            offsets[candidate.tp] = stats.end_offset
            write_checkpoint(path, offsets)
            log.info("Cleaned %s-%d: %s", *candidate.tp, stats)
            return stats


def _first_uncleanable_offset(log_: Log, now: int) -> int:
    """The active segment is never cleaned, nor any segment younger than ``min.compaction.lag.ms``."""
    uncleanable = log_.active_segment.base_offset
    if log_.config.compaction_lag_ms > 0:
        for segment in log_.log_segments():
            if now - segment.largest_timestamp < log_.config.compaction_lag_ms:
                return min(uncleanable, segment.base_offset)
    return uncleanable


class Cleaner:
    """Does the work of one compaction pass on one log (Kafka's ``Cleaner``)."""

    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time

    def clean(self, to_clean: LogToClean) -> CleanerStats:
        log_ = to_clean.log
        offset_map, end_offset = self.build_offset_map(
            log_, to_clean.first_dirty_offset, to_clean.first_uncleanable_offset
        )
        # Tombstones in segments older than this horizon have been visible for delete.retention.ms.
        clean_head = [s for s in log_.log_segments() if s.base_offset < to_clean.first_dirty_offset]
        delete_horizon_ms = (
            clean_head[-1].largest_timestamp - log_.config.delete_retention_ms if clean_head else 0
        )
        stats = CleanerStats(to_clean.tp, end_offset)
        to_rewrite = [
            s for s in log_.log_segments() if s.base_offset < end_offset and s is not log_.active_segment
        ]
        for group in group_segments_by_size(to_rewrite, log_.config.segment_size):
            self.clean_segments(log_, group, offset_map, delete_horizon_ms, stats)
        return stats

    # --8<-- [start:build_offset_map]
    @staticmethod
    def build_offset_map(log_: Log, start: int, end: int) -> tuple[dict[bytes, int], int]:
        """Map each key in ``[start, end)`` to its latest offset; also return where the map stops."""
        offset_map: dict[bytes, int] = {}
        last = start - 1
        for segment in log_.log_segments(start, end):
            for record in _records(segment):
                if start <= record.offset < end and record.key is not None:
                    offset_map[record.key] = record.offset
                    last = max(last, record.offset)
        return offset_map, max(last + 1, start)

    # --8<-- [end:build_offset_map]

    # --8<-- [start:should_retain]
    @staticmethod
    def should_retain(record, offset_map: dict[bytes, int], retain_deletes: bool) -> bool:
        """Keep a record unless a later one has its key, or it is a tombstone past the horizon."""
        if record.key is None:
            return False  # a compacted topic's records need keys; Kafka drops keyless ones
        latest = offset_map.get(record.key)
        if latest is not None and record.offset < latest:
            return False  # superseded by a later record with the same key
        return record.value is not None or retain_deletes

    # --8<-- [end:should_retain]

    def clean_segments(
        self,
        log_: Log,
        group: list[LogSegment],
        offset_map: dict[bytes, int],
        delete_horizon_ms: int,
        stats: CleanerStats,
    ) -> None:
        """Rewrite ``group`` into one ``.cleaned`` segment and swap it in for them."""
        first = group[0]
        cleaned = LogSegment(
            log_.dir, first.base_offset, log_.config.index_interval, log_.config.max_index_size,
            time=self.time, suffix=".cleaned",
        )  # fmt: skip
        for old in group:
            retain_deletes = old.largest_timestamp > delete_horizon_ms
            stats.bytes_before += old.size_in_bytes()
            for batch in _batches(old):
                kept = [r for r in batch if self.should_retain(r, offset_map, retain_deletes)]
                stats.records_read += batch.num_records
                stats.records_kept += len(kept)
                if not kept:
                    continue
                if batch.magic < MAGIC_VALUE_V2:
                    _write_legacy_kept(cleaned, batch, kept)
                    continue
                # Offsets are kept as they were (gaps are what compaction leaves); so are the codec,
                # timestamps and producer fields of the batch the records came from.
                builder = MemoryRecordsBuilder(
                    compression=batch.compression_type, timestamp_type=batch.timestamp_type,
                    base_offset=kept[0].offset, log_append_time=batch.max_timestamp,
                    producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                    base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
                )  # fmt: skip
                for r in kept:
                    builder.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
                records = builder.build()
                max_ts = max(r.timestamp for r in kept)
                offset_of_max = next(r.offset for r in kept if r.timestamp == max_ts)
                cleaned.append(kept[0].offset, max_ts, offset_of_max, records)
        cleaned.on_become_inactive_segment()
        cleaned.flush()
        cleaned.index.trim_to_valid_size()
        cleaned.time_index.trim_to_valid_size()
        stats.bytes_after += cleaned.size_in_bytes()
        cleaned.change_file_suffixes(".cleaned", ".swap")
        log_.replace_segments(cleaned, group)


def group_segments_by_size(segments: Iterable[LogSegment], max_size: int) -> list[list[LogSegment]]:
    """Consecutive segments whose combined size fits one segment: each group becomes one cleaned segment."""
    groups: list[list[LogSegment]] = []
    current: list[LogSegment] = []
    size = 0
    for segment in segments:
        if current and size + segment.size_in_bytes() > max_size:
            groups.append(current)
            current, size = [], 0
        current.append(segment)
        size += segment.size_in_bytes()
    if current:
        groups.append(current)
    return groups


def _write_legacy_kept(cleaned: LogSegment, batch, kept: list) -> None:
    """A v0/v1 entry keeps its format (a log of a topic whose format was older holds them). Kept
    whole, its bytes are copied; a wrapper that lost records is written again uncompressed, one
    message per record at its own offset, since ``build_legacy_entries`` writes consecutive offsets
    and a compacted wrapper has gaps (Kafka writes a wrapper whose inner offsets have the gaps)."""
    max_ts = max(r.timestamp for r in kept)
    offset_of_max = next(r.offset for r in kept if r.timestamp == max_ts)
    if len(kept) == batch.num_records:
        cleaned.append(kept[0].offset, max_ts, offset_of_max, MemoryRecords(bytes(batch.buffer())))
        return
    out = bytearray()
    for r in kept:
        out += build_legacy_entries(
            [(r.timestamp, r.key, r.value)],
            batch.magic,
            r.offset,
            CompressionType.NONE,
            batch.timestamp_type,
            r.timestamp,
        )
    cleaned.append(kept[0].offset, max_ts, offset_of_max, MemoryRecords(bytes(out)))


def _batches(segment: LogSegment):
    for header in segment.log.batch_headers(0):
        (batch,) = iter_batches(segment.log.read_bytes(header.position, header.size))
        yield batch


def _records(segment: LogSegment):
    for batch in _batches(segment):
        yield from batch
