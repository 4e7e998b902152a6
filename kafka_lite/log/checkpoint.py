"""Checkpoint files: one offset per partition, written atomically (temp file, fsync, rename).

Mirrors: kafka.server.OffsetCheckpoint (core/src/main/scala/kafka/server/OffsetCheckpoint.scala,
         Kafka 0.10.1); the files ``recovery-point-offset-checkpoint``,
         ``replication-offset-checkpoint`` and ``cleaner-offset-checkpoint`` in each log directory
Book:    chapter 6, 6.1.5 (the log manager checkpoints recovery points); 6.2 (high watermarks)

The format, byte-compatible with Kafka's::

    0                 <- version
    2                 <- number of entries
    orders 0 1500
    orders 1 1432

Why write-then-rename: a crash mid-write must leave either the old checkpoint or the new one, never
half of one, because recovery trusts it to say which segments are already safely on disk.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafka_lite.common.errors import KafkaException

CURRENT_VERSION = 0


class CheckpointException(KafkaException):
    """A checkpoint file that cannot be parsed; the message names the file and the line."""


def write_checkpoint(path: str | os.PathLike, offsets: dict[tuple[str, int], int]) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    lines = [str(CURRENT_VERSION), str(len(offsets))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_checkpoint(path: str | os.PathLike) -> dict[tuple[str, int], int]:
    """The offsets in ``path``; an absent file is an empty checkpoint (a new log directory)."""
    path = Path(path)
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()

    def bad(line_no: int, why: str) -> CheckpointException:
        return CheckpointException(f"{path}:{line_no}: {why}")

    if len(lines) < 2:
        raise bad(len(lines) + 1, "expected a version line and a count line")
    if lines[0].strip() != str(CURRENT_VERSION):
        raise bad(1, f"unrecognized version {lines[0].strip()!r} (expected {CURRENT_VERSION})")
    try:
        expected = int(lines[1])
    except ValueError:
        raise bad(2, f"entry count {lines[1]!r} is not a number") from None
    offsets: dict[tuple[str, int], int] = {}
    for line_no, line in enumerate(lines[2:], start=3):
        parts = line.split()
        if len(parts) != 3:
            raise bad(line_no, f"expected 'topic partition offset', found {line!r}")
        try:
            offsets[(parts[0], int(parts[1]))] = int(parts[2])
        except ValueError:
            raise bad(line_no, f"partition and offset must be numbers, found {line!r}") from None
    if len(offsets) != expected:
        raise bad(2, f"says {expected} entries but the file holds {len(offsets)}")
    return offsets
