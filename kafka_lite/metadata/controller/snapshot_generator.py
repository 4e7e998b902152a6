"""Writing a controller snapshot a few batches at a time, between other events.

Mirrors: org.apache.kafka.controller.SnapshotGenerator
         (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the records come from a ``MetadataImage`` of the committed log (its ``write``), as Kafka
         3.3's brokers write their snapshots, not from each control manager's timeline iterator at
         the committed offset; the batches are the image's records cut into fixed-size lists.

A snapshot of a large cluster is many batches, and the controller has one thread: writing it all at
once would hold up every request behind it. So the generator writes at most
``max_batches_per_generate_call`` batches per call and the controller schedules the next call as a
deferred event with no delay, letting waiting requests run in between. The image is immutable, so
later writes cannot leak into a snapshot being written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from kafka_lite.common.metadata import (
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.image import MetadataDelta, MetadataImage

log = logging.getLogger(__name__)

MAX_BATCHES_PER_GENERATE_CALL = 10
MAX_RECORDS_PER_SNAPSHOT_BATCH = 100


class Section:
    """A named run of batches (the features, the cluster, the topics...): named in the logs."""

    def __init__(self, name: str, batches: Iterable[list[Any]]) -> None:
        self.name = name
        self.iterator: Iterator[list[Any]] = iter(batches)


def batches_of(records: list[Any], size: int = MAX_RECORDS_PER_SNAPSHOT_BATCH) -> list[list[Any]]:
    return [records[i : i + size] for i in range(0, len(records), size)]


class SnapshotGenerator:
    def __init__(self, writer: Any, max_batches_per_generate_call: int, sections: list[Section]) -> None:
        self._writer = writer
        self._max_batches_per_generate_call = max_batches_per_generate_call
        self._section_iterator = iter(sections)
        self._batch_iterator: Iterator[list[Any]] = iter(())
        self._section: Section | None = None
        self._num_records = 0

    def last_contained_log_offset(self) -> int:
        return self._writer.last_contained_log_offset()

    def writer(self) -> Any:
        return self._writer

    def _generate_batch(self) -> bool:
        """Write the next batch; True once the last is written and the snapshot frozen."""
        batch = next(self._batch_iterator, None)
        while batch is None:
            if self._section is not None:
                log.info("Generated %d record(s) for the %s section of snapshot %s.",
                         self._num_records, self._section.name, self._writer.snapshot_id())  # fmt: skip
                self._section = None
                self._num_records = 0
            self._section = next(self._section_iterator, None)
            if self._section is None:
                self._writer.freeze()
                return True
            log.info("Generating records for the %s section of snapshot %s.", self._section.name,
                     self._writer.snapshot_id())  # fmt: skip
            self._batch_iterator = self._section.iterator
            batch = next(self._batch_iterator, None)
        self._writer.append(batch)
        self._num_records += len(batch)
        return False

    def generate_batches(self) -> int | None:
        """Write the next few batches: the delay in ns before the next call, or None when done."""
        for _ in range(self._max_batches_per_generate_call):
            if self._generate_batch():
                return None
        return 0


class CommittedImage:
    """The committed records as a ``MetadataImage``: what a snapshot is written from."""

    def __init__(self) -> None:
        self.image = MetadataImage.EMPTY

    def replay(self, last_offset: int, epoch: int, records: list[ApiMessageAndVersion]) -> None:
        delta = MetadataDelta(self.image)
        for record in records:
            delta.replay(last_offset, epoch, record.message)
        self.image = delta.apply()

    def load_snapshot(self, last_offset: int, epoch: int, records: list[ApiMessageAndVersion]) -> None:
        self.image = MetadataImage.EMPTY
        self.replay(last_offset, epoch, records)

    def records(self) -> list[ApiMessageAndVersion]:
        out: list[ApiMessageAndVersion] = []
        self.image.write(out)
        return out


_SECTIONS = {
    FeatureLevelRecord: "features",
    RegisterBrokerRecord: "cluster", FenceBrokerRecord: "cluster", UnfenceBrokerRecord: "cluster",
    TopicRecord: "replication", PartitionRecord: "replication",
    ConfigRecord: "configuration",
    ProducerIdsRecord: "producerIds",
}  # fmt: skip


def sections(records: list[ApiMessageAndVersion]) -> list[Section]:
    """The image's records, cut where the kind of record changes, as Kafka's sections."""
    runs: list[tuple[str, list[ApiMessageAndVersion]]] = []
    for record in records:
        name = _SECTIONS.get(type(record.message), "other")
        if not runs or runs[-1][0] != name:
            runs.append((name, []))
        runs[-1][1].append(record)
    return [Section(name, batches_of(run)) for name, run in runs]
