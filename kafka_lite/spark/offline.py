"""The offline back-end: a stopped cluster's segment files, read directly, read-only.

Mirrors: kafka.log.LogSegment.translateOffset (an offset index lookup, then a scan of batch
         headers), kafka.server.ReplicaManager's replication-offset-checkpoint (the high
         watermark), Kafka 0.10.1
Book:    chapter 6, 6.1.2-6.1.4 (segments, the offset index, reading a segment); 6.2.2 (the HW)
Differs: the files are opened read-only and never changed: no recovery, no truncation, no index
         rebuilt, so a cluster that was not stopped cleanly is readable too (a batch cut by the
         crash ends the read, as it ends a scan of FileRecords; an index left pre-allocated only
         makes the lookup start lower). ``LogSegment`` itself opens its files for writing, so this
         module reads its ``.log`` with ``FileRecords`` and its ``.index`` with ``OffsetIndex``.

Option ``kafka_lite.log.dirs`` lists the log directories (every broker's ``log.dirs``), comma-
separated. A partition directory ``orders-0`` may sit in several of them (its replicas): the one
with the most records is read. ``earliest`` is the first segment's base offset (the log start
offset), ``latest`` the high watermark the brokers last wrote to ``replication-offset-checkpoint``
(the largest of the replicas'), and the log end offset where no checkpoint names the partition. A
directory a topic deletion renamed (``orders-0.<id>-delete``) and segment files being swapped in by
the cleaner (``.cleaned``, ``.swap``) or deleted (``.deleted``) are left alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from kafka_lite.common.errors import IllegalArgumentException, KafkaException
from kafka_lite.common.record import FileRecords
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.checkpoint import read_checkpoint
from kafka_lite.log.log import parse_topic_partition
from kafka_lite.log.log_segment import INDEX_SUFFIX, LOG_SUFFIX, filename_prefix
from kafka_lite.log.offset_index import OffsetIndex
from kafka_lite.spark.offsets import OffsetRange, PartitionOffsets, check_range_start, tp_name
from kafka_lite.spark.options import LOG_DIRS, ClientSettings

HIGH_WATERMARK_FILENAME = "replication-offset-checkpoint"  # the replica manager's file, Kafka's name


def _check_log_dirs(client: ClientSettings) -> list[Path]:
    dirs = [Path(d) for d in client.log_dirs]
    for d in dirs:
        if not d.is_dir():
            raise IllegalArgumentException(f"Option '{LOG_DIRS}': {d} is not a directory")
    return dirs


def _segment_bases(directory: Path) -> list[int]:
    """The base offsets of a partition directory's segments, in order (from the ``.log`` file names)."""
    bases = []
    for name in os.listdir(directory):
        stem, suffix = name[: -len(LOG_SUFFIX)], name[-len(LOG_SUFFIX) :]
        if suffix == LOG_SUFFIX and len(stem) == 20 and stem.isdigit():
            bases.append(int(stem))
    return sorted(bases)


class _Replica:
    """One partition directory: its segments and the offsets they hold."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.bases = _segment_bases(directory)

    @property
    def log_start_offset(self) -> int:
        return self.bases[0] if self.bases else 0

    def segment_log(self, base: int) -> FileRecords:
        return FileRecords.open(
            self.directory / (filename_prefix(base) + LOG_SUFFIX), mutable=False, create=False
        )

    def start_position(self, base: int, records: FileRecords, offset: int) -> int:
        """Where to start scanning ``base``'s segment for ``offset``: the offset index's floor entry
        (LogSegment.translateOffset), or the file's start if the index is missing or unreadable."""
        index_path = self.directory / (filename_prefix(base) + INDEX_SUFFIX)
        if not index_path.exists():
            return 0  # OffsetIndex would create it: a reader never does
        try:
            index = OffsetIndex(index_path, base)
        except (OSError, ValueError):
            return 0
        # No index.close(): it trims the file to its entries, a write. The map goes with the object.
        position = index.lookup(offset).position
        return position if 0 <= position <= records.size_in_bytes() else 0

    def log_end_offset(self) -> int:
        """The offset after the last whole batch of the last segment."""
        if not self.bases:
            return 0
        base = self.bases[-1]
        records = self.segment_log(base)
        try:
            last = base
            for header in records.batch_headers(self.start_position(base, records, 2**62)):
                last = header.last_offset + 1
            return last
        finally:
            records.close()

    def batches(self, start: int) -> Iterator:
        """Every batch holding an offset at or after ``start``, across the segments, in order."""
        first = max((i for i, b in enumerate(self.bases) if b <= start), default=0)
        for base in self.bases[first:]:
            records = self.segment_log(base)
            try:
                position = self.start_position(base, records, start) if base <= start else 0
                for _, batch in records.batches(position, allow_partial_tail=True):
                    if batch.next_offset > start:
                        yield batch
            finally:
                records.close()

    def offset_for_time(self, timestamp: int) -> int:
        """The first offset whose record's timestamp is at or after ``timestamp``, or -1."""
        for base in self.bases:
            records = self.segment_log(base)
            try:
                found = records.search_for_timestamp(timestamp, 0)
            finally:
                records.close()
            if found is not None:
                return found[1]
        return -1


