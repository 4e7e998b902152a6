"""Log compaction: keep the latest record for each key, drop older ones and, eventually, tombstones.

Mirrors: kafka.log.LogCleaner (Cleaner, CleanerThread), LogCleanerManager and OffsetMap
         (core/src/main/scala/kafka/log/LogCleaner*.scala, OffsetMap.scala, Kafka 0.10.1; the
         transactional cleaning, ``CleanedTransactionMetadata``, is Kafka 0.11.0's)
Book:    chapter 6, 6.1.6 (log compaction)
Differs: the offset map is a Python dict from key to latest offset, not Kafka's fixed-memory
         ``SkimpyOffsetMap`` of MD5 hashes (which bounds memory with
         ``log.cleaner.dedupe.buffer.size`` and so may clean a dirty section in several passes);
         the cleaner runs as a scheduled task every ``log.cleaner.backoff.ms`` rather than its own
         thread, so MockScheduler can step it; a batch that lost records ends at its last kept
         record, where Kafka 0.11 keeps the old batch's last offset (``_write_retained_records``).

The picture a compacted log has (book 6.1.6): a *clean* head already compacted, a *dirty* tail
written since, and the active segment, never cleaned. One pass:

1. pick the log with the largest dirty ratio ``dirty bytes / total bytes`` above
   ``min.cleanable.dirty.ratio`` (``grab_filthiest_log``);
2. read the dirty section and map each key to its latest offset (``build_offset_map``), leaving
   out transaction markers and the records of aborted transactions;
3. rewrite every segment up to the end of that section, keeping a record only if no later record
   has its key, and keeping a tombstone (null value) only while its segment is newer than the
   *delete horizon* (the clean head's newest timestamp minus ``delete.retention.ms``), so
   consumers have time to see the delete (``clean_segments``). Transactions (Kafka 0.11): an
   aborted transaction's batches go; a marker stays until delete.retention.ms has passed over it
   as over a tombstone, and a COMMIT marker stays if the pass met a record of its transaction in
   the marker's segment; batches keep their producer fields and flags; and each aborted
   transaction whose ABORT marker the pass reads is written into the cleaned segment's
   transaction index, so a read_committed Fetch still learns of it;
4. swap each rewritten group in for the old segments (``.cleaned`` -> ``.swap`` -> live), and
   checkpoint where the dirty section ended in ``cleaner-offset-checkpoint``.
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.common.record import MemoryRecords, MemoryRecordsBuilder
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import MAGIC_VALUE_V2
from kafka_lite.common.record.end_transaction_marker import ControlRecordType
from kafka_lite.common.record.legacy_record import build_legacy_entries
from kafka_lite.common.record.memory_records import iter_batches
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.log.checkpoint import read_checkpoint, write_checkpoint
from kafka_lite.log.log_segment import LogSegment
from kafka_lite.log.transaction_index import AbortedTxn, TransactionIndex

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
    """The active segment is never cleaned, nor any segment younger than ``min.compaction.lag.ms``,
    nor anything from the first open transaction on (Kafka 0.11): its fate is not known yet."""
    uncleanable = log_.active_segment.base_offset
    state = log_.producer_state_manager
    first_undecided = state.first_undecided_offset() if state is not None else None
    if first_undecided is not None:
        uncleanable = min(uncleanable, first_undecided)
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
        """Map each key in ``[start, end)`` to its latest offset; also return where the map stops.

        Kafka 0.11 leaves two kinds of batch out of the map: transaction markers (control batches),
        whose keys are the marker type, not a user's key; and the batches of aborted transactions,
        which the cleaning drops, so a key they hold must not hide that key's last committed record.
        Every batch still moves the map's end (Kafka's ``updateLatestOffset``)."""
        offset_map: dict[bytes, int] = {}
        latest_offset = start - 1
        transaction_metadata = CleanedTransactionMetadata(log_.collect_aborted_transactions(start, end))
        for segment in log_.log_segments(start, end):
            for batch in _batches(segment):
                if batch.base_offset >= end:
                    break
                if batch.magic >= MAGIC_VALUE_V2 and batch.is_control_batch:
                    transaction_metadata.on_control_batch_read(batch)
                elif not transaction_metadata.on_batch_read(batch):
                    for record in batch:
                        if record.key is not None and record.offset >= start:
                            offset_map[record.key] = record.offset
                if batch.last_offset >= start:
                    latest_offset = max(latest_offset, batch.last_offset)
        return offset_map, max(latest_offset + 1, start)

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
        """Rewrite ``group`` into one ``.cleaned`` segment and swap it in for them.

        Each old segment is read with the aborted transactions that overlap it (Kafka 0.11): their
        batches go, and an aborted transaction whose data and marker are cleaned here is written
        again into the cleaned segment's transaction index, so a Fetch still names it."""
        first = group[0]
        cleaned = LogSegment(
            log_.dir, first.base_offset, log_.config.index_interval, log_.config.max_index_size,
            time=self.time, suffix=".cleaned",
        )  # fmt: skip
        # Kafka's ``log.activeProducers``: a producer's last batch is kept whatever its records, so
        # that the producer state rebuilt from the log still knows the producer's last sequence.
        state = log_.producer_state_manager
        active_producers = state.producers if state is not None else {}
        for i, old in enumerate(group):
            upper_bound_offset = group[i + 1].base_offset if i + 1 < len(group) else stats.end_offset
            transaction_metadata = CleanedTransactionMetadata(
                log_.collect_aborted_transactions(old.base_offset, upper_bound_offset), cleaned.txn_index
            )
            retain_deletes = old.largest_timestamp > delete_horizon_ms
            stats.bytes_before += old.size_in_bytes()
            self.clean_into(
                old, cleaned, offset_map, retain_deletes, transaction_metadata, active_producers, stats
            )
        cleaned.on_become_inactive_segment()
        cleaned.flush()
        cleaned.index.trim_to_valid_size()
        cleaned.time_index.trim_to_valid_size()
        stats.bytes_after += cleaned.size_in_bytes()
        cleaned.change_file_suffixes(".cleaned", ".swap")
        log_.replace_segments(cleaned, group)

    def clean_into(
        self,
        source: LogSegment,
        dest: LogSegment,
        offset_map: dict[bytes, int],
        retain_deletes: bool,
        transaction_metadata: CleanedTransactionMetadata,
        active_producers: dict,
        stats: CleanerStats,
    ) -> None:
        """Copy what ``source`` keeps into ``dest`` (Kafka's ``cleanInto`` with its ``RecordFilter``
        and ``MemoryRecords.filterTo``): a batch is dropped whole, or each record is weighed."""
        latest_offset = stats.end_offset - 1
        for batch in _batches(source):
            stats.records_read += batch.num_records
            is_v2 = batch.magic >= MAGIC_VALUE_V2
            # Markers wait out delete.retention.ms as tombstones do (Kafka piggy-backs on it), and a
            # marker never goes while a record of its transaction is still in the log.
            discard_batch_records = is_v2 and _should_discard_batch(
                batch, transaction_metadata, retain_txn_markers=retain_deletes
            )
            entry = active_producers.get(batch.producer_id) if is_v2 and batch.producer_id >= 0 else None
            retain_last_batch_sequence = entry is not None and entry.last_seq == batch.last_sequence
            if discard_batch_records and not retain_last_batch_sequence:
                continue
            kept = [
                r
                for r in batch
                if (retain_last_batch_sequence and r.sequence == batch.last_sequence)
                or (
                    not discard_batch_records
                    and (r.offset > latest_offset or self.should_retain(r, offset_map, retain_deletes))
                )
            ]
            stats.records_kept += len(kept)
            if not kept:
                continue
            if len(kept) == batch.num_records:
                # Kept whole, the batch's bytes are copied: its flags, producer fields and offsets stay.
                _append_batch_bytes(dest, batch, kept)
            elif not is_v2:
                _write_legacy_kept(dest, batch, kept)
            else:
                _write_retained_records(dest, batch, kept)


