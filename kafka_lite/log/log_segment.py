"""A log segment: one ``.log`` file of batches with its ``.index``, ``.timeindex`` and ``.txnindex``.

Mirrors: kafka.log.LogSegment (core/src/main/scala/kafka/log/LogSegment.scala, Kafka 0.10.1; the
         transaction index, ``updateTxnIndex`` and ``collectAbortedTxns`` are Kafka 0.11.0's)
Book:    chapter 6, 6.1.2 (writing to a segment), 6.1.3 (rolling), 6.1.4 (reading)
Labs:    lab 2 (LogSegment.append, LogSegment.read)
Differs: the book's segment holds a FileMessageSet of v0/v1 messages; ours holds v2 batches, and
         v0/v1 entries where the topic's ``message.format.version`` is or was older (Kafka 0.11's
         FileRecords too), so an index entry points at a *batch* or an entry, at its first offset.

The three files share a name, the segment's base offset padded to 20 digits
(``00000000000000368769.log``), so a directory listing sorts segments by offset and a lookup by
offset is a floor search over file names before it ever opens a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from kafka_lite.common.errors import CorruptRecordException, KafkaException
from kafka_lite.common.record import FileRecords, MemoryRecords
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.record.memory_records import iter_batches
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.log.offset_index import OffsetIndex
from kafka_lite.log.time_index import TimeIndex
from kafka_lite.log.transaction_index import (
    TXN_INDEX_SUFFIX,
    AbortedTxn,
    TransactionIndex,
    TxnIndexSearchResult,
)

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"


def filename_prefix(offset: int) -> str:
    """Kafka's ``Log.filenamePrefixFromOffset``: the offset, zero-padded to 20 digits."""
    return f"{offset:020d}"


class LogOffsetMetadata(NamedTuple):
    """Where an offset sits: the offset, its segment's base offset and its byte position there.

    Immutable, as Kafka's: the log replaces its LEO metadata whole on each append, so a reader that
    takes it without the log's lock still sees three fields that belong together.
    """

    message_offset: int
    segment_base_offset: int = -1
    relative_position_in_segment: int = -1

    def message_offset_only(self) -> bool:
        """Only the offset is known, not where it sits (Kafka's ``messageOffsetOnly``)."""
        return self.segment_base_offset == -1 or self.relative_position_in_segment == -1

    def on_older_segment(self, that: LogOffsetMetadata) -> bool:
        """This offset sits in a segment older than ``that``'s (Kafka's ``onOlderSegment``)."""
        self._check_positions(that)
        return self.segment_base_offset < that.segment_base_offset

    def position_diff(self, that: LogOffsetMetadata) -> int:
        """The bytes from ``that`` to this offset, both in one segment (Kafka's ``positionDiff``): how
        a ``DelayedFetch`` counts the bytes waiting for it without reading them."""
        self._check_positions(that)
        if self.segment_base_offset != that.segment_base_offset:
            raise KafkaException(f"{self} and {that} are in different segments: no position difference")
        return self.relative_position_in_segment - that.relative_position_in_segment

    def _check_positions(self, that: LogOffsetMetadata) -> None:
        if self.message_offset_only() or that.message_offset_only():
            raise KafkaException(f"{self} or {that} has no segment position to compare")


@dataclass(frozen=True)
class FetchDataInfo:
    """What a read returns: where it started, and a slice of the segment file to send."""

    fetch_offset_metadata: LogOffsetMetadata
    records: FileRecords | MemoryRecords
    first_entry_incomplete: bool = False