def _longest(directories: list[Path]) -> tuple[_Replica, int]:
    """The replica with the most records (the first of equals, in log directory order), and its end."""
    replicas = [_Replica(d) for d in directories]
    ends = [r.log_end_offset() for r in replicas]
    best = max(range(len(replicas)), key=lambda i: ends[i])
    return replicas[best], ends[best]


class _Cluster:
    """The partitions in a stopped cluster's log directories, each with the replica to read."""

    def __init__(self, client: ClientSettings) -> None:
        self.log_dirs = _check_log_dirs(client)
        candidates: dict[TopicPartition, list[Path]] = {}
        self.high_watermarks: dict[TopicPartition, int] = {}
        for log_dir in self.log_dirs:
            checkpoint = log_dir / HIGH_WATERMARK_FILENAME
            if checkpoint.exists():
                for tp, hw in read_checkpoint(checkpoint).items():
                    self.high_watermarks[tp] = max(hw, self.high_watermarks.get(tp, -1))
            for child in sorted(log_dir.iterdir()):
                if not child.is_dir() or child.name.endswith("-delete"):
                    continue
                try:
                    tp = parse_topic_partition(child)
                except KafkaException:
                    continue  # not a partition directory
                candidates.setdefault(tp, []).append(child)
        self.replicas: dict[TopicPartition, _Replica] = {}
        self.log_end_offsets: dict[TopicPartition, int] = {}
        for tp, directories in candidates.items():
            self.replicas[tp], self.log_end_offsets[tp] = _longest(directories)

    def replica(self, tp: TopicPartition) -> _Replica:
        replica = self.replicas.get(tp)
        if replica is None:
            raise KafkaException(
                f"{tp_name(tp)} has no directory in {LOG_DIRS} {[str(d) for d in self.log_dirs]}"
            )
        return replica


class OfflineOffsetReader:
    """The driver's view of a stopped cluster: partitions, log start offsets, high watermarks."""

    def __init__(self, client: ClientSettings) -> None:
        self.cluster = _Cluster(client)

    def topic_partitions(self) -> dict[str, list[int]]:
        topics: dict[str, list[int]] = {}
        for topic, partition in sorted(self.cluster.replicas):
            topics.setdefault(topic, []).append(partition)
        return topics

    def earliest_offsets(self, tps: list[TopicPartition]) -> PartitionOffsets:
        return {tp: self.cluster.replica(tp).log_start_offset for tp in tps}

    def latest_offsets(self, tps: list[TopicPartition]) -> PartitionOffsets:
        latest = {}
        for tp in tps:
            self.cluster.replica(tp)
            end = self.cluster.log_end_offsets[tp]
            latest[tp] = min(self.cluster.high_watermarks.get(tp, end), end)
        return latest

    def offsets_for_times(self, times: dict[TopicPartition, int]) -> PartitionOffsets:
        found = {tp: self.cluster.replica(tp).offset_for_time(ts) for tp, ts in times.items()}
        # A record above the high watermark was never shown to consumers: as if it were not there.
        latest = self.latest_offsets(list(times))
        return {tp: o if o < latest[tp] else -1 for tp, o in found.items()}

    def close(self) -> None:
        """Nothing is held open between calls."""


class OfflineDataConsumer:
    """An executor's reader of one range from the segment files."""

    def __init__(self, client: ClientSettings) -> None:
        self.log_dirs = _check_log_dirs(client)

    def fetch(self, range_: OffsetRange, fail_on_data_loss: bool) -> Iterator:
        name = tp_name(range_.topic_partition)
        directories = [d / name for d in self.log_dirs if (d / name).is_dir()]
        if not directories:
            raise KafkaException(f"{name} has no directory in {LOG_DIRS} {[str(d) for d in self.log_dirs]}")
        replica, _ = _longest(directories)
        start = check_range_start(range_, replica.log_start_offset, fail_on_data_loss)
        for batch in replica.batches(start):
            if batch.base_offset >= range_.until_offset:
                return
            yield batch

    def close(self) -> None:
        """Each segment file is closed as soon as its batches are read."""
