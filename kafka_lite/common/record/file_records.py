"""Batches in a file: a log segment's ``.log``, or a slice of one.

Mirrors: org.apache.kafka.common.record.FileRecords and FileLogInputStream
         (clients/.../common/record/, Kafka 0.11.0); Kafka 0.10's kafka.log.FileMessageSet
Book:    chapter 6, 6.1.2-6.1.4 (writing to and reading from a segment's message set)
Differs: Kafka holds a FileChannel and reads with positional reads; so do we (``os.pread``). A
         slice is ``[start, end)`` of the same open file, like Kafka's ``FileRecords.read``. The
         descriptor is closed when the file's owner has closed it *and* no slice still refers to
         it (``_FileChannel``): a segment deleted at once (kafka_lite has no
         ``file.delete.delay.ms``) is unlinked, and a read handed out before still finishes from
         the unlinked file, where Kafka waits the delay before deleting the renamed ``.deleted`` file.

A ``FileRecords`` can be sent to a socket with ``os.sendfile``, the zero-copy path Kafka's
``FileRecords.writeTo`` takes through ``FileChannel.transferTo``, or read once (``os.pread``) and
sent from memory; the broker's ``fetch.sendfile.enable`` chooses between the two.
"""

from __future__ import annotations

import os
import struct
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.constants import LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_VALUE_V2
from kafka_lite.common.record.default_record_batch import RECORD_BATCH_OVERHEAD, DefaultRecordBatch
from kafka_lite.common.record.memory_records import RecordBatch, iter_batches

_OFFSET_AND_SIZE = struct.Struct(">qi")


class BatchHeader(NamedTuple):
    """What a scan of a segment learns from one batch's header."""

    position: int
    base_offset: int
    last_offset: int
    size: int
    max_timestamp: int


class _FileChannel:
    """One open descriptor, shared by a file and every slice read from it; closed when the last of
    them lets go. Were the owner's ``close`` to close it at once, a slice handed out earlier would
    read a closed descriptor, or, once the number is reused by another ``open``, another file's bytes."""

    __slots__ = ("__weakref__", "_finalizer", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)


