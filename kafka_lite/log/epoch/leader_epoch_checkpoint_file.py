"""The ``leader-epoch-checkpoint`` file in each log directory: ``epoch startOffset`` a line.

Mirrors: kafka.server.checkpoints.LeaderEpochCheckpointFile and LeaderEpochFile
         (core/src/main/scala/kafka/server/checkpoints/LeaderEpochCheckpointFile.scala, Kafka 0.11.0)
Book:    chapter 6, 6.2 (the checkpoint files of a broker's log directories)
Differs: the file is written at the first flush, where Kafka creates it empty when the log opens
         (an absent file and an empty one both read as no entries, as Kafka's do).

The frame is every checkpoint file's (``kafka_lite/log/checkpoint.py``), byte-compatible with
Kafka's::

    0        <- version
    2        <- number of entries
    0 0      <- epoch 0 began at offset 0
    3 1500   <- epoch 3 began at offset 1500 (epochs 1 and 2 appended nothing here)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from kafka_lite.log.checkpoint import CheckpointFile

LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
CURRENT_VERSION = 0


class EpochEntry(NamedTuple):
    """A leader epoch and the offset of the first record appended under it (Kafka's ``EpochEntry``)."""

    epoch: int
    start_offset: int


class LeaderEpochCheckpointFormatter:
    """``epoch startOffset`` (Kafka's ``LeaderEpochCheckpointFile.Formatter``)."""

    def to_line(self, entry: EpochEntry) -> str:
        return f"{entry.epoch} {entry.start_offset}"

    def from_line(self, line: str) -> EpochEntry:
        parts = line.split()
        if len(parts) != 2:
            raise ValueError("expected 'epoch startOffset'")
        try:
            return EpochEntry(int(parts[0]), int(parts[1]))
        except ValueError:
            raise ValueError("epoch and start offset must be numbers") from None


class LeaderEpochCheckpointFile:
    """Reads and writes a log's epoch entries, atomically (Kafka's ``LeaderEpochCheckpointFile``)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._checkpoint = CheckpointFile(self.path, CURRENT_VERSION, LeaderEpochCheckpointFormatter())

    @classmethod
    def in_dir(cls, log_dir: str | os.PathLike) -> LeaderEpochCheckpointFile:
        """The checkpoint of the log in ``log_dir`` (Kafka's ``LeaderEpochFile.newFile``)."""
        return cls(Path(log_dir) / LEADER_EPOCH_CHECKPOINT_FILE)

    def write(self, epochs: list[EpochEntry]) -> None:
        self._checkpoint.write(epochs)

    def read(self) -> list[EpochEntry]:
        return self._checkpoint.read()