class CleanedTransactionMetadata:
    """The transactions met while cleaning, in offset order (Kafka 0.11's ``CleanedTransactionMetadata``).

    Given the aborted transactions from the transaction index, it says which batches belong to an
    aborted transaction (and so may go), when a marker may go, and writes each aborted
    transaction whose ABORT marker it passes into the cleaned segment's index.
    """

    def __init__(
        self, aborted_transactions: Iterable[AbortedTxn], transaction_index: TransactionIndex | None = None
    ) -> None:
        # a min-heap by first offset: a transaction begins where the cleaner first meets it
        self.aborted_transactions = [(t.first_offset, t.last_offset, t) for t in aborted_transactions]
        heapq.heapify(self.aborted_transactions)
        self.transaction_index = transaction_index
        self.ongoing_committed_txns: set[int] = set()
        self.ongoing_aborted_txns: dict[int, AbortedTxn] = {}

    def on_control_batch_read(self, control_batch) -> bool:
        """Note a marker just passed; return whether it may be discarded. An ABORT marker may go
        (its transaction's data goes with it, and the index keeps the transaction); a COMMIT marker
        may go only if no record of its transaction was met, since a read_committed consumer reads
        them only once the marker is there."""
        self._consume_aborted_txns_up_to(control_batch.last_offset)
        control_record = next(iter(control_batch))
        producer_id = control_batch.producer_id
        control_type = ControlRecordType.parse(control_record.key)
        if control_type is ControlRecordType.ABORT:
            aborted_txn = self.ongoing_aborted_txns.pop(producer_id, None)
            if aborted_txn is not None and self.transaction_index is not None:
                self.transaction_index.append(aborted_txn)
            return True
        if control_type is ControlRecordType.COMMIT:
            if producer_id in self.ongoing_committed_txns:
                self.ongoing_committed_txns.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, batch) -> bool:
        """Note a data batch just passed; return whether it belongs to an aborted transaction."""
        if batch.magic < MAGIC_VALUE_V2:
            return False
        self._consume_aborted_txns_up_to(batch.last_offset)
        if not batch.is_transactional:
            return False
        if batch.producer_id in self.ongoing_aborted_txns:
            return True
        self.ongoing_committed_txns.add(batch.producer_id)
        return False

    def _consume_aborted_txns_up_to(self, offset: int) -> None:
        while self.aborted_transactions and self.aborted_transactions[0][0] <= offset:
            aborted_txn = heapq.heappop(self.aborted_transactions)[2]
            self.ongoing_aborted_txns[aborted_txn.producer_id] = aborted_txn


