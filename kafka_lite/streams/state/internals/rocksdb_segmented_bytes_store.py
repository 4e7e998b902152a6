"""A bytes store over time segments: puts go to the segment for the key's timestamp.

Mirrors: org.apache.kafka.streams.state.internals.RocksDBSegmentedBytesStore, its SegmentIterator,
         and WindowKeySchema (streams/src/main/java/.../state/internals/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: only the window store's key schema (no session stores).

Keys are window-store binary keys (``window_store_utils``): the timestamp inside the key says which
segment it belongs in. ``fetch`` scans each segment that can hold the time range, oldest first, and
keeps the entries of the key asked for within the range.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.internals import window_store_utils
from kafka_lite.streams.state.internals.segments import Segment, Segments
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator


class SegmentIterator(KeyValueIterator[bytes, bytes]):
    """Entries of ``key`` between two times, across segments (each scanned from ``lower`` to ``upper``)."""

    def __init__(self, segments: list[Segment], key: bytes, time_from: int, time_to: int) -> None:
        self._current: KeyValueIterator | None = None
        self._entries = self._scan(segments, key, time_from, time_to)

    def _scan(self, segments: list[Segment], key: bytes, time_from: int, time_to: int) -> Iterator[KeyValue]:
        lower = window_store_utils.lower_range_fixed_size(key, time_from)
        upper = window_store_utils.upper_range_fixed_size(key, time_to)
        for segment in segments:
            if not segment.is_open():  # dropped since the fetch began
                continue
            with segment.range(lower, upper) as self._current:
                for entry in self._current:
                    # WindowKeySchema.hasNextCondition: the range may hold other keys' entries.
                    if window_store_utils.key_from_binary_key(entry.key) == key and (
                        time_from <= window_store_utils.timestamp_from_binary_key(entry.key) <= time_to
                    ):
                        yield entry

    def __next__(self) -> KeyValue:
        return next(self._entries)

    def close(self) -> None:
        self._entries.close()


class RocksDBSegmentedBytesStore(StateStore):
    def __init__(self, name: str, retention: int, num_segments: int, logged: bool = False) -> None:
        self._name = name
        # Passed to context.register: whether the task has a changelog to restore this store from.
        self._logged = logged
        self.segments = Segments(name, retention, num_segments)
        self._context: Any = None
        self._open = False

    @property
    def name(self) -> str:
        return self._name

    def init(self, context: Any, root: StateStore) -> None:
        self._context = context
        self.segments.open_existing(context)
        context.register(root, self._logged, self.put)
        self.flush()
        self._open = True

    def fetch(self, key: bytes, time_from: int, time_to: int) -> KeyValueIterator[bytes, bytes]:
        return SegmentIterator(self.segments.segments(time_from, time_to), key, time_from, time_to)

    def put(self, key: bytes, value: bytes | None) -> None:
        segment_id = self.segments.segment_id(window_store_utils.timestamp_from_binary_key(key))
        segment = self.segments.get_or_create_segment(segment_id, self._context)
        if segment is not None:
            segment.put(key, value)

    def remove(self, key: bytes) -> None:
        segment = self.segments.get_segment_for_timestamp(window_store_utils.timestamp_from_binary_key(key))
        if segment is not None:
            segment.delete(key)

    def get(self, key: bytes) -> bytes | None:
        segment = self.segments.get_segment_for_timestamp(window_store_utils.timestamp_from_binary_key(key))
        return None if segment is None else segment.get(key)

    def flush(self) -> None:
        self.segments.flush()

    def close(self) -> None:
        self._open = False
        self.segments.close()

    def persistent(self) -> bool:
        return True

    def is_open(self) -> bool:
        return self._open