class FileRecords:
    """The records in ``path`` between byte ``start`` and ``end`` (the whole file unless a slice)."""

    def __init__(self, path: Path, channel: _FileChannel, start: int, end: int, is_slice: bool) -> None:
        self.path = path  # a Path already: a fetch makes a slice per partition read, path and all
        self._channel: _FileChannel | None = channel
        self.start = start
        self._end = end
        self.is_slice = is_slice

    @property
    def _fd(self) -> int:
        # -1 once closed: a call on a closed file then fails (EBADF) and never reaches another file
        return self._channel.fd if self._channel is not None else -1

    @classmethod
    def open(cls, path: str | os.PathLike, mutable: bool = True, create: bool = True) -> FileRecords:
        """Open (or create) a log file; appends go to its end."""
        flags = os.O_RDWR if mutable else os.O_RDONLY
        if create and mutable:
            flags |= os.O_CREAT
        fd = os.open(path, flags, 0o644)
        size = os.fstat(fd).st_size
        return cls(Path(path), _FileChannel(fd), 0, size, False)

    @property
    def fd(self) -> int:
        """The open file descriptor (a fetch response hands it to ``os.sendfile``)."""
        return self._fd

    # -- size and appends ---------------------------------------------------------------------------------

    def size_in_bytes(self) -> int:
        return self._end - self.start

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Write ``data`` (whole batches) at the end of the file; return the bytes written. Not flushed."""
        if self.is_slice:
            raise ValueError("cannot append to a slice of a file")
        size = len(data)
        written = os.pwrite(self._fd, data, self._end)
        while written < size:  # a write may be partial (a full disk, a signal): go on from there
            written += os.pwrite(self._fd, memoryview(data)[written:], self._end + written)
        self._end += size
        return size

    def rename_to(self, path: str | os.PathLike) -> None:
        """Rename the file; the open descriptor keeps working (POSIX renames do not touch open files)."""
        os.replace(self.path, path)
        self.path = Path(path)

    def flush(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        """Let go of the descriptor: it closes now unless a slice still holds it, then when the last
        one is dropped."""
        self._channel = None

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to ``target_size`` bytes; return how many were removed."""
        if target_size < 0 or target_size > self.size_in_bytes():
            raise ValueError(
                f"cannot truncate {self.path} of {self.size_in_bytes()} bytes to {target_size} bytes"
            )
        removed = self.size_in_bytes() - target_size
        os.ftruncate(self._fd, target_size)
        self._end = target_size
        return removed

    # -- reading -----------------------------------------------------------------------------------------

    def read(self, position: int, size: int) -> FileRecords:
        """A slice of ``size`` bytes from ``position`` (relative to this view's start), clipped to the end."""
        if position < 0 or size < 0:
            raise ValueError(f"invalid read of {size} bytes at position {position}")
        start = self.start + position
        end = min(start + size, self._end)
        return FileRecords(self.path, self._channel, start, max(start, end), True)

    def read_bytes(self, position: int = 0, size: int | None = None) -> bytes:
        """Copy bytes out of the file (``position`` relative to this view's start)."""
        size = self.size_in_bytes() - position if size is None else size
        return os.pread(self._fd, size, self.start + position)

    def batches(self, start: int = 0, allow_partial_tail: bool = True) -> Iterator[tuple[int, RecordBatch]]:
        """Yield ``(position, batch)`` for each batch from ``start`` (a position in this view).

        A segment's tail may hold a batch cut by a crash; like Kafka's ``FileLogInputStream``,
        iteration stops there by default (recovery decides what to do with the bytes).
        """
        pos = start
        size = self.size_in_bytes()
        while pos + LOG_OVERHEAD <= size:
            _, batch_size = _OFFSET_AND_SIZE.unpack(self.read_bytes(pos, LOG_OVERHEAD))
            if batch_size < 0 or pos + LOG_OVERHEAD + batch_size > size:
                if allow_partial_tail and batch_size >= 0:
                    return
                raise CorruptRecordException(
                    f"{self.path}: batch at byte {self.start + pos} is cut: it claims {batch_size} bytes, "
                    f"{size - pos - LOG_OVERHEAD} remain",
                    position=self.start + pos,
                )
            data = self.read_bytes(pos, LOG_OVERHEAD + batch_size)
            try:
                (batch,) = iter_batches(data)
            except CorruptRecordException as e:
                raise CorruptRecordException(
                    f"{self.path}: {e} (file byte {self.start + pos + (e.position or 0)})",
                    position=self.start + pos + (e.position or 0),
                ) from None
            yield pos, batch
            pos += LOG_OVERHEAD + batch_size
        if pos < size and not allow_partial_tail:
            raise CorruptRecordException(
                f"{self.path}: batch at byte {self.start + pos} is cut: {size - pos} bytes cannot hold its header",
                position=self.start + pos,
            )

    # -- header-only scans (the segment's lookups: no record is decoded) --------------------------------------

    def batch_headers(self, start: int = 0) -> Iterator[BatchHeader]:
        """Yield each batch's header facts from ``start``, reading only its first bytes.

        A lookup by offset or timestamp walks at most one index interval (~4 KiB) of batches this
        way, which is why the index can be sparse. Stops at a cut batch at the tail.
        """
        pos = start
        size = self.size_in_bytes()
        while pos + LOG_OVERHEAD <= size:
            head = self.read_bytes(pos, min(RECORD_BATCH_OVERHEAD, size - pos))
            _, batch_size = _OFFSET_AND_SIZE.unpack_from(head)
            if batch_size < 0 or pos + LOG_OVERHEAD + batch_size > size:
                return
            if (
                len(head) > MAGIC_OFFSET
                and head[MAGIC_OFFSET] == MAGIC_VALUE_V2
                and len(head) == RECORD_BATCH_OVERHEAD
            ):
                batch = DefaultRecordBatch(head)
                yield BatchHeader(
                    pos, batch.base_offset, batch.last_offset, LOG_OVERHEAD + batch_size, batch.max_timestamp
                )
            else:  # v0/v1 entry: load it whole (old formats are only met in converted or test data)
                (batch,) = iter_batches(self.read_bytes(pos, LOG_OVERHEAD + batch_size))
                yield BatchHeader(
                    pos, batch.base_offset, batch.last_offset, LOG_OVERHEAD + batch_size, batch.max_timestamp
                )
            pos += LOG_OVERHEAD + batch_size

    def search_for_offset_with_size(
        self, target_offset: int, starting_position: int
    ) -> tuple[int, int] | None:
        """``(position, size)`` of the first batch whose last offset is >= ``target_offset``, or None."""
        for header in self.batch_headers(starting_position):
            if header.last_offset >= target_offset:
                return header.position, header.size
        return None

    def search_for_timestamp(self, target_timestamp: int, starting_position: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record at or after ``target_timestamp``, or None."""
        for header in self.batch_headers(starting_position):
            if header.max_timestamp >= target_timestamp:
                (batch,) = iter_batches(self.read_bytes(header.position, header.size))
                for record in batch:
                    if record.timestamp >= target_timestamp:
                        return record.timestamp, record.offset
        return None

    def largest_timestamp_after(self, starting_position: int) -> tuple[int, int]:
        """``(max timestamp, its batch's last offset)`` of the batches from ``starting_position``."""
        best = (-1, -1)
        for header in self.batch_headers(starting_position):
            if header.max_timestamp > best[0]:
                best = (header.max_timestamp, header.last_offset)
        return best

    def write_to(self, sock_fd: int, position: int, length: int) -> int:
        """Send up to ``length`` bytes from ``position`` to a socket with ``os.sendfile`` (zero-copy)."""
        count = min(length, self.size_in_bytes() - position)
        return os.sendfile(sock_fd, self._fd, self.start + position, count)

    def __repr__(self) -> str:
        return f"FileRecords({self.path}, start={self.start}, size={self.size_in_bytes()})"