def _should_discard_batch(
    batch, transaction_metadata: CleanedTransactionMetadata, retain_txn_markers: bool
) -> bool:
    if batch.is_control_batch:
        can_discard_control_batch = transaction_metadata.on_control_batch_read(batch)
        return can_discard_control_batch and not retain_txn_markers
    return transaction_metadata.on_batch_read(batch)


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


def _max_timestamp_of(kept: list) -> tuple[int, int]:
    max_ts = max(r.timestamp for r in kept)
    return max_ts, next(r.offset for r in kept if r.timestamp == max_ts)


def _append_batch_bytes(dest: LogSegment, batch, kept: list) -> None:
    """A batch kept whole is copied as it is (Kafka's ``writeOriginalBatch``)."""
    max_ts, offset_of_max = _max_timestamp_of(kept)
    first_offset = batch.base_offset if batch.magic >= MAGIC_VALUE_V2 else kept[0].offset
    dest.append(first_offset, max_ts, offset_of_max, MemoryRecords(bytes(batch.buffer())))


def _write_retained_records(dest: LogSegment, batch, kept: list) -> None:
    """A v2 batch that lost records is built again (Kafka's ``buildRetainedRecordsInto``) with the
    old batch's base offset, codec, timestamp type, leader epoch, producer id, epoch and base
    sequence and its transactional and control flags: each kept record keeps its offset (gaps are
    what compaction leaves) and so its sequence.

    Differs: Kafka 0.11 also keeps the old batch's last offset (``overrideLastOffset``); here the
    batch ends at its last kept record. The one batch whose last sequence matters, an active
    producer's last, keeps its last record (``retain_last_batch_sequence``) and so its last offset."""
    builder = MemoryRecordsBuilder(
        compression=batch.compression_type, timestamp_type=batch.timestamp_type,
        base_offset=batch.base_offset, log_append_time=batch.max_timestamp,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
        is_control_batch=batch.is_control_batch, partition_leader_epoch=batch.partition_leader_epoch,
    )  # fmt: skip
    for r in kept:
        builder.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
    max_ts, offset_of_max = _max_timestamp_of(kept)
    dest.append(batch.base_offset, max_ts, offset_of_max, builder.build())


def _write_legacy_kept(dest: LogSegment, batch, kept: list) -> None:
    """A v0/v1 entry keeps its format (a log of a topic whose format was older holds them). A
    wrapper that lost records is written again uncompressed, one message per record at its own
    offset, since ``build_legacy_entries`` writes consecutive offsets and a compacted wrapper has
    gaps (Kafka writes a wrapper whose inner offsets have the gaps)."""
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
    max_ts, offset_of_max = _max_timestamp_of(kept)
    dest.append(kept[0].offset, max_ts, offset_of_max, MemoryRecords(bytes(out)))


def _batches(segment: LogSegment):
    for header in segment.log.batch_headers(0):
        (batch,) = iter_batches(segment.log.read_bytes(header.position, header.size))
        yield batch


def _records(segment: LogSegment):
    for batch in _batches(segment):
        yield from batch
