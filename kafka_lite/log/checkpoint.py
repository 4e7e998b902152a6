"""The broker's offset checkpoint files: recovery points, high watermarks, cleaner offsets.

Mirrors: kafka.server.OffsetCheckpoint (core/src/main/scala/kafka/server/OffsetCheckpoint.scala,
         Kafka 0.10.1); the files ``recovery-point-offset-checkpoint``,
         ``replication-offset-checkpoint`` and ``cleaner-offset-checkpoint`` in each log directory,
         and, through the same ``CheckpointFile``, each log's ``leader-epoch-checkpoint``
         (``kafka_lite/log/epoch/``)
Book:    chapter 6, 6.1.5 (the log manager checkpoints recovery points); 6.2 (high watermarks)
Differs: the file format (``CheckpointFile``, its formatters, ``CheckpointException``) lives in
         ``kafka_lite/common/checkpoint_file.py``, which a Streams task's ``.checkpoint`` shares;
         it is re-exported here for the log's other checkpoint files.

An offset checkpoint maps ``(topic, partition)`` to an offset, one ``topic partition offset`` line
each, written sorted by partition. The log manager writes the recovery points, the replica manager
the high watermarks, the cleaner how far it has cleaned; each reads its file back on start.
"""

from __future__ import annotations

import os

from kafka_lite.common.checkpoint_file import (
    CURRENT_VERSION,
    OFFSET_FORMATTER,
    CheckpointException,
    CheckpointFile,
    CheckpointFileFormatter,
    OffsetCheckpointFormatter,
)

__all__ = [
    "CURRENT_VERSION",
    "OFFSET_FORMATTER",
    "CheckpointException",
    "CheckpointFile",
    "CheckpointFileFormatter",
    "OffsetCheckpointFormatter",
    "read_checkpoint",
    "write_checkpoint",
]


def write_checkpoint(path: str | os.PathLike, offsets: dict[tuple[str, int], int]) -> None:
    """Write ``offsets`` (``(topic, partition) -> offset``) to ``path``, sorted by partition."""
    CheckpointFile(path, CURRENT_VERSION, OFFSET_FORMATTER).write(sorted(offsets.items()))


def read_checkpoint(path: str | os.PathLike) -> dict[tuple[str, int], int]:
    """The offsets in ``path``; an absent file is an empty checkpoint (a new log directory)."""
    return dict(CheckpointFile(path, CURRENT_VERSION, OFFSET_FORMATTER).read())
