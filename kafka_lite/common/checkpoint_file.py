"""Checkpoint files: a version, a count, one entry a line, written atomically (temp file, fsync, rename).

Mirrors: kafka.server.checkpoints.CheckpointFile and OffsetCheckpointFile's formatter
         (core/src/main/scala/kafka/server/checkpoints/, Kafka 0.11.0), and the copy Kafka Streams
         keeps of the same format, org.apache.kafka.streams.state.internals.OffsetCheckpoint
Book:    chapter 6, 6.1.5 (the log manager checkpoints recovery points); chapter 9, 9.1.4 (a task's
         ``.checkpoint``)
Differs: one copy of the format for the broker and Streams, in ``common/`` where both may import it
         (Kafka has two, one in core and one in streams, writing the same bytes). A malformed
         file's error names the file and the line number and says what the line should hold;
         Kafka's names the file and quotes the line.

Every checkpoint file has the same frame, byte-compatible with Kafka's; only the entry lines
differ. ``CheckpointFile`` writes and reads the frame, a ``CheckpointFileFormatter`` turns one entry
into one line and back (Kafka's ``CheckpointFileFormatter[T]``). The offset checkpoints, the broker's
(``kafka_lite/log/checkpoint.py``) and a Streams task's
(``kafka_lite/streams/state/internals/offset_checkpoint.py``) alike::

    0                 <- version
    2                 <- number of entries
    orders 0 1500     <- topic partition offset
    orders 1 1432

Why write-then-rename: a crash mid-write must leave either the old checkpoint or the new one, never
half of one, because recovery trusts it to say which segments (or which changelog records) are
already safely on disk.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from kafka_lite.common.errors import KafkaException

CURRENT_VERSION = 0
T = TypeVar("T")


class CheckpointException(KafkaException):
    """A checkpoint file that cannot be parsed; the message names the file and the line."""


class CheckpointFileFormatter(Protocol[T]):
    """One entry <-> one line. ``from_line`` raises ``ValueError`` saying what the line should hold."""

    def to_line(self, entry: T) -> str: ...

    def from_line(self, line: str) -> T: ...


class CheckpointFile(Generic[T]):
    """A checkpoint file of entries of one kind; ``write`` replaces the file atomically.

    The lock keeps one writer (or reader) on the file at a time, as Kafka's ``lock synchronized``
    does: two threads writing the same ``.tmp`` file would interleave their lines.
    """

    def __init__(self, path: str | os.PathLike, version: int, formatter: CheckpointFileFormatter[T]) -> None:
        self.path = Path(path)
        self.version = version
        self.formatter = formatter
        self._lock = threading.Lock()

    def write(self, entries: Iterable[T]) -> None:
        entries = list(entries)
        lines = [str(self.version), str(len(entries))]
        lines += [self.formatter.to_line(entry) for entry in entries]
        tmp = self.path.with_name(self.path.name + ".tmp")
        with self._lock:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)

    def read(self) -> list[T]:
        """The entries in the file, in order; an absent file is an empty checkpoint (a new directory)."""
        with self._lock:
            if not self.path.exists():
                return []
            lines = self.path.read_text(encoding="utf-8").splitlines()
        # An empty file, or a version with no count, holds no entries (as Kafka reads them).
        if not lines:
            return []
        if lines[0].strip() != str(self.version):
            raise self._bad(1, f"unrecognized version {lines[0].strip()!r} (expected {self.version})")
        if len(lines) == 1:
            return []
        try:
            expected = int(lines[1])
        except ValueError:
            raise self._bad(2, f"entry count {lines[1]!r} is not a number") from None
        entries = []
        for line_no, line in enumerate(lines[2:], start=3):
            try:
                entries.append(self.formatter.from_line(line))
            except ValueError as e:
                raise self._bad(line_no, f"{e}, found {line!r}") from None
        if len(entries) != expected:
            raise self._bad(2, f"says {expected} entries but the file holds {len(entries)}")
        return entries

    def _bad(self, line_no: int, why: str) -> CheckpointException:
        return CheckpointException(f"{self.path}:{line_no}: {why}")


class OffsetCheckpointFormatter:
    """``topic partition offset`` (Kafka's ``OffsetCheckpointFile.Formatter``)."""

    def to_line(self, entry: tuple[tuple[str, int], int]) -> str:
        (topic, partition), offset = entry
        return f"{topic} {partition} {offset}"

    def from_line(self, line: str) -> tuple[tuple[str, int], int]:
        parts = line.split()
        if len(parts) != 3:
            raise ValueError("expected 'topic partition offset'")
        try:
            return (parts[0], int(parts[1])), int(parts[2])
        except ValueError:
            raise ValueError("partition and offset must be numbers") from None


OFFSET_FORMATTER = OffsetCheckpointFormatter()
