"""The time index: timestamp -> offset, so a consumer can ask "where was I at 09:00?".

Mirrors: kafka.log.TimeIndex (core/src/main/scala/kafka/log/TimeIndex.scala, Kafka 0.10.1, KIP-33)
Book:    chapter 6, 6.1; chapter 10.2 (timestamps and lookups by time)
Differs: ``truncate_to`` walks back from the last entry, where Kafka's binary-searches the entries
         by their offsets (``indexSlotFor`` with ``IndexSearchType.VALUE``): the one search here is
         by key, and a truncation cuts near the end of a segment.

Each entry is 12 bytes: ``timestamp int64`` and ``relativeOffset int32``. An entry says "every
record before this offset has a timestamp <= this one", so timestamps in the index only grow even
when producers send them out of order: ``maybe_append`` skips an entry that is not larger than the
last. The last slot is kept free (``is_full`` at ``max_entries - 1``) so that rolling a segment can
always add its final entry.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.log.abstract_index import AbstractIndex
from kafka_lite.log.offset_index import CorruptIndexException, InvalidOffsetException

_ENTRY = struct.Struct(">qi")


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class TimeIndex(AbstractIndex):
    entry_size = _ENTRY.size  # 12
    entry_struct = _ENTRY

    def __init__(self, path, base_offset: int, max_index_size: int = -1) -> None:
        super().__init__(path, base_offset, max_index_size)
        self._last_entry = self._read_last_entry()

    def entry(self, n: int) -> TimestampOffset:
        if n >= self._entries:
            raise IndexError(f"Attempt to fetch the {n}th entry from a time index of size {self._entries}")
        timestamp, relative = _ENTRY.unpack_from(self._map, n * self.entry_size)
        return TimestampOffset(timestamp, self.base_offset + relative)

    @property
    def last_entry(self) -> TimestampOffset:
        return self._last_entry

    def _read_last_entry(self) -> TimestampOffset:
        if self._entries == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(self._entries - 1)

    def is_full(self) -> bool:
        return self._entries >= self._max_entries - 1

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Add ``(timestamp, offset)`` if ``timestamp`` is larger than the last entry's.

        An equal timestamp is skipped, not refused: closing or rolling a segment offers its largest
        timestamp again (``skip_full_check`` lets that last entry use the reserved slot).
        """
        with self._lock:
            if not skip_full_check and self.is_full():
                raise InvalidOffsetException(
                    f"Attempt to append to a full time index (size = {self._entries})."
                )
            last = self._last_entry
            if self._entries > 0 and offset < last.offset:
                raise InvalidOffsetException(
                    f"Attempt to append an offset ({offset}) to slot {self._entries} no larger than the "
                    f"last offset appended ({last.offset}) to {self.path}."
                )
            if self._entries > 0 and timestamp < last.timestamp:
                raise InvalidOffsetException(
                    f"Attempt to append a timestamp ({timestamp}) to slot {self._entries} no larger than "
                    f"the last timestamp appended ({last.timestamp}) to {self.path}."
                )
            if timestamp > last.timestamp:
                self._write_entry(timestamp, offset - self.base_offset)
                self._last_entry = TimestampOffset(timestamp, offset)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target; ``(-1, base_offset)`` if none."""
        with self._lock:
            slot = self._index_slot_for(target_timestamp)
            if slot == -1:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return self.entry(slot)

    def truncate_to(self, offset: int) -> None:
        """Remove entries whose offset is >= ``offset``."""
        with self._lock:
            keep = self._entries
            while keep > 0 and self.entry(keep - 1).offset >= offset:
                keep -= 1
            self._truncate_to_entries(keep)
            self._last_entry = self._read_last_entry()

    def truncate(self) -> None:
        super().truncate()
        self._last_entry = self._read_last_entry()

    def resize(self, new_size: int) -> None:
        super().resize(new_size)
        self._last_entry = self._read_last_entry()

    def sanity_check(self) -> None:
        size = self.path.stat().st_size
        if self._entries != 0 and self._last_entry.offset < self.base_offset:
            raise CorruptIndexException(
                f"Corrupt time index found, time index file ({self.path}) has non-zero size but the last "
                f"offset is {self._last_entry.offset} which is smaller than the base offset {self.base_offset}"
            )
        if size % self.entry_size != 0:
            raise CorruptIndexException(f"Time index file {self.path} is corrupt, found {size} bytes")