class LogSegment:
    """Appends batches to the file and keeps the two sparse indexes in step with it."""

    def __init__(
        self,
        directory: str | os.PathLike,
        base_offset: int,
        index_interval_bytes: int = 4096,
        max_index_size: int = 10 * 1024 * 1024,
        roll_jitter_ms: int = 0,
        time: Time = SYSTEM,
        suffix: str = "",
    ) -> None:
        # ``suffix`` names files being built or thrown away (``.cleaned``, ``.swap``, ``.deleted``).
        directory = Path(directory)
        prefix = filename_prefix(base_offset)
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self.time = time
        self.log = FileRecords.open(directory / (prefix + LOG_SUFFIX + suffix))
        self.index = OffsetIndex(directory / (prefix + INDEX_SUFFIX + suffix), base_offset, max_index_size)
        self.time_index = TimeIndex(
            directory / (prefix + TIME_INDEX_SUFFIX + suffix), base_offset, max_index_size
        )
        # the aborted transactions whose markers are in this segment (created at the first one)
        self.txn_index = TransactionIndex(base_offset, directory / (prefix + TXN_INDEX_SUFFIX + suffix))
        self.created = time.milliseconds()
        self.bytes_since_last_index_entry = 0
        # The first batch's timestamp, which rolling by time (segment.ms) measures from.
        self.rolling_based_timestamp: int | None = None
        self.max_timestamp_so_far = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset
        self._load_largest_timestamp()

    # -- writing --------------------------------------------------------------------------------------------

    # --8<-- [start:append]
    def append(
        self,
        first_offset: int,
        largest_timestamp: int,
        offset_of_largest_timestamp: int,
        records: MemoryRecords,
    ) -> None:
        """Append batches whose offsets are already assigned, adding index entries every interval.

        The check comes *before* this append's bytes are counted, so the first append to a segment
        never writes an entry (position 0 needs none: a lookup below the first entry starts there).
        """
        # BEGIN SOLUTION
        data = records.buffer()
        size = len(data)
        if size == 0:
            return
        physical_position = self.log.size_in_bytes()
        if physical_position == 0:
            self.rolling_based_timestamp = largest_timestamp
        self.log.append(data)
        if largest_timestamp > self.max_timestamp_so_far:
            self.max_timestamp_so_far = largest_timestamp
            self.offset_of_max_timestamp = offset_of_largest_timestamp
        if self.bytes_since_last_index_entry > self.index_interval_bytes:
            self.index.append(first_offset, physical_position)
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += size
        # END SOLUTION

    # --8<-- [end:append]

    def update_txn_index(self, completed_txn, last_stable_offset: int) -> None:
        """A transaction ended with a marker in this segment: an aborted one gets an index entry
        (Kafka 0.11's ``updateTxnIndex``); a committed one needs none."""
        if completed_txn.is_aborted:
            self.txn_index.append(
                AbortedTxn(
                    completed_txn.producer_id,
                    completed_txn.first_offset,
                    completed_txn.last_offset,
                    last_stable_offset,
                )
            )

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    # -- reading --------------------------------------------------------------------------------------------

    def translate_offset(self, offset: int, starting_position: int = 0) -> tuple[int, int] | None:
        """``(position, size)`` of the batch holding ``offset``: index lookup, then a short scan."""
        mapping = self.index.lookup(offset)
        return self.log.search_for_offset_with_size(offset, max(mapping.position, starting_position))

    # --8<-- [start:read]
    def read(
        self,
        start_offset: int,
        max_offset: int | None,
        max_size: int,
        max_position: int | None = None,
        min_one_message: bool = False,
    ) -> FetchDataInfo | None:
        """Up to ``max_size`` bytes of whole batches from the one holding ``start_offset``.

        ``max_offset`` (the high watermark, for consumers) caps the read at that offset's batch;
        ``max_position`` caps it at a byte position (the active segment's end when the read began).
        With ``min_one_message`` the first batch is returned whole even if larger than ``max_size``,
        so a consumer can never be stuck behind one big batch. None means ``start_offset`` is past
        the end of this segment.
        """
        # BEGIN SOLUTION
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment {self.log.path}")
        log_size = self.log.size_in_bytes()  # the file may grow meanwhile: read one consistent size
        max_position = log_size if max_position is None else max_position
        start = self.translate_offset(start_offset)
        if start is None:
            return None
        start_position, batch_size = start
        metadata = LogOffsetMetadata(start_offset, self.base_offset, start_position)
        adjusted_max_size = max(max_size, batch_size) if min_one_message else max_size
        if adjusted_max_size == 0:
            return FetchDataInfo(metadata, MemoryRecords(b""))
        if max_offset is None:
            length = min(max_position - start_position, adjusted_max_size)
        else:
            if max_offset < start_offset:
                return FetchDataInfo(metadata, MemoryRecords(b""))
            end = self.translate_offset(max_offset, start_position)
            end_position = log_size if end is None else end[0]
            length = min(min(max_position, end_position) - start_position, adjusted_max_size)
        return FetchDataInfo(
            metadata,
            self.log.read(start_position, length),
            first_entry_incomplete=adjusted_max_size < batch_size,
        )
        # END SOLUTION

    # --8<-- [end:read]

    def find_offset_by_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record with a timestamp >= ``timestamp``, or None."""
        entry = self.time_index.lookup(timestamp)
        position = self.index.lookup(entry.offset).position
        return self.log.search_for_timestamp(timestamp, position)

    def next_offset(self) -> int:
        """The offset after the last batch in this segment (its base offset if empty)."""
        position = self.index.lookup(self.index.last_offset).position
        last = None
        for header in self.log.batch_headers(position):
            last = header
        return self.base_offset if last is None else last.last_offset + 1

    # -- recovery and truncation ---------------------------------------------------------------------------

    # --8<-- [start:recover]
    def recover(self, max_message_size: int = INT32_MAX) -> int:
        """Rebuild both indexes from the log, validating every batch; cut the file at the first bad one.

        Returns the number of bytes truncated. Used after an unclean shutdown for the segments after
        the recovery point, whose tails may hold a half-written batch or bytes the disk never got.
        """
        self.index.truncate()
        self.index.resize(self.index.max_index_size)
        self.time_index.truncate()
        self.time_index.resize(self.time_index.max_index_size)
        valid_bytes = 0
        last_index_entry = 0
        self.max_timestamp_so_far = NO_TIMESTAMP
        size = self.log.size_in_bytes()
        try:
            for header in self.log.batch_headers(0):
                if header.size > max_message_size:
                    raise CorruptRecordException(
                        f"batch at byte {header.position} is {header.size} bytes, over the limit",
                        position=header.position,
                    )
                (batch,) = iter_batches(self.log.read_bytes(header.position, header.size))
                batch.ensure_valid()
                if batch.max_timestamp > self.max_timestamp_so_far:
                    self.max_timestamp_so_far = batch.max_timestamp
                    self.offset_of_max_timestamp = batch.last_offset
                if valid_bytes - last_index_entry > self.index_interval_bytes:
                    self.index.append(batch.base_offset, valid_bytes)
                    self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp)
                    last_index_entry = valid_bytes
                valid_bytes += header.size
        except CorruptRecordException:
            pass  # everything from valid_bytes on is dropped below
        truncated = size - valid_bytes
        self.log.truncate_to(valid_bytes)
        self.index.trim_to_valid_size()
        self.time_index.maybe_append(
            self.max_timestamp_so_far, self.offset_of_max_timestamp, skip_full_check=True
        )
        self.time_index.trim_to_valid_size()
        # The transaction index keeps the markers still in the log; one whose entry the crash lost is
        # added back when the partition replays the producer state (``ProducerStateManager.load``).
        self.txn_index.truncate_to(self.next_offset())
        self.bytes_since_last_index_entry = valid_bytes - last_index_entry
        return truncated

    # --8<-- [end:recover]

    def truncate_to(self, offset: int) -> int:
        """Remove every batch whose base offset is >= ``offset``; return the bytes removed."""
        mapping = self.translate_offset(offset)
        if mapping is None:
            return 0
        self.index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        self.index.resize(self.index.max_index_size)
        self.time_index.resize(self.time_index.max_index_size)
        removed = self.log.truncate_to(mapping[0])
        if self.log.size_in_bytes() == 0:
            self.created = self.time.milliseconds()
            self.rolling_based_timestamp = None
        self.bytes_since_last_index_entry = 0
        self._load_largest_timestamp(read_to_log_end=True)
        return removed

    def _load_largest_timestamp(self, read_to_log_end: bool = False) -> None:
        # The time index's last entry is a lower bound; batches after it may hold larger timestamps.
        last = self.time_index.last_entry
        self.max_timestamp_so_far, self.offset_of_max_timestamp = last.timestamp, last.offset
        if read_to_log_end:
            position = self.index.lookup(last.offset).position
            timestamp, offset = self.log.largest_timestamp_after(position)
            if timestamp > self.max_timestamp_so_far:
                self.max_timestamp_so_far, self.offset_of_max_timestamp = timestamp, offset

    # -- rolling ------------------------------------------------------------------------------------------

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """How long this segment has been filling, by record timestamps when there are any."""
        if self.rolling_based_timestamp is None:
            first = next(self.log.batch_headers(0), None)
            if first is not None:
                (batch,) = iter_batches(self.log.read_bytes(first.position, first.size))
                self.rolling_based_timestamp = next(iter(batch)).timestamp if batch.num_records else None
        if self.rolling_based_timestamp is not None and self.rolling_based_timestamp >= 0:
            return message_timestamp - self.rolling_based_timestamp
        return now - self.created

    def on_become_inactive_segment(self) -> None:
        """On roll: record the segment's largest timestamp in the time index's reserved last slot."""
        self.time_index.maybe_append(
            self.max_timestamp_so_far, self.offset_of_max_timestamp, skip_full_check=True
        )

    # -- size, time, files -----------------------------------------------------------------------------------

    def size_in_bytes(self) -> int:
        return self.log.size_in_bytes()

    @property
    def last_modified(self) -> int:
        return int(self.log.path.stat().st_mtime * 1000)

    @property
    def largest_timestamp(self) -> int:
        """The largest record timestamp, or the file's mtime when no record has one (retention uses it)."""
        return self.max_timestamp_so_far if self.max_timestamp_so_far >= 0 else self.last_modified

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Rename the three files, e.g. ``.cleaned`` -> ``.swap`` -> "" as compaction swaps segments in."""
        for f in (self.log, self.index, self.time_index, self.txn_index):
            name = f.path.name
            if old_suffix and not name.endswith(old_suffix):
                raise ValueError(f"{f.path} does not end with {old_suffix}")
            base = name[: len(name) - len(old_suffix)] if old_suffix else name
            f.rename_to(f.path.with_name(base + new_suffix))

    def flush(self) -> None:
        self.log.flush()
        self.index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        self.time_index.maybe_append(
            self.max_timestamp_so_far, self.offset_of_max_timestamp, skip_full_check=True
        )
        self.index.close()
        self.time_index.close()
        self.txn_index.close()
        self.log.close()

    def delete(self) -> None:
        self.log.close()
        self.log.path.unlink(missing_ok=True)
        self.index.delete()
        self.time_index.delete()
        self.txn_index.delete()

    def __repr__(self) -> str:
        return f"LogSegment(baseOffset={self.base_offset}, size={self.size_in_bytes()})"
