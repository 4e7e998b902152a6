"""A task's ``.checkpoint`` file: the changelog offsets its stores are known to hold on disk.

Mirrors: org.apache.kafka.streams.state.internals.OffsetCheckpoint
         (streams/src/main/java/.../state/internals/OffsetCheckpoint.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (restoring a persistent store replays only the changelog's tail)
Differs: the format is ``kafka_lite/common/checkpoint_file.py``'s, which the broker's offset
         checkpoints use too: Kafka keeps two copies, one in core and one in streams, writing one
         format. Streams imports nothing of the broker.

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

from kafka_lite.common.checkpoint_file import (
    CURRENT_VERSION,
    OFFSET_FORMATTER,
    CheckpointException,
    CheckpointFile,
)
from kafka_lite.common.topic_partition import TopicPartition

CHECKPOINT_FILE_NAME = ".checkpoint"

__all__ = ["CHECKPOINT_FILE_NAME", "CheckpointException", "OffsetCheckpoint"]


class OffsetCheckpoint:
    def __init__(self, file: str | os.PathLike) -> None:
        self.file = Path(file)
        self._checkpoint_file = CheckpointFile(self.file, CURRENT_VERSION, OFFSET_FORMATTER)

    def write(self, offsets: dict[TopicPartition, int]) -> None:
        """Replace the file with ``offsets``, one ``topic partition offset`` line each, sorted."""
        self._checkpoint_file.write(sorted(offsets.items()))

    def read(self) -> dict[TopicPartition, int]:
        """The offsets in the file; none if there is no file (a new task, or one never committed).

        A malformed file raises ``CheckpointException`` naming the file and the line.
        """
        return {TopicPartition(*tp): offset for tp, offset in self._checkpoint_file.read()}

    def delete(self) -> None:
        """Remove the file: done once a task has read it, so a crash before the next commit is not
        taken for a clean stop (the stores may hold writes past the offsets it names)."""
        self.file.unlink(missing_ok=True)

    def __str__(self) -> str:
        return str(self.file.absolute())
