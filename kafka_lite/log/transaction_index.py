"""The transaction index: one ``.txnindex`` file per segment, listing the aborted transactions whose
ABORT marker is in that segment.

Mirrors: kafka.log.TransactionIndex and AbortedTxn (core/src/main/scala/kafka/log/TransactionIndex.scala,
         Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98); it sits beside chapter 6.1's ``.index``
         and ``.timeindex``
Differs: read with ``os.pread`` from a file opened for appending, where Kafka uses a FileChannel.

A ``read_committed`` consumer must drop the records of aborted transactions. The broker does not
filter them out of a fetch (that would mean decoding every batch); it tells the consumer which
producers aborted which ranges, and the consumer skips those producers' batches from each range's
first offset up to their ABORT marker. This index is how the broker finds them without reading the
log: each entry is a fixed 34 bytes, big-endian::

    version             int16   0
    producer_id         int64
    first_offset        int64   the transaction's first record
    last_offset         int64   the offset of its ABORT marker
    last_stable_offset  int64   the partition's LSO just after the marker was written

Entries are appended in the order the markers are written, so ``last_offset`` increases through the
file. ``last_stable_offset`` lets a search stop early: once an entry's LSO is at or beyond the end of
the fetched range, no transaction still open when that range was written can be aborted in a later
segment. Committed transactions need no entry: their records are read as they are.

The file is created only when the segment gets its first aborted transaction, as Kafka's is.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from kafka_lite.common.errors import KafkaException

TXN_INDEX_SUFFIX = ".txnindex"
CURRENT_VERSION = 0
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34


@dataclass(frozen=True)
class AbortedTxn:
    """One entry of the index (Kafka's ``AbortedTxn``)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = CURRENT_VERSION

    def to_bytes(self) -> bytes:
        return _ENTRY.pack(
            self.version, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )

    @classmethod
    def from_bytes(cls, data: bytes, position: int = 0) -> AbortedTxn:
        version, producer_id, first, last, lso = _ENTRY.unpack_from(data, position)
        return cls(producer_id, first, last, lso, version)

    def as_aborted_transaction(self) -> dict:
        """The Fetch response's entry: ``{"producer_id", "first_offset"}``."""
        return {"producer_id": self.producer_id, "first_offset": self.first_offset}


@dataclass(frozen=True)
class TxnIndexSearchResult:
    aborted_transactions: list[AbortedTxn]
    is_complete: bool  # False: the search must go on into the next segment's index


class TransactionIndex:
    """The aborted transactions whose markers are in one segment, in marker order."""

    def __init__(self, start_offset: int, path: str | os.PathLike) -> None:
        self.start_offset = start_offset
        self.path = Path(path)
        self._fd: int | None = None
        self._size = 0
        self.last_offset: int | None = None
        if self.path.exists():
            self._open()
            entries = self.all_aborted_txns()
            self.last_offset = entries[-1].last_offset if entries else None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        return self._fd

    # -- writing -------------------------------------------------------------------------------------------

    def append(self, aborted_txn: AbortedTxn) -> None:
        if self.last_offset is not None and self.last_offset >= aborted_txn.last_offset:
            raise ValueError(
                "The last offset of appended transactions must increase sequentially: "
                f"{aborted_txn.last_offset} after {self.last_offset} in {self.path}"
            )
        fd = self._open()
        os.pwrite(fd, aborted_txn.to_bytes(), self._size)
        self._size += ENTRY_SIZE
        self.last_offset = aborted_txn.last_offset

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose marker is at or after ``offset`` (the segment was cut there)."""
        new_last = None
        for position, entry in self._iterate():
            if entry.last_offset >= offset:
                os.ftruncate(self._fd, position)
                self._size = position
                self.last_offset = new_last
                return
            new_last = entry.last_offset

    def truncate(self) -> None:
        """Empty the index (the segment is rebuilt or emptied)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            self._size = 0
        self.last_offset = None

    # -- reading -------------------------------------------------------------------------------------------

    def _iterate(self):
        if self._fd is None:
            return
        size = self._size
        data = os.pread(self._fd, size, 0)
        for position in range(0, size - size % ENTRY_SIZE, ENTRY_SIZE):
            entry = AbortedTxn.from_bytes(data, position)
            if entry.version > CURRENT_VERSION:
                raise KafkaException(
                    f"Unexpected aborted transaction version {entry.version} in {self.path}, "
                    f"current version is {CURRENT_VERSION}"
                )
            yield position, entry

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return [entry for _, entry in self._iterate()]

    # --8<-- [start:collect_aborted_txns]
    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound_offset)``, and whether
        the search is complete: an entry whose LSO reaches the upper bound was written after every
        transaction open in that range had ended, so later segments hold none of theirs."""
        found = []
        for _, entry in self._iterate():
            if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound_offset:
                found.append(entry)
            if entry.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(found, is_complete=True)
        return TxnIndexSearchResult(found, is_complete=False)

    # --8<-- [end:collect_aborted_txns]

    def sanity_check(self) -> None:
        for _, entry in self._iterate():
            if entry.last_offset < self.start_offset:
                raise KafkaException(
                    f"Last offset of aborted transaction {entry} in index {self.path} is less than "
                    f"start offset {self.start_offset}"
                )

    # -- files ---------------------------------------------------------------------------------------------

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def rename_to(self, path: Path) -> None:
        if self.path.exists():
            os.replace(self.path, path)
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"TransactionIndex({self.path.name}, last_offset={self.last_offset})"
