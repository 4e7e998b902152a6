"""A partition's log: a sequence of segments, with offset assignment, reads, rolls, retention, recovery.

Mirrors: kafka.log.Log (core/src/main/scala/kafka/log/Log.scala, Kafka 0.10.1, with 0.11.0's leader
         epoch cache, log start offset, KIP-107, and message format per topic) and the v2 in-place
         path of kafka.log.LogValidator (``validate_messages_and_assign_offsets`` below; Kafka 0.11.0)
Book:    chapter 6, 6.1.1-6.1.4 (partitions, segments, writing, rolling, reading); 6.2 (truncation)
Differs: segments are found by ``bisect`` over sorted base offsets (Kafka: a ConcurrentSkipListMap);
         a deleted segment is removed at once (Kafka waits ``file.delete.delay.ms``); v2 batches in
         a v2 topic are validated by header and CRC without decoding a record (unless the topic
         bounds its timestamps, ``log_validator.py``), and keep the producer's codec; a request
         ending in a partial batch is refused whole (Kafka trims it); recovery does not re-assign
         leader epochs from the recovered batches.

Why: on Linux an open file outlives its unlinking, so in-flight reads survive an immediate delete.
Decoding no record keeps the produce path from building a Python object per record; Kafka 0.11's
LogValidator walks the records whatever the topic's settings (each timestamp, the keys of a
compacted topic), and ``compression.type`` is accepted, not applied. The epoch checkpoint is
flushed at every change, before the records are, so recovery has no lost checkpoint to rebuild
(Kafka's ``LogSegment.recover`` rebuilds one).

Formats (Kafka 0.11): the topic's ``message.format.version`` names the magic an append writes. What
a producer sends in another magic is converted on append (``convert_and_assign_offsets`` in
``log_validator.py``): the book's message sets up to v2, or v2 down to v1 or v0 for a topic kept at
an older format; a message set already in a v0/v1 topic's format is numbered in place where it can
be (``assign_offsets_legacy_in_place``), as a v2 batch is in a v2 topic. Changing the setting changes only what is written from then on, so one log may
hold v0, v1 and v2 entries side by side; every reader here (segments, indexes, recovery, the
cleaner, followers) walks them with ``iter_batches``, which tells the formats apart by the magic byte.

The log end offset (LEO) is the next offset to assign. An append patches each batch's base offset
with the LEO and advances it by the batch's record span, without decoding a record.

Leader epochs (Kafka 0.11, KIP-101): a leader's append also stamps the leader's epoch into each
batch's ``partitionLeaderEpoch`` (outside the CRC, like the base offset) and records in
``leader_epoch_cache`` the offset where a new epoch begins; a follower's append records the epochs
its leader stamped. Truncation and retention trim the cache with the log, so it always describes
the records the log holds (``kafka_lite/log/epoch/leader_epoch_file_cache.py``).
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_lite.common.errors import (
    CorruptRecordException,
    KafkaException,
    OffsetOutOfRangeException,
    RecordBatchTooLargeException,
    RecordTooLargeException,
    UnsupportedForMessageFormatException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.api_version import KAFKA_0_10_0_IV0
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import MAGIC_VALUE_V2, NO_TIMESTAMP
from kafka_lite.common.record.default_record_batch import (
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
)
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.log.epoch.leader_epoch_checkpoint_file import LeaderEpochCheckpointFile
from kafka_lite.log.epoch.leader_epoch_file_cache import LeaderEpochFileCache
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    FetchDataInfo,
    LogOffsetMetadata,
    LogSegment,
    filename_prefix,
)
from kafka_lite.log.log_validator import (
    DEFAULT_TIMESTAMP_DIFF_MAX_MS,
    ValidationAndOffsetAssignResult,
    assign_offsets_legacy_in_place,
    convert_and_assign_offsets,
    validate_timestamps,
)
from kafka_lite.log.offset_index import CorruptIndexException, InvalidOffsetException
from kafka_lite.log.transaction_index import TXN_INDEX_SUFFIX, AbortedTxn

if TYPE_CHECKING:
    from kafka_lite.log.producer_state_manager import ProducerStateManager

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"  # in the log directory: "the last stop was clean"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
EARLIEST_TIMESTAMP = -2  # ListOffsets' special timestamps
LATEST_TIMESTAMP = -1
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


@dataclass
class LogAppendInfo:
    """What an append learned and did (Kafka's ``LogAppendInfo``)."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    source_codec: CompressionType
    shallow_count: int
    valid_bytes: int
    # (position, lastOffsetDelta, maxTimestamp) of each batch, in order: where the validator patches
    # each batch's base offset, and how the partition learns each producer batch's offsets.
    batch_spans: list[tuple[int, int, int]] = field(default_factory=list, repr=False)
    offsets_monotonic: bool = True
    # the magic every batch has, or -1 if they differ (Kafka asks ``records.hasMatchingMagic``)
    magic: int = MAGIC_VALUE_V2


# --8<-- [start:validate_messages_and_assign_offsets]
def validate_messages_and_assign_offsets(
    records: MemoryRecords,
    batch_spans: list[tuple[int, int, int]],
    first_offset: int,
    now: int,
    log_append_time: bool,
    partition_leader_epoch: int,
    timestamp_diff_max_ms: int = DEFAULT_TIMESTAMP_DIFF_MAX_MS,
) -> ValidationAndOffsetAssignResult:
    """Assign offsets from ``first_offset`` to the batches, in place.

    Kafka's ``LogValidator.validateMessagesAndAssignOffsets`` on its in-place path, the one a v2
    batch that keeps its codec takes. Kafka checks each batch and each record here; the batches'
    headers and CRCs were checked by ``Log._analyze_and_validate_records``, and the timestamps are
    checked first, by ``validate_timestamps`` (``log_validator.py``), which decodes records only for
    a topic that bounds how far a timestamp may be from the broker's clock. For each batch, in order:

    1. write its base offset (Kafka's ``setLastOffset``) and the leader's epoch (Kafka's
       ``setPartitionLeaderEpoch``): both outside the CRC, no checksum to redo;
    2. with ``LogAppendTime``, stamp the broker's time as its max timestamp, and redo its CRC;
    3. keep the largest max timestamp and the last offset of its batch (Kafka's
       ``shallowOffsetOfMaxTimestamp``: the headers name a batch, not a record).

    The batches are patched where they lie, in the produce request's receive buffer, as Kafka's
    validator patches the request's ByteBuffer; records in a read-only buffer are copied once.
    """
    # refuse a bad timestamp before anything is patched: a refused request leaves no trace
    validate_timestamps(records, now, log_append_time, timestamp_diff_max_ms)
    records = records.writable()
    buf = records.buffer()
    offset_counter = first_offset
    max_timestamp, offset_of_max_timestamp = NO_TIMESTAMP, -1
    for position, last_offset_delta, batch_max_timestamp in batch_spans:
        set_base_offset(buf, position, offset_counter)
        set_partition_leader_epoch(buf, position, partition_leader_epoch)
        offset_counter += last_offset_delta + 1
        if log_append_time:
            set_log_append_time(buf, position, now)
        elif batch_max_timestamp > max_timestamp:
            max_timestamp, offset_of_max_timestamp = batch_max_timestamp, offset_counter - 1
    if log_append_time:
        max_timestamp, offset_of_max_timestamp = now, offset_counter - 1
    return ValidationAndOffsetAssignResult(
        records, max_timestamp, offset_of_max_timestamp, offset_counter - 1
    )


# --8<-- [end:validate_messages_and_assign_offsets]


def parse_topic_partition(directory: Path) -> tuple[str, int]:
    """``orders-3`` -> ``("orders", 3)``; a directory not named so is an error that names it."""
    m = _PARTITION_DIR.match(directory.name)
    if not m:
        raise KafkaException(
            f"Found directory {directory}, '{directory.name}' is not in the form of topic-partition"
        )
    return m.group("topic"), int(m.group("partition"))


class Log:
    """One partition's log. Thread-safe: appends, rolls and truncations hold the log's lock."""

    def __init__(
        self,
        directory: str | os.PathLike,
        config: LogConfig,
        recovery_point: int = 0,
        time: Time = SYSTEM,
        log_start_offset: int = 0,
    ):
        """``log_start_offset``: where the log begins for readers, from ``log-start-offset-checkpoint``;
        it may be inside the first segment after a DeleteRecords (KIP-107), never before it."""
        self.dir = Path(directory)
        self.config = config
        self.time = time
        self.recovery_point = recovery_point
        self.topic, self.partition = parse_topic_partition(self.dir)
        self._lock = threading.RLock()
        self._bases: list[int] = []  # sorted base offsets: the skip list's keys
        self._segments: dict[int, LogSegment] = {}
        self.last_flushed_time = time.milliseconds()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.leader_epoch_cache = LeaderEpochFileCache(
            (self.topic, self.partition),
            lambda: self.log_end_offset,
            LeaderEpochCheckpointFile.in_dir(self.dir),
        )
        self._load_segments()
        self._log_start_offset = max(log_start_offset, self._bases[0])
        active = self.active_segment
        self._next_offset_metadata = LogOffsetMetadata(
            active.next_offset(), active.base_offset, active.size_in_bytes()
        )
        # The checkpoint is flushed before the records are: after a crash it may name epochs whose
        # records were lost (beyond the LEO), or, mid-retention, entries below the log start.
        self.leader_epoch_cache.clear_and_flush_latest(self.log_end_offset)
        self.leader_epoch_cache.clear_and_flush_earliest(self.log_start_offset)
        # Kafka builds a Log with its ProducerStateManager. Here the partition keeps the producer
        # state beside the log, and the manager names itself here when it loads this log's state
        # (``ProducerStateManager.load``), so that every move of the log start reaches it.
        self.producer_state_manager: ProducerStateManager | None = None

    @property
    def name(self) -> str:
        return self.dir.name

    # -- segments -----------------------------------------------------------------------------------------

    def _new_segment(self, base_offset: int) -> LogSegment:
        return LogSegment(
            self.dir, base_offset, self.config.index_interval, self.config.max_index_size,
            self.config.segment_jitter_ms, self.time,
        )  # fmt: skip

    def _add_segment(self, segment: LogSegment) -> None:
        if segment.base_offset not in self._segments:
            bisect.insort(self._bases, segment.base_offset)
        self._segments[segment.base_offset] = segment

    def _remove_segment(self, base_offset: int) -> LogSegment:
        self._bases.remove(base_offset)
        return self._segments.pop(base_offset)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[self._bases[-1]]

    def log_segments(self, from_offset: int | None = None, to_offset: int | None = None) -> list[LogSegment]:
        """Segments that may hold offsets in ``[from_offset, to_offset)`` (all of them by default)."""
        with self._lock:
            bases = self._bases
            lo = 0 if from_offset is None else max(0, bisect.bisect_right(bases, from_offset) - 1)
            hi = len(bases) if to_offset is None else bisect.bisect_left(bases, to_offset)
            return [self._segments[b] for b in bases[lo:hi]]

    def _floor_segment(self, offset: int) -> LogSegment | None:
        i = bisect.bisect_right(self._bases, offset) - 1
        return self._segments[self._bases[i]] if i >= 0 else None

    @property
    def number_of_segments(self) -> int:
        return len(self._bases)

    # -- loading and recovery --------------------------------------------------------------------------------

    # --8<-- [start:load_segments]
    def _load_segments(self) -> None:
        """Open every segment in the directory, rebuilding missing or corrupt indexes; then recover."""
        self.dir.mkdir(parents=True, exist_ok=True)
        swap_logs = []
        for path in list(self.dir.iterdir()):
            # Leftovers of an interrupted delete or compaction. A ``.deleted`` or ``.cleaned`` file is
            # garbage (the live segments are still there); a ``.log.swap`` is a finished compaction
            # whose swap was cut short: it is completed below. Swap indexes are rebuilt, not trusted.
            if path.name.endswith((DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX)):
                path.unlink()
            elif path.name.endswith(LOG_SUFFIX + SWAP_FILE_SUFFIX):
                swap_logs.append(path)
            elif path.name.endswith(SWAP_FILE_SUFFIX):
                path.unlink()
        for path in sorted(self.dir.iterdir()):
            if path.suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
                if not path.with_suffix(LOG_SUFFIX).exists():
                    path.unlink()  # an orphaned index with no log: nothing to index
            elif path.suffix == LOG_SUFFIX:
                try:
                    base_offset = int(path.stem)
                except ValueError:
                    raise KafkaException(
                        f"{path} is not a segment file: its name is not a 20-digit offset"
                    ) from None
                had_index = path.with_suffix(INDEX_SUFFIX).exists()
                segment = self._new_segment(base_offset)
                try:
                    if not had_index:
                        raise CorruptIndexException(f"no index file for {path}")
                    segment.index.sanity_check()
                    segment.time_index.sanity_check()
                except CorruptIndexException:
                    segment.recover(self.config.max_message_size)  # rebuilds both indexes from the log
                self._add_segment(segment)
        for path in swap_logs:
            self._complete_swap(int(path.name[: -len(LOG_SUFFIX + SWAP_FILE_SUFFIX)]))
        if not self._bases:
            self._add_segment(self._new_segment(0))
        else:
            self._recover_log()
            # The active segment's indexes were trimmed when it was closed: give them room again.
            self.active_segment.index.resize(self.config.max_index_size)
            self.active_segment.time_index.resize(self.config.max_index_size)

    # --8<-- [end:load_segments]

    def _complete_swap(self, base_offset: int) -> None:
        """Finish a compaction's swap: the swap segment replaces every live segment it covers."""
        swap = LogSegment(
            self.dir, base_offset, self.config.index_interval, self.config.max_index_size,
            self.config.segment_jitter_ms, self.time, suffix=SWAP_FILE_SUFFIX,
        )  # fmt: skip
        swap.recover(self.config.max_message_size)
        end = swap.next_offset()
        self.replace_segments(swap, [s for s in self.log_segments() if base_offset <= s.base_offset < end])

    def _has_clean_shutdown_file(self) -> bool:
        return (self.dir.parent / CLEAN_SHUTDOWN_FILE).exists()

    # --8<-- [start:recover_log]
    def _recover_log(self) -> None:
        """After an unclean shutdown, re-validate the segments written since the recovery point.

        Everything before the recovery point was flushed (fsync) and checkpointed, so it is
        trusted. From there on, each segment is scanned; the first one found damaged is cut at the
        damage, and every segment after it is deleted: its batches would leave a gap in offsets.
        """
        if self._has_clean_shutdown_file():
            self.recovery_point = self.active_segment.next_offset()
            return
        unflushed = self.log_segments(self.recovery_point, None)
        for i, segment in enumerate(unflushed):
            try:
                truncated = segment.recover(self.config.max_message_size)
            except InvalidOffsetException:
                truncated = segment.truncate_to(segment.base_offset)
            if truncated > 0:
                for later in unflushed[i + 1 :]:
                    self._delete_segment(later)
                break

    # --8<-- [end:recover_log]

    # -- appending -----------------------------------------------------------------------------------------

    # --8<-- [start:append]
    def append(
        self,
        records: MemoryRecords,
        assign_offsets: bool = True,
        leader_epoch: int = -1,
        is_from_client: bool = True,
    ) -> LogAppendInfo:
        """Validate ``records`` and append them, assigning offsets from the LEO (as a leader does).

        A leader stamps ``leader_epoch`` into every batch and records it in the leader epoch cache.
        With ``assign_offsets=False`` (a follower copying its leader) the batches keep their offsets,
        which must increase and start at or after the LEO, and the epochs their leader stamped.
        ``is_from_client=False``: the broker's own records (transaction markers, Kafka 0.11).
        """
        append_info = self._analyze_and_validate_records(records, is_from_client)
        # if there are no valid batches, there is nothing to append
        if append_info.shallow_count == 0:
            return append_info
        # they are valid, insert them in the log
        with self._lock:
            now = self.time.milliseconds()  # one clock read serves the validator and the roll check
            if assign_offsets:
                # assign offsets to the batches, from the log end offset
                append_info.first_offset = self._next_offset_metadata.message_offset
                to_magic = self.config.message_format_version.message_format_version
                if append_info.magic == to_magic == MAGIC_VALUE_V2:
                    # the producer wrote the topic's format: offsets patched in place, no record decoded
                    validated = validate_messages_and_assign_offsets(
                        records,
                        append_info.batch_spans,
                        append_info.first_offset,
                        now,
                        self.config.log_append_time,
                        leader_epoch,
                        self.config.message_timestamp_difference_max_ms,
                    )
                else:
                    validated = None
                    if append_info.magic == to_magic:
                        # a v0/v1 message set in its v0/v1 topic's format: in place where it can be
                        validated = assign_offsets_legacy_in_place(
                            records,
                            append_info.first_offset,
                            now,
                            to_magic,
                            self.config.log_append_time,
                            self.config.message_timestamp_difference_max_ms,
                        )
                if validated is None:
                    # another format than the topic's, or a set only a rebuild can number
                    validated = convert_and_assign_offsets(
                        records,
                        append_info.first_offset,
                        now,
                        to_magic,
                        self.config.log_append_time,
                        leader_epoch,
                        is_from_client,
                        self.config.message_timestamp_difference_max_ms,
                    )
                    self._check_converted_sizes(validated.validated_records, append_info)
                records = validated.validated_records
                append_info.max_timestamp = validated.max_timestamp
                append_info.offset_of_max_timestamp = validated.shallow_offset_of_max_timestamp
                append_info.last_offset = validated.last_offset
                if self.config.log_append_time:
                    append_info.log_append_time = now
            elif (
                not append_info.offsets_monotonic
                or append_info.first_offset < self._next_offset_metadata.message_offset
            ):
                # we are taking the offsets we are given, and they must follow the log's
                raise KafkaException(
                    f"Out of order offsets found in append to {self.name}: the batches' offsets must "
                    f"increase from the log end offset {self._next_offset_metadata.message_offset}, "
                    f"and they start at {append_info.first_offset}"
                )
            # a batch set larger than a segment could never fit in one
            if append_info.valid_bytes > self.config.segment_size:
                raise RecordBatchTooLargeException(
                    f"Message batch size is {append_info.valid_bytes} bytes in append to partition "
                    f"{self.name}, which exceeds the maximum configured segment size of "
                    f"{self.config.segment_size}."
                )
            # update the epoch cache with the epoch stamped onto the batches by the leader, before the
            # records become readable: whoever sees them past the LEO also sees where their epoch began
            if assign_offsets:
                if leader_epoch >= 0:  # every batch carries it: the first one's offset is where it began
                    self.leader_epoch_cache.assign(leader_epoch, append_info.first_offset)
            else:
                self._assign_epochs_of_batches(records)
            # maybe roll the log if this segment is full
            segment = self._maybe_roll(append_info.valid_bytes, append_info.max_timestamp, now)
            # now append to the log
            segment.append(
                append_info.first_offset,
                append_info.max_timestamp,
                append_info.offset_of_max_timestamp,
                records,
            )
            # increment the log end offset
            self._update_log_end_offset(append_info.last_offset + 1)
            if self.unflushed_messages() >= self.config.flush_interval:
                self.flush()
            return append_info

    # --8<-- [end:append]

    def _check_converted_sizes(self, records: MemoryRecords, append_info: LogAppendInfo) -> None:
        """Rebuilt records have new sizes (Kafka's ``messageSizeMaybeChanged``): each batch is checked
        against ``max.message.bytes`` again, and the append's size and spans become theirs."""
        append_info.valid_bytes = records.size_in_bytes()
        append_info.batch_spans = []  # the partition reads spans for producer batches; none survive here
        for batch in records.batches():
            if batch.size_in_bytes > self.config.max_message_size:
                raise RecordTooLargeException(
                    f"Message batch size is {batch.size_in_bytes} bytes in append to partition {self.name} "
                    f"after conversion to magic {batch.magic}, which exceeds the maximum configured size "
                    f"of {self.config.max_message_size}."
                )

    def _assign_epochs_of_batches(self, records: MemoryRecords) -> None:
        """A follower's append: each batch's ``partitionLeaderEpoch`` as its leader stamped it (a batch
        with none, -1, from a leader before Kafka 0.11, assigns nothing). Only a batch that begins a
        newer epoch calls the cache, as Kafka's ``LogSegment.recover`` does."""
        latest = self.leader_epoch_cache.latest_epoch()
        for batch in records.batches():
            if batch.partition_leader_epoch > latest:
                self.leader_epoch_cache.assign(batch.partition_leader_epoch, batch.base_offset)
                latest = batch.partition_leader_epoch

    def _analyze_and_validate_records(
        self, records: MemoryRecords, is_from_client: bool = True
    ) -> LogAppendInfo:
        """Kafka's ``analyzeAndValidateRecords``: check every batch and gather what the append needs.

        Each batch must be at most ``max.message.bytes`` and pass ``ensure_valid`` (its size fields
        and its CRC, computed over the batch's bytes). Only the headers are read: no record of a v2
        batch is decoded (a v0/v1 wrapper's offsets are inside its compressed value).
        """
        shallow_message_count = 0
        valid_bytes_count = 0
        first_offset = last_offset = -1
        source_codec = CompressionType.NONE
        monotonic = True
        max_timestamp, offset_of_max_timestamp = NO_TIMESTAMP, -1
        batch_spans = []
        magic = None
        for batch in records.batches():
            if magic is None:
                magic = batch.magic
            elif batch.magic != magic:
                magic = -1
            # only the broker writes transaction markers (Kafka 0.11's LogValidator)
            if is_from_client and batch.is_control_batch:
                raise CorruptRecordException(
                    f"Clients are not allowed to write control records: the batch at byte {batch.position} "
                    f"for {self.name} is a control batch",
                    position=batch.position,
                )
            # update the first offset if on the first batch
            if first_offset < 0:
                first_offset = batch.base_offset
            # check that offsets are monotonically increasing
            if last_offset >= batch.base_offset:
                monotonic = False
            # update the last offset seen
            last_offset = batch.last_offset
            # check the batch's size
            batch_size = batch.size_in_bytes
            if batch_size > self.config.max_message_size:
                raise RecordTooLargeException(
                    f"The record batch at byte {batch.position} is {batch_size} bytes, larger than "
                    f"max.message.bytes ({self.config.max_message_size}) of {self.name}."
                )
            # check the validity of the batch: its sizes and its CRC
            batch.ensure_valid()
            if batch.max_timestamp > max_timestamp:
                max_timestamp, offset_of_max_timestamp = batch.max_timestamp, last_offset
            shallow_message_count += 1
            valid_bytes_count += batch_size
            batch_codec = batch.compression_type
            if batch_codec != CompressionType.NONE:
                source_codec = batch_codec
            if batch.magic == MAGIC_VALUE_V2:  # the in-place path's spans; other magics are rewritten
                batch_spans.append((batch.position, batch.last_offset_delta, batch.max_timestamp))
        return LogAppendInfo(
            first_offset, last_offset, max_timestamp, offset_of_max_timestamp, NO_TIMESTAMP, source_codec,
            shallow_message_count, valid_bytes_count, batch_spans, monotonic,
            MAGIC_VALUE_V2 if magic is None else magic,
        )  # fmt: skip

    def _update_log_end_offset(self, offset: int) -> None:
        """Kafka's ``updateLogEndOffset``: the LEO, with its place in the active segment."""
        active = self.active_segment
        self._next_offset_metadata = LogOffsetMetadata(offset, active.base_offset, active.size_in_bytes())

    # --8<-- [start:maybe_roll]
    def _maybe_roll(self, messages_size: int, max_timestamp_in_messages: int, now: int) -> LogSegment:
        """Roll when the active segment would pass ``segment.bytes``, is older than ``segment.ms``
        (less jitter), or has a full index."""
        segment = self.active_segment
        size = segment.size_in_bytes()
        reached_roll_ms = (
            segment.time_waited_for_roll(now, max_timestamp_in_messages)
            > self.config.segment_ms - segment.roll_jitter_ms
        )
        if (
            size > self.config.segment_size - messages_size
            or (size > 0 and reached_roll_ms)
            or segment.index.is_full()
            or segment.time_index.is_full()
        ):
            return self.roll()
        return segment

    # --8<-- [end:maybe_roll]

    def roll(self) -> LogSegment:
        """Close the active segment for appends and start a new one at the LEO."""
        with self._lock:
            new_offset = self.log_end_offset
            if new_offset in self._segments:
                if self._segments[new_offset].size_in_bytes() == 0:
                    return self._segments[new_offset]  # rolling an empty active segment changes nothing
                raise KafkaException(
                    f"Trying to roll a new log segment for {self.name} at {new_offset}, which exists"
                )
            old = self.active_segment
            old.on_become_inactive_segment()
            old.index.trim_to_valid_size()
            old.time_index.trim_to_valid_size()
            for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
                leftover = self.dir / (filename_prefix(new_offset) + suffix)
                leftover.unlink(missing_ok=True)  # a stale file from a crash: the new segment replaces it
            segment = self._new_segment(new_offset)
            self._add_segment(segment)
            self._update_log_end_offset(self._next_offset_metadata.message_offset)
            # Kafka flushes the rolled segment on its scheduler's thread; we flush it here, in the
            # appending thread, which also moves the recovery point so that a crash only ever
            # re-checks the active segment.
            self.flush(new_offset)
            return segment

    # -- transactions (Kafka 0.11) -------------------------------------------------------------------------------

    def update_txn_index(self, completed_txn, last_stable_offset: int) -> None:
        """Index a transaction that a marker just ended, in the segment holding the marker."""
        with self._lock:
            segment = self._floor_segment(completed_txn.last_offset)
            if segment is not None:
                segment.update_txn_index(completed_txn, last_stable_offset)

    # --8<-- [start:collect_aborted_transactions]
    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[start_offset, upper_bound_offset)``: each segment's
        index from the one holding ``start_offset`` on, until one says no later segment can hold more
        (an aborted transaction may begin in an earlier segment than its marker, never later)."""
        found: list[AbortedTxn] = []
        for segment in self.log_segments(start_offset):
            result = segment.collect_aborted_txns(start_offset, upper_bound_offset)
            found.extend(result.aborted_transactions)
            if result.is_complete:
                break
        return found

    # --8<-- [end:collect_aborted_transactions]

    # -- reading ---------------------------------------------------------------------------------------------

    # --8<-- [start:read]
    def read(
        self, start_offset: int, max_length: int, max_offset: int | None = None, min_one_message: bool = False
    ) -> FetchDataInfo:
        """Batches from the one holding ``start_offset``, at most ``max_length`` bytes (whole batches
        unless cut by ``max_length``), never beyond ``max_offset`` (the high watermark for consumers)."""
        current = self._next_offset_metadata
        if start_offset == current.message_offset:
            return FetchDataInfo(current, MemoryRecords(b""))
        with self._lock:
            segment = self._floor_segment(start_offset)
            bases = list(self._bases)
        if start_offset > current.message_offset or segment is None or start_offset < self._log_start_offset:
            raise OffsetOutOfRangeException(
                f"Request for offset {start_offset} but we only have log segments in the range "
                f"{self._log_start_offset} to {current.message_offset}."
            )
        i = bases.index(segment.base_offset)
        while i < len(bases):
            segment = self._segments.get(bases[i])
            if segment is None:
                break  # deleted by retention meanwhile
            # Read the active segment only up to what the LEO exposes: an append in progress may have
            # written bytes that are not yet offsets anyone can see.
            max_position = (
                current.relative_position_in_segment
                if bases[i] == current.segment_base_offset
                else segment.size_in_bytes()
            )
            info = segment.read(start_offset, max_offset, max_length, max_position, min_one_message)
            if info is not None:
                return info
            i += 1
        return FetchDataInfo(self._next_offset_metadata, MemoryRecords(b""))

    # --8<-- [end:read]

    def fetch_offset_by_timestamp(self, target_timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record at or after ``target_timestamp`` (ListOffsets v1+).

        ``EARLIEST_TIMESTAMP`` (-2) and ``LATEST_TIMESTAMP`` (-1) answer the log start and end offsets.
        """
        if self.config.message_format_version < KAFKA_0_10_0_IV0 and target_timestamp not in (
            EARLIEST_TIMESTAMP,
            LATEST_TIMESTAMP,
        ):
            # a v0 topic writes no timestamps, so there is nothing to search (Kafka 0.11's check)
            raise UnsupportedForMessageFormatException(
                f"Cannot search offsets based on timestamp because message format version for partition "
                f"{self.name} is {self.config.message_format_version} which is earlier than the minimum "
                f"required version {KAFKA_0_10_0_IV0}"
            )
        segments = self.log_segments()
        if target_timestamp == EARLIEST_TIMESTAMP:
            return NO_TIMESTAMP, self.log_start_offset
        if target_timestamp == LATEST_TIMESTAMP:
            return NO_TIMESTAMP, self.log_end_offset
        for segment in segments:  # the first segment that reaches the target holds the answer
            if segment.largest_timestamp >= target_timestamp:
                found = segment.find_offset_by_timestamp(target_timestamp)
                # records below the log start offset are deleted for readers (KIP-107)
                if found is not None and found[1] < self._log_start_offset:
                    return found[0], self._log_start_offset
                return found
        return None

    # -- retention ----------------------------------------------------------------------------------------

    def delete_old_segments(self) -> int:
        """Apply retention by time and by size, and drop the segments wholly below the log start
        offset (Kafka 0.11; ``cleanup.policy`` must include delete)."""
        if not self.config.delete:
            return 0
        return (
            self._delete_retention_ms_breached()
            + self._delete_retention_size_breached()
            + self._delete_log_start_offset_breached()
        )

    def _delete_retention_ms_breached(self) -> int:
        if self.config.retention_ms < 0:
            return 0
        now = self.time.milliseconds()
        return self._delete_old_segments(lambda s: now - s.largest_timestamp > self.config.retention_ms)

    def _delete_retention_size_breached(self) -> int:
        if self.config.retention_size < 0 or self.size_in_bytes() < self.config.retention_size:
            return 0
        diff = self.size_in_bytes() - self.config.retention_size

        def should_delete(segment: LogSegment) -> bool:
            nonlocal diff
            if diff - segment.size_in_bytes() >= 0:
                diff -= segment.size_in_bytes()
                return True
            return False

        return self._delete_old_segments(should_delete)

    def _delete_log_start_offset_breached(self) -> int:
        """A segment whose successor starts at or below the log start offset holds only records a
        DeleteRecords removed (Kafka 0.11's ``deleteLogStartOffsetBreachedSegments``)."""

        def should_delete(segment: LogSegment) -> bool:
            i = self._bases.index(segment.base_offset)
            return i + 1 < len(self._bases) and self._bases[i + 1] <= self._log_start_offset

        return self._delete_old_segments(should_delete)

    def _delete_old_segments(self, predicate: Callable[[LogSegment], bool]) -> int:
        """Delete leading segments while ``predicate`` holds (Kafka 0.10.1's ``deleteOldSegments``). An
        empty active segment is never deleted; when every segment is due, the active one included,
        the log rolls first, so that it keeps an empty active segment at its end offset."""
        with self._lock:
            deletable = []
            last = self._bases[-1]
            for segment in self.log_segments():
                if not predicate(segment) or (segment.base_offset == last and segment.size_in_bytes() == 0):
                    break
                deletable.append(segment)
            if deletable:
                if len(deletable) == len(self._bases):
                    self.roll()  # keep an (empty) active segment at the LEO
                for segment in deletable:
                    self._delete_segment(segment)
                # the log starts at its first segment now (Kafka 0.11's ``deleteSegments``): the
                # leader epoch cache and the producer state follow, as after a DeleteRecords
                self.maybe_increment_log_start_offset(self._bases[0])
            return len(deletable)

    def _delete_segment(self, segment: LogSegment) -> None:
        with self._lock:
            self._remove_segment(segment.base_offset)
            segment.delete()

    def replace_segments(self, new_segment: LogSegment, old_segments: list[LogSegment]) -> None:
        """Swap a cleaned segment (files ending ``.swap``) in for the segments it replaces.

        The order makes a crash at any point recoverable: the old segments go first (a restart
        then finds the ``.swap`` files and completes the swap), then the new files lose their suffix.
        """
        with self._lock:
            for old in old_segments:
                if old.base_offset in self._segments and self._segments[old.base_offset] is old:
                    self._remove_segment(old.base_offset)
                old.delete()
            new_segment.change_file_suffixes(SWAP_FILE_SUFFIX, "")
            self._add_segment(new_segment)

    # -- truncation (followers, after a leader change) ----------------------------------------------------------

    def truncate_to(self, target_offset: int) -> None:
        """Remove every record at or above ``target_offset``."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate to a negative offset ({target_offset}).")
        if target_offset >= self.log_end_offset:
            return
        with self._lock:
            if self._bases[0] > target_offset:
                self.truncate_fully_and_start_at(target_offset)
                return
            for segment in [s for s in self.log_segments() if s.base_offset > target_offset]:
                self._delete_segment(segment)
            self.active_segment.truncate_to(target_offset)
            self.active_segment.index.resize(self.config.max_index_size)
            self._update_log_end_offset(target_offset)
            self.recovery_point = min(target_offset, self.recovery_point)
            self.leader_epoch_cache.clear_and_flush_latest(target_offset)

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Delete everything and start an empty log at ``new_offset``."""
        with self._lock:
            for segment in self.log_segments():
                self._delete_segment(segment)
            self._add_segment(self._new_segment(new_offset))
            self._log_start_offset = new_offset
            self._update_log_end_offset(new_offset)
            self.recovery_point = min(new_offset, self.recovery_point)
            self.leader_epoch_cache.clear_and_flush()

    # -- offsets, size, flushing ----------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        """The first offset readers may see. Retention moves it to the first segment's base; a
        DeleteRecords (Kafka 0.11, KIP-107) may move it into a segment, whose records below it stay
        on disk, unreadable, until the whole segment is below it and retention deletes the file."""
        return self._log_start_offset

    # --8<-- [start:maybe_increment_log_start_offset]
    def maybe_increment_log_start_offset(self, offset: int) -> None:
        """Move the log start offset up to ``offset`` (never down): DeleteRecords on the leader, and
        on a follower the leader's log start offset from each fetch. It is checkpointed with the
        others (``log-start-offset-checkpoint``), not at once: only if every replica stopped
        uncleanly within the checkpoint interval could the deleted records come back, as in Kafka.

        The producer state forgets the producers whose every write is now below the log start
        (Kafka 0.11's ``truncateHead``): a broker that restarted could not rebuild them from the log."""
        with self._lock:
            if offset > self._log_start_offset:
                self._log_start_offset = offset
                self.leader_epoch_cache.clear_and_flush_earliest(offset)
                if self.producer_state_manager is not None:
                    self.producer_state_manager.truncate_head(offset)

    # --8<-- [end:maybe_increment_log_start_offset]

    @property
    def log_end_offset(self) -> int:
        return self._next_offset_metadata.message_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        """The LEO with its segment and byte position (Kafka's ``logEndOffsetMetadata``)."""
        return self._next_offset_metadata

    def convert_to_offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """Where ``offset`` sits, found by reading there (Kafka's ``convertToOffsetMetadata``); the
        offset alone if the log does not hold it. At the LEO this is the LEO's metadata, no read."""
        try:
            return self.read(offset, 1).fetch_offset_metadata
        except OffsetOutOfRangeException:
            return LogOffsetMetadata(offset)

    def size_in_bytes(self) -> int:
        return sum(s.size_in_bytes() for s in self.log_segments())

    def unflushed_messages(self) -> int:
        """Messages appended since the last flush (Kafka's ``unflushedMessages``)."""
        return self.log_end_offset - self.recovery_point

    def flush(self, offset: int | None = None) -> None:
        """fsync the segments holding ``[recovery_point, offset)`` and move the recovery point there."""
        offset = self.log_end_offset if offset is None else offset
        if offset <= self.recovery_point:
            return
        for segment in self.log_segments(self.recovery_point, offset):
            segment.flush()
        with self._lock:
            if offset > self.recovery_point:
                self.recovery_point = offset
                self.last_flushed_time = self.time.milliseconds()

    def close(self) -> None:
        with self._lock:
            for segment in self.log_segments():
                segment.close()

    def delete(self) -> None:
        """Remove the whole log and its directory (topic deletion)."""
        with self._lock:
            for segment in self.log_segments():
                segment.delete()
            self._bases.clear()
            self._segments.clear()
            self.leader_epoch_cache.clear()
            for leftover in self.dir.iterdir():
                leftover.unlink()
            self.dir.rmdir()

    def __repr__(self) -> str:
        return f"Log({self.dir}, segments={self._bases}, leo={self.log_end_offset})"
