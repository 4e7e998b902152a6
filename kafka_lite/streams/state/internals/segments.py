"""A window store's time segments: one RocksDB database per interval of time, the oldest dropped.

Mirrors: org.apache.kafka.streams.state.internals.Segments and Segment
         (streams/src/main/java/.../state/internals/Segments.java, Segment.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (windowed state is kept for the window's retention, then dropped)
Differs: the oldest segment id follows segments created late, as Kafka 1.0 fixed it: in 0.11 a
         segment made for a late record, older than the first one made, was missed by ``fetch``.

Why segments: a window store must forget what is older than its retention. Deleting old keys one by
one would cost a write each and leave RocksDB compacting tombstones; instead entries go into the
segment for their time, and expiry drops a whole segment's database at once.

The segment interval is ``max(retention / (num_segments - 1), 60 s)``; segment id = timestamp //
interval; a segment is ``<store>-<yyyyMMddHHmm of its start, UTC>`` under ``<task dir>/<store>/``.
At most ``num_segments`` are live, in slots ``id % num_segments``. When a put needs a segment newer
than the newest, every segment ``num_segments`` or more behind it is closed and deleted, so stream
time (the newest timestamp seen) moving on is what expires old data. A put for a segment already
expired is dropped. With 3 segments and a one-day retention, a segment spans 12 hours and the store
holds between one and one and a half days.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_lite.streams.state.internals.rocksdb_store import RocksDBStore

log = logging.getLogger(__name__)

MIN_SEGMENT_INTERVAL = 60 * 1000
_NAME_FORMAT = "%Y%m%d%H%M"


def segment_interval(retention_period: int, num_segments: int) -> int:
    return max(retention_period // (num_segments - 1), MIN_SEGMENT_INTERVAL)


class Segment(RocksDBStore):
    """One segment: a RocksDB store in ``<task dir>/<window store>/<segment name>``."""

    def __init__(self, segment_name: str, window_name: str, segment_id: int) -> None:
        super().__init__(segment_name, parent_dir=window_name)
        self.id = segment_id


class Segments:
    def __init__(self, name: str, retention_period: int, num_segments: int) -> None:
        self.name = name
        self.num_segments = num_segments
        self.segment_interval = segment_interval(retention_period, num_segments)
        self._segments: dict[int, Segment] = {}  # slot (id % num_segments) -> segment
        self.min_segment_id = 2**63 - 1
        self.max_segment_id = -1

    def segment_id(self, timestamp: int) -> int:
        return timestamp // self.segment_interval

    def segment_name(self, segment_id: int) -> str:
        start = datetime.fromtimestamp(segment_id * self.segment_interval / 1000, UTC)
        return f"{self.name}-{start.strftime(_NAME_FORMAT)}"

    def get_segment_for_timestamp(self, timestamp: int) -> Segment | None:
        return self._get_segment(self.segment_id(timestamp))

    def get_or_create_segment(self, segment_id: int, context: Any) -> Segment | None:
        """The segment for ``segment_id``, opened; None if that segment has already expired."""
        if segment_id <= self.max_segment_id - self.num_segments:
            return None
        slot = segment_id % self.num_segments
        if not self._is_segment(self._segments.get(slot), segment_id):
            self._cleanup(segment_id)
        segment = self._segments.get(slot)
        if segment is None:
            segment = Segment(self.segment_name(segment_id), self.name, segment_id)
            self._segments[slot] = segment
            segment.open_db(context)
            self.max_segment_id = max(segment_id, self.max_segment_id)
            # The oldest live segment, even when it is created after a newer one (a late record).
            self.min_segment_id = min(segment_id, self.min_segment_id)
        return segment

    def open_existing(self, context: Any) -> None:
        """Reopen the segments left on disk by an earlier run, oldest first (so expiry applies to them)."""
        directory = Path(context.state_dir()) / self.name
        if not directory.exists():
            directory.mkdir(parents=True)
            return
        ids = sorted(self._segment_id_from_segment_name(p.name) for p in directory.iterdir())
        for segment_id in ids:
            if segment_id >= 0:
                self.get_or_create_segment(segment_id, context)

    def segments(self, time_from: int, time_to: int) -> list[Segment]:
        """The open segments that can hold entries between the two times, oldest first."""
        seg_from = max(self.min_segment_id, self.segment_id(max(0, time_from)))
        seg_to = min(
            self.max_segment_id,
            self.segment_id(min(self.max_segment_id * self.segment_interval, max(0, time_to))),
        )
        found = []
        for segment_id in range(seg_from, seg_to + 1):
            segment = self._get_segment(segment_id)
            if segment is not None and segment.is_open():
                found.append(segment)
        return found

    def flush(self) -> None:
        for segment in self._segments.values():
            segment.flush()

    def close(self) -> None:
        for segment in self._segments.values():
            segment.close()

    def _get_segment(self, segment_id: int) -> Segment | None:
        segment = self._segments.get(segment_id % self.num_segments)
        return segment if self._is_segment(segment, segment_id) else None

    @staticmethod
    def _is_segment(segment: Segment | None, segment_id: int) -> bool:
        return segment is not None and segment.id == segment_id

    def _cleanup(self, segment_id: int) -> None:
        """Drop every segment at least ``num_segments`` behind the newest (``segment_id`` if it is newer)."""
        oldest_segment_id = (
            segment_id - self.num_segments
            if self.max_segment_id < segment_id
            else self.max_segment_id - self.num_segments
        )
        for slot, segment in list(self._segments.items()):
            if segment.id <= oldest_segment_id:
                del self._segments[slot]
                segment.close()
                segment.destroy()
                log.debug("Dropped segment %s of window store %s", segment.name, self.name)
        if oldest_segment_id > self.min_segment_id:
            self.min_segment_id = oldest_segment_id + 1

    def _segment_id_from_segment_name(self, segment_name: str) -> int:
        """The id a directory name stands for; -1 for anything that is not a segment of this store.

        As in Kafka 0.11, the name keeps only the minute the segment starts at, so an interval that
        is not a whole number of minutes reads back as the id before (later Kafka names segments by
        their start in milliseconds).
        """
        try:
            start = datetime.strptime(segment_name[len(self.name) + 1 :], _NAME_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            return -1
        return int(start.timestamp() * 1000) // self.segment_interval
