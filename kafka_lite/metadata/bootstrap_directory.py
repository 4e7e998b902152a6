"""The bootstrap metadata: what the first active controller writes into an empty metadata log,
read from ``bootstrap.checkpoint`` in the metadata log directory.

Mirrors: org.apache.kafka.metadata.bootstrap.BootstrapDirectory and BootstrapMetadata
         (metadata/src/main/java/org/apache/kafka/metadata/bootstrap/, Kafka 3.3.0)
Book:    beyond the book, chapter 12
Differs: the file is read with ``FileRecords`` (the segment reader) rather than a
         ``SnapshotFileReader``; no ``inter.broker.protocol.version`` fallback (kafka_lite's names
         0.10-0.11 protocols, none of them KRaft's), so a directory without the file bootstraps at
         the latest metadata.version.

``kafka-lite storage format --release-version V`` writes ``bootstrap.checkpoint`` into every
directory it formats (``storage_tool.write_bootstrap_checkpoint``): a snapshot-format file whose one
record is the ``FeatureLevelRecord`` of ``metadata.version`` at V. A KRaft node reads it once, as
it is built (``KafkaRaftServer``), and hands it to its controller; the controller that first leads
an empty log appends these records before any other, so the whole cluster runs at the version the
operator formatted with, whichever node happens to be elected first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kafka_lite.common.metadata import ApiMessageAndVersion, FeatureLevelRecord, MetadataRecordSerde
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.metadata.metadata_version import (
    LATEST_METADATA_VERSION,
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_BOOTSTRAP_VERSION,
    MetadataVersion,
)

BINARY_BOOTSTRAP_FILENAME = "bootstrap.checkpoint"


@dataclass(frozen=True)
class BootstrapMetadata:
    """The records an empty log starts with, their metadata.version, and where they came from."""

    records: tuple[ApiMessageAndVersion, ...]
    metadata_version: MetadataVersion
    source: str

    @staticmethod
    def from_version(version: MetadataVersion, source: str) -> BootstrapMetadata:
        record = FeatureLevelRecord(name=METADATA_VERSION_FEATURE_NAME, feature_level=version.feature_level)
        return BootstrapMetadata((ApiMessageAndVersion(record, 0),), version, source)

    @staticmethod
    def from_records(records: list[ApiMessageAndVersion], source: str) -> BootstrapMetadata:
        """The records with the metadata.version their FeatureLevelRecord names; refused, as
        Kafka refuses it, without one or below the first version that bootstraps this way."""
        levels = [
            r.message.feature_level
            for r in records
            if isinstance(r.message, FeatureLevelRecord) and r.message.name == METADATA_VERSION_FEATURE_NAME
        ]
        if not levels:
            raise ValueError(
                f"No FeatureLevelRecord for {METADATA_VERSION_FEATURE_NAME} was found in {source}"
            )
        version = MetadataVersion.from_feature_level(levels[0])
        if version.is_less_than(MINIMUM_BOOTSTRAP_VERSION):
            raise ValueError(
                f"Bootstrap metadata versions before {MINIMUM_BOOTSTRAP_VERSION} are not supported. "
                f"Can't load metadata from {source}"
            )
        return BootstrapMetadata(tuple(records), version, source)


def read_bootstrap_directory(directory: str | Path) -> BootstrapMetadata:
    """``BootstrapDirectory.read``: the file's records, or the latest metadata.version's when the
    directory has no file (a directory formatted before the file existed)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"No such directory as {directory}")
    path = directory / BINARY_BOOTSTRAP_FILENAME
    if not path.exists():
        return BootstrapMetadata.from_version(LATEST_METADATA_VERSION, "the default bootstrap")
    return BootstrapMetadata.from_records(
        _read_binary_file(path), f"the binary bootstrap metadata file: {path}"
    )


def _read_binary_file(path: Path) -> list[ApiMessageAndVersion]:
    """Every record of the file's data batches; the snapshot header and footer are control batches."""
    serde = MetadataRecordSerde()
    records = FileRecords.open(path, mutable=False, create=False)
    try:
        return [
            serde.deserialize(record.value)
            for _, batch in records.batches(allow_partial_tail=False)
            if not batch.is_control_batch
            for record in batch
        ]
    finally:
        records.close()
