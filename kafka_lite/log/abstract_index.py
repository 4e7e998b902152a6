"""A memory-mapped file of fixed-size entries, searched by binary search: the base of both indexes.

Mirrors: kafka.log.AbstractIndex (core/src/main/scala/kafka/log/AbstractIndex.scala, Kafka 0.10.1)
Book:    chapter 6, 6.1.2-6.1.4 (the offset index file and how a read finds its position)
Differs: Python's ``mmap`` stands in for Java's MappedByteBuffer; the entry count is a plain int,
         where Kafka uses the buffer's position. Lookups take the index's lock as appends do: Kafka
         reads through a duplicate of the buffer and locks lookups only on Windows, but here
         ``resize`` and ``close`` replace the map object itself, so a reader must not race them.
Labs:    lab 2 (_index_slot_for)

Why a pre-allocated, memory-mapped file: the active segment's index grows by one small entry at a
time. Pre-allocating ``segment.index.bytes`` (10 MiB) once and mapping it makes each append a
store into memory, with the page cache writing it back; on roll the file is trimmed to the bytes
actually used (``trim_to_valid_size``), so closed segments' indexes take no wasted space.

Why sparse: one entry per ``index.interval.bytes`` (4096) of log, not per record. A lookup finds
the nearest entry at or below the target by binary search over the mapped entries, then the
segment scans forward at most ~4 KiB of batch headers. The index stays small enough to live in
the page cache.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from pathlib import Path


class AbstractIndex:
    """Fixed-size entries in a pre-allocated mmap'd file. Subclasses define the entry layout."""

    entry_size: int  # bytes per entry, set by each subclass
    entry_struct: struct.Struct  # its layout: two fields, the first of which is the search key

    def __init__(self, path: str | os.PathLike, base_offset: int, max_index_size: int = -1) -> None:
        self.path = Path(path)
        self.base_offset = base_offset
        self.max_index_size = max_index_size  # what a reactivated index is resized back to
        self._lock = threading.RLock()
        newly_created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if newly_created:
                if max_index_size < self.entry_size:
                    raise ValueError(f"Invalid max index size {max_index_size} for {self.path}")
                os.ftruncate(fd, _round_down(max_index_size, self.entry_size))
            length = os.fstat(fd).st_size
            self._map = mmap.mmap(fd, length) if length > 0 else None
        finally:
            # Kafka closes its RandomAccessFile here and the mapping holds no descriptor. CPython's
            # mmap keeps a duplicate of ``fd`` (3.13 adds ``trackfd=False``), so on 3.11 each index
            # still holds one open file: a broker opens three per segment, where Kafka opens one.
            os.close(fd)
        self._max_entries = length // self.entry_size
        # A new file is empty; an existing one is assumed full of valid entries (it was trimmed on
        # roll or close). If it was not (a crash while it was the active, pre-allocated index), its
        # tail is zeros and ``sanity_check`` fails, so the log rebuilds it during recovery.
        self._entries = 0 if newly_created else self._max_entries

    # -- size ---------------------------------------------------------------------------------------------

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def max_entries(self) -> int:
        return self._max_entries

    def is_full(self) -> bool:
        return self._entries >= self._max_entries

    def size_in_bytes(self) -> int:
        return self._entries * self.entry_size

    def resize(self, new_size: int) -> None:
        """Grow or shrink the file (and its mapping) to ``new_size`` rounded down to whole entries."""
        with self._lock:
            rounded = _round_down(new_size, self.entry_size)
            if self._map is not None:
                self._map.close()
            fd = os.open(self.path, os.O_RDWR)
            try:
                os.ftruncate(fd, rounded)
                self._map = mmap.mmap(fd, rounded) if rounded > 0 else None
            finally:
                os.close(fd)
            self._max_entries = rounded // self.entry_size
            self._entries = min(self._entries, self._max_entries)

    def trim_to_valid_size(self) -> None:
        """Shrink the pre-allocated file to the entries in use (on roll and close)."""
        self.resize(self.entry_size * self._entries)

    # -- entries --------------------------------------------------------------------------------------------

    def _parse_key(self, n: int) -> int:
        """The search key of entry ``n``, read from the map: a relative offset in the offset index, a
        timestamp in the time index (Kafka's ``parseEntry(idx, n).indexKey``)."""
        return self.entry_struct.unpack_from(self._map, n * self.entry_size)[0]

    def _write_entry(self, key: int, value: int) -> None:
        """Store the next entry at the end of the entries in use, and count it. The caller holds the
        lock (Kafka's ``mmap.putInt``/``putLong`` under ``inLock(lock)``)."""
        self.entry_struct.pack_into(self._map, self._entries * self.entry_size, key, value)
        self._entries += 1

    # --8<-- [start:index_slot_for]
    def _index_slot_for(self, target: int) -> int:
        """The largest slot whose key is <= ``target``, or -1 when there is none.

        Kafka's ``indexSlotFor``: a binary search over the mapped entries, reading the key of each
        slot it probes. ``lo`` only ever moves to a slot known to hold a key <= target, and the
        middle is rounded up so that every step moves ``lo`` or ``hi``: the loop ends on the floor
        entry.
        """
        # BEGIN SOLUTION
        # an empty index, or a target below the smallest key: no slot
        if self._entries == 0 or self._parse_key(0) > target:
            return -1
        lo, hi = 0, self._entries - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2  # Kafka's ceil(hi / 2.0 + lo / 2.0)
            found = self._parse_key(mid)
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        return lo
        # END SOLUTION

    # --8<-- [end:index_slot_for]

    def truncate(self) -> None:
        """Remove every entry (the file keeps its size)."""
        self._truncate_to_entries(0)

    def _truncate_to_entries(self, entries: int) -> None:
        with self._lock:
            self._entries = entries

    # -- file lifecycle ---------------------------------------------------------------------------------------

    def flush(self) -> None:
        with self._lock:
            if self._map is not None:
                self._map.flush()

    def close(self) -> None:
        with self._lock:
            self.trim_to_valid_size()
            if self._map is not None:
                self._map.close()
                self._map = None

    def delete(self) -> None:
        with self._lock:
            if self._map is not None:
                self._map.close()
                self._map = None
            self.path.unlink(missing_ok=True)

    def rename_to(self, path: str | os.PathLike) -> None:
        os.replace(self.path, path)
        self.path = Path(path)


def _round_down(number: int, factor: int) -> int:
    return factor * (number // factor)
