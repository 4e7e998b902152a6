"""A task's ``.checkpoint`` file: the changelog offsets its stores are known to hold on disk.

Mirrors: org.apache.kafka.streams.state.internals.OffsetCheckpoint
         (streams/src/main/java/.../state/internals/OffsetCheckpoint.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (restoring a persistent store replays only the changelog's tail)
Differs: the file is read and written by the broker's checkpoint code (``kafka_lite.log.checkpoint``):
         Kafka keeps two copies of this class, one in core and one in streams, writing one format.

The format, in ``<state.dir>/<application.id>/<task>/.checkpoint``::

    0                       <- version
    2                       <- number of entries
    app-counts-changelog 3 1500     <- changelog topic, partition, offset
    app-totals-changelog 3 880

Written to ``.checkpoint.tmp`` then renamed over the file, so a crash leaves the old checkpoint or
the new one. A task writes it after flushing its stores (on commit and on close), and on start
restores each store from the offset here rather than from the changelog's beginning. An offset
here claims "the store already holds everything before it", so it is written only after a flush.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.checkpoint import CheckpointException, read_checkpoint, write_checkpoint

CHECKPOINT_FILE_NAME = ".checkpoint"

__all__ = ["CHECKPOINT_FILE_NAME", "CheckpointException", "OffsetCheckpoint"]


class OffsetCheckpoint:
    def __init__(self, file: str | os.PathLike) -> None:
        self.file = Path(file)

    def write(self, offsets: dict[TopicPartition, int]) -> None:
        write_checkpoint(self.file, offsets)

    def read(self) -> dict[TopicPartition, int]:
        """The offsets in the file; none if there is no file (a new task, or one never committed).

        A malformed file raises ``CheckpointException`` naming the file and the line.
        """
        return {TopicPartition(*tp): offset for tp, offset in read_checkpoint(self.file).items()}

    def delete(self) -> None:
        """Remove the file: done once a task has read it, so a crash before the next commit is not
        taken for a clean stop (the stores may hold writes past the offsets it names)."""
        self.file.unlink(missing_ok=True)

    def __str__(self) -> str:
        return str(self.file.absolute())
