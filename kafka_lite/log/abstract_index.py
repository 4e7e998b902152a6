"""A memory-mapped file of fixed-size entries, searched by binary search: the base of both indexes.

Mirrors: kafka.log.AbstractIndex (core/src/main/scala/kafka/log/AbstractIndex.scala, Kafka 0.10.1)
Book:    chapter 6, 6.1.2-6.1.4 (the offset index file and how a read finds its position)
Differs: Python's ``mmap`` stands in for Java's MappedByteBuffer; entry counts are plain ints,
         where Kafka uses the buffer's position; the search keys are also kept in a native
         ``array`` so lookups can use ``bisect`` (see ``_keys``). Appends take no index lock (Kafka's
         take it): the log's lock already makes its appending thread the only writer, and an append
         stores its entry at an explicit position *before* it counts it, so a lookup bounded by the
         count never sees half an entry. What can pull the map from under a reader (resize, close,
         truncation) still takes the lock. Two locks saved per append are ~5 % of its Python work.
Labs:    lab 2 (_index_slot_for)

Why a pre-allocated, memory-mapped file: the active segment's index grows by one small entry at a
time. Pre-allocating ``segment.index.bytes`` (10 MiB) once and mapping it makes each append a
store into memory, with the page cache writing it back; on roll the file is trimmed to the bytes
actually used (``trim_to_valid_size``), so closed segments' indexes take no wasted space.

Why sparse: one entry per ``index.interval.bytes`` (4096) of log, not per record. A lookup finds
the nearest entry at or below the target by binary search, then the segment scans forward at most
~4 KiB of batch headers. The index stays small enough to live in memory.
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
import threading
from array import array
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
            os.close(fd)  # the mapping keeps its own reference to the file
        self._max_entries = length // self.entry_size
        # A new file is empty; an existing one is assumed full of valid entries (it was trimmed on
        # roll or close). If it was not (a crash while it was the active, pre-allocated index), its
        # tail is zeros and ``sanity_check`` fails, so the log rebuilds it during recovery.
        self._entries = 0 if newly_created else self._max_entries
        # The search keys (relative offsets or timestamps) again, as native ints in an array, so a
        # lookup is a C-level ``bisect`` rather than ~20 Python-level probes that each unpack a
        # big-endian entry from the mmap. The mmap stays the durable copy; this one is rebuilt on open.
        # Typed as the key field itself (its struct code, 'i' or 'q', is also the array's), so no
        # wider: a big index's search waits on memory, and 4-byte relative offsets put twice as many
        # keys in each cache line as 8-byte ones would (bisect over 1M keys: 0.73 us against 0.95 us).
        self._keys = array(
            self.entry_struct.format.lstrip("<>!=@")[0],
            (self._parse_key(self._map, i * self.entry_size) for i in range(self._entries)),
        )

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
            del self._keys[self._entries :]

    def trim_to_valid_size(self) -> None:
        """Shrink the pre-allocated file to the entries in use (on roll and close)."""
        self.resize(self.entry_size * self._entries)

    # -- entries --------------------------------------------------------------------------------------------

    def _parse_key(self, buf, position: int) -> int:
        """The search key (first field) of the entry at ``position``."""
        return self.entry_struct.unpack_from(buf, position)[0]

    def _write_entry(self, key: int, value: int) -> None:
        """Store the next entry straight into the map (no intermediate bytes), then count it.

        Called without the lock (see the module notes): the order, entry first and count last, is
        what keeps a concurrent lookup safe."""
        self.entry_struct.pack_into(self._map, self._entries * self.entry_size, key, value)
        self._keys.append(key)
        self._entries += 1

    # --8<-- [start:index_slot_for]
    def _index_slot_for(self, target: int) -> int:
        """The largest slot whose key is <= ``target``, or -1 when there is none.

        Kafka's ``indexSlotFor`` is a hand-written binary search over the mmap (``lo`` only ever
        moves to a slot known to be <= target, so the loop ends on the floor entry). ``bisect``
        does the same search over the native copy of the keys.
        """
        # BEGIN SOLUTION
        if self._entries == 0 or self._keys[0] > target:
            return -1
        return bisect.bisect_right(self._keys, target, 0, self._entries) - 1
        # END SOLUTION

    # --8<-- [end:index_slot_for]

    def truncate(self) -> None:
        """Remove every entry (the file keeps its size)."""
        self._truncate_to_entries(0)

    def _truncate_to_entries(self, entries: int) -> None:
        with self._lock:
            self._entries = entries
            del self._keys[entries:]

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
