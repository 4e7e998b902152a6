"""The offset index: relative offset -> file position, one entry per ~4 KiB of log.

Mirrors: kafka.log.OffsetIndex (core/src/main/scala/kafka/log/OffsetIndex.scala, Kafka 0.10.1)
Book:    chapter 6, 6.1.2-6.1.4
Labs:    lab 2 (the index search it relies on: AbstractIndex._index_slot_for)

Each entry is 8 bytes, big-endian: ``relativeOffset int32`` (offset - the segment's base offset)
and ``position int32`` (byte position of that offset's batch in the ``.log`` file). Storing the
offset relative to the base halves the entry: a segment never spans more than 2^31 offsets.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.log.abstract_index import AbstractIndex

_ENTRY = struct.Struct(">ii")


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class InvalidOffsetException(KafkaException):
    """An index append out of order, or at an offset too far from the base (Kafka's twin)."""


class CorruptIndexException(KafkaException):
    """An index file that fails ``sanity_check``; the log rebuilds it from the segment."""


class OffsetIndex(AbstractIndex):
    entry_size = _ENTRY.size  # 8
    entry_struct = _ENTRY

    def __init__(self, path, base_offset: int, max_index_size: int = -1) -> None:
        super().__init__(path, base_offset, max_index_size)
        self._last_offset = self._read_last_offset()

    def entry(self, n: int) -> OffsetPosition:
        """The ``n``-th entry, with the offset made absolute."""
        if n >= self._entries:
            raise IndexError(f"Attempt to fetch the {n}th entry from an index of size {self._entries}")
        relative, position = _ENTRY.unpack_from(self._map, n * self.entry_size)
        return OffsetPosition(self.base_offset + relative, position)

    @property
    def last_offset(self) -> int:
        return self._last_offset

    def _read_last_offset(self) -> int:
        return self.base_offset if self._entries == 0 else self.entry(self._entries - 1).offset

    # --8<-- [start:lookup]
    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= ``target_offset``; ``(base_offset, 0)`` if none.

        The caller then scans the log forward from that position to the batch holding the target:
        the index narrows the search to one ``index.interval.bytes`` stretch of the file.
        """
        with self._lock:
            slot = self._index_slot_for(target_offset - self.base_offset)
            if slot == -1:
                return OffsetPosition(self.base_offset, 0)
            return self.entry(slot)

    # --8<-- [end:lookup]

    def append(self, offset: int, position: int) -> None:
        """Add an entry; offsets must increase and fit in 32 bits relative to the base."""
        with self._lock:
            if self.is_full():
                raise InvalidOffsetException(f"Attempt to append to a full index (size = {self._entries}).")
            if self._entries > 0 and offset <= self._last_offset:
                raise InvalidOffsetException(
                    f"Attempt to append an offset ({offset}) to position {self._entries} no larger than "
                    f"the last offset appended ({self._last_offset}) to {self.path}."
                )
            relative = offset - self.base_offset
            if not 0 <= relative <= INT32_MAX:
                raise InvalidOffsetException(
                    f"offset {offset} does not fit relative to base {self.base_offset}"
                )
            self._write_entry(relative, position)
            self._last_offset = offset

    def truncate_to(self, offset: int) -> None:
        """Remove every entry at or above ``offset`` (after a log truncation)."""
        with self._lock:
            slot = self._index_slot_for(offset - self.base_offset)
            # Keep entries strictly below ``offset``: none if it precedes them all; up to the exact
            # match (excluded) if present; otherwise up to and including the floor entry.
            if slot < 0:
                keep = 0
            elif self._parse_key(slot) == offset - self.base_offset:
                keep = slot
            else:
                keep = slot + 1
            self._truncate_to_entries(keep)
            self._last_offset = self._read_last_offset()

    def truncate(self) -> None:
        super().truncate()
        self._last_offset = self.base_offset

    def resize(self, new_size: int) -> None:
        super().resize(new_size)
        self._last_offset = self._read_last_offset()

    def sanity_check(self) -> None:
        """Kafka's check on load: a non-empty index must end above its base offset, in whole entries."""
        size = self.path.stat().st_size
        if self._entries != 0 and self._last_offset <= self.base_offset:
            raise CorruptIndexException(
                f"Corrupt index found, index file ({self.path}) has non-zero size but the last offset is "
                f"{self._last_offset} which is no larger than the base offset {self.base_offset}."
            )
        if size % self.entry_size != 0:
            raise CorruptIndexException(
                f"Index file {self.path} is corrupt, found {size} bytes which is not positive or not a "
                f"multiple of {self.entry_size}."
            )
