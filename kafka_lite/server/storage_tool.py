"""The storage tool: format a KRaft node's log directories before its first start.

Mirrors: kafka.tools.StorageTool (core/src/main/scala/kafka/tools/StorageTool.scala, Kafka 3.3.0),
         with org.apache.kafka.common.Uuid's string form, and BootstrapDirectory.writeBinaryFile
         and BatchFileWriter (metadata/.../metadata/bootstrap/, metadata/util/) for bootstrap.checkpoint
Book:    beyond the book: chapter 12 (KRaft)
Differs: lives in ``server/``, not ``tools/``, since it reads KafkaConfig; ``--release-version``
         defaults to the latest metadata.version (Kafka takes ``inter.broker.protocol.version`` if
         set, which in kafka_lite names 0.10-0.11 protocols, not KRaft ones).

A ZooKeeper cluster's id is made by the first broker to reach ZooKeeper, and each broker writes its
own ``meta.properties``. A KRaft cluster has no such place to agree in, so its id is chosen once, by
a person, and written into every node's directories before any starts (``kafka-storage.sh``):

    kafka-lite storage random-uuid                            # a cluster id
    kafka-lite storage format -t <id> -c server.properties    # on every node, with the same id
    kafka-lite storage info -c server.properties              # what the directories hold

``format`` writes ``meta.properties`` version 1 (the cluster id and this node's ``node.id``) into each
of ``log.dirs`` and ``metadata.log.dir``, and ``bootstrap.checkpoint``: the records the controller
writes into an empty metadata log, here only the ``FeatureLevelRecord`` of ``metadata.version``. A
directory already formatted is refused unless ``--ignore-formatted``: formatting it again with a new
cluster id would cut the node off from its cluster. Every failure is a ``TerseFailure``, printed as
its one line with exit code 1, as Kafka's tool does.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.metadata import ApiMessageAndVersion, FeatureLevelRecord, MetadataRecordSerde
from kafka_lite.common.record.control_record_utils import (
    SNAPSHOT_FOOTER_CURRENT_VERSION,
    SNAPSHOT_HEADER_CURRENT_VERSION,
    with_snapshot_footer_record,
    with_snapshot_header_record,
)
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.metadata.bootstrap_directory import BINARY_BOOTSTRAP_FILENAME
from kafka_lite.metadata.metadata_version import (
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_BOOTSTRAP_VERSION,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)
from kafka_lite.raft.internals.batch_accumulator import BatchAccumulator
from kafka_lite.raft.kafka_raft_client import MAX_BATCH_SIZE_BYTES
from kafka_lite.raft.timer import LONG_MAX
from kafka_lite.server.broker_metadata_checkpoint import (
    META_PROPERTIES,
    BrokerMetadataCheckpoint,
    MetaProperties,
    RawMetaProperties,
)
from kafka_lite.server.kafka_config import KafkaConfig, read_properties

# Kafka's Uuid.METADATA_TOPIC_ID and ZERO_UUID: reserved, never handed out.
_RESERVED_UUIDS = (uuid.UUID(int=1), uuid.UUID(int=0))
_URL_SAFE_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")


class TerseFailure(KafkaException):
    """A failure the user can fix, shown as its message alone (Kafka's ``kafka.tools.TerseFailure``)."""


# -- Kafka's Uuid, as a string ---------------------------------------------------------------------------


def uuid_to_string(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: the 16 bytes in url-safe base64 without padding, 22 characters
    (the form kafka_lite's ZooKeeper cluster ids already have)."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def random_uuid() -> str:
    """Kafka's ``Uuid.randomUuid``: a random (version 4) UUID, never a reserved one, and never one
    whose string starts with ``-``, which a command line would take for an option."""
    while True:
        value = uuid.uuid4()
        text = uuid_to_string(value)
        if value not in _RESERVED_UUIDS and not text.startswith("-"):
            return text


def uuid_from_string(text: str) -> uuid.UUID:
    """Kafka's ``Uuid.fromString``: url-safe base64 of exactly 16 bytes; ValueError otherwise."""
    if len(text) > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    if not _URL_SAFE_BASE64.fullmatch(text):
        raise ValueError(f"Input string `{text}` has characters that are not url-safe base64")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"Input string `{text}` is not base64: {e}") from None
    if len(data) != 16:
        raise ValueError(
            f"Input string `{text}` decoded as {len(data)} bytes, which is not equal to the expected 16 "
            f"bytes of a base64-encoded UUID"
        )
    return uuid.UUID(bytes=data)


# -- the commands ------------------------------------------------------------------------------------------


def load_config(path: str | Path) -> KafkaConfig:
    """The ``-c`` file as a KafkaConfig; a setting it refuses is a TerseFailure naming the setting."""
    try:
        return KafkaConfig(read_properties(path))
    except KafkaException as e:
        raise TerseFailure(str(e)) from None


def config_to_log_directories(config: KafkaConfig) -> list[str]:
    """``log.dirs`` and ``metadata.log.dir``, each once, sorted (Kafka's ``configToLogDirectories``)."""
    return sorted({*map(str, config.log_dirs), str(config.metadata_log_dir)})


def config_to_self_managed_mode(config: KafkaConfig) -> bool:
    return config.uses_self_managed_quorum


def metadata_version(release_version: str | None) -> MetadataVersion:
    """``--release-version``: ``3.3-IV3``, or a release (``3.3``) for its last level (Kafka's
    ``MetadataVersion.fromVersionString``); the latest when not given."""
    if release_version is None:
        return MetadataVersion.latest()
    matches = [v for v in MetadataVersion if release_version in (v.version, v.version.partition("-")[0])]
    if not matches:
        known = ", ".join(v.version for v in MetadataVersion)
        raise TerseFailure(
            f"--release-version {release_version} is not a KRaft metadata.version; kafka_lite knows {known}"
        )
    return matches[-1]


def build_metadata_properties(cluster_id: str, config: KafkaConfig) -> MetaProperties:
    try:
        effective_cluster_id = uuid_from_string(cluster_id)
    except ValueError as e:
        raise TerseFailure(
            f"Cluster ID string {cluster_id} does not appear to be a valid UUID: {e}"
        ) from None
    if config.node_id < 0:
        raise TerseFailure(f"The node.id must be set to a non-negative integer. We saw {config.node_id}")
    return MetaProperties(uuid_to_string(effective_cluster_id), config.node_id)


def run_format(
    config: KafkaConfig, cluster_id: str, release_version: str | None, ignore_formatted: bool, stream: TextIO,
    time: Time = SYSTEM,
) -> int:  # fmt: skip
    """``format`` (StorageTool.main's case), checked in Kafka's order: the metadata.version, the cluster id and node id, then
    that the config is a KRaft node's."""
    directories = config_to_log_directories(config)
    version = metadata_version(release_version)
    if version.is_less_than(MINIMUM_KRAFT_VERSION):
        raise TerseFailure("Must specify a valid KRaft metadata version of at least 3.0.")
    meta_properties = build_metadata_properties(cluster_id, config)
    if not config_to_self_managed_mode(config):
        raise TerseFailure(
            "The kafka configuration file appears to be for a legacy cluster. Formatting is only supported "
            "for clusters in KRaft mode."
        )
    return format_command(stream, directories, meta_properties, version, ignore_formatted, time)


# --8<-- [start:format_command]
def format_command(
    stream: TextIO, directories: Sequence[str], meta_properties: MetaProperties,
    version: MetadataVersion, ignore_formatted: bool, time: Time = SYSTEM,
) -> int:  # fmt: skip
    if not directories:
        raise TerseFailure("No log directories found in the configuration.")
    if version.is_less_than(MINIMUM_BOOTSTRAP_VERSION):
        # Kafka's BootstrapMetadata refuses it when the tool writes the file; here before any is written
        raise TerseFailure(
            f"Bootstrap metadata versions before {MINIMUM_BOOTSTRAP_VERSION} are not supported. Can't load "
            f"metadata from format command"
        )
    unformatted = []
    for directory in directories:
        if not Path(directory).is_dir() or not (Path(directory) / META_PROPERTIES).exists():
            unformatted.append(directory)
        elif not ignore_formatted:
            raise TerseFailure(
                f"Log directory {directory} is already formatted. Use --ignore-formatted to ignore this "
                f"directory and format the others."
            )
    if not unformatted:
        stream.write("All of the log directories are already formatted.\n")
    for directory in unformatted:
        try:
            Path(directory).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TerseFailure(f"Unable to create storage directory {directory}: {e}") from None
        BrokerMetadataCheckpoint(Path(directory) / META_PROPERTIES, time).write(
            meta_properties.to_properties()
        )
        write_bootstrap_checkpoint(Path(directory), version, time)
        stream.write(f"Formatting {directory} with metadata.version {version}.\n")
    return 0


# --8<-- [end:format_command]


def write_bootstrap_checkpoint(directory: Path, version: MetadataVersion, time: Time = SYSTEM) -> None:
    """``bootstrap.checkpoint``: the records an empty metadata log starts with, in a snapshot's
    format (Kafka's ``BootstrapDirectory.writeBinaryFile`` with ``BatchFileWriter``): a
    SNAPSHOT_HEADER batch at offset 0, the records, a SNAPSHOT_FOOTER batch, all of epoch 0. Here
    the records are one ``FeatureLevelRecord`` (Kafka's ``BootstrapMetadata.fromVersion``)."""
    records = [
        ApiMessageAndVersion(
            FeatureLevelRecord(name=METADATA_VERSION_FEATURE_NAME, feature_level=version.feature_level), 0
        )
    ]
    now = time.milliseconds()
    header = {"version": SNAPSHOT_HEADER_CURRENT_VERSION, "last_contained_log_timestamp": 0}
    batches = [with_snapshot_header_record(0, now, 0, header).buffer()]
    accumulator = BatchAccumulator(
        0, 1, LONG_MAX, MAX_BATCH_SIZE_BYTES, time, MetadataRecordSerde().serialize
    )
    accumulator.append(0, records)
    batches += [batch.data.buffer() for batch in accumulator.drain()]
    footer = {"version": SNAPSHOT_FOOTER_CURRENT_VERSION}
    batches.append(with_snapshot_footer_record(accumulator.next_offset(), now, 0, footer).buffer())
    accumulator.close()
    temp = directory / (BINARY_BOOTSTRAP_FILENAME + ".tmp")
    try:
        with open(temp, "wb") as out:
            for batch in batches:
                out.write(batch)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, directory / BINARY_BOOTSTRAP_FILENAME)
    finally:
        temp.unlink(missing_ok=True)


# --8<-- [start:info_command]
def info_command(stream: TextIO, self_managed_mode: bool, directories: Sequence[str]) -> int:
    """What each directory holds, and the problems: a directory missing or unformatted, directories
    that disagree, or a format for the other mode. Exit code 1 if there is a problem."""
    problems: list[str] = []
    found_directories: list[str] = []
    prev_metadata: RawMetaProperties | None = None
    for directory in sorted(directories):
        path = Path(directory)
        if not path.is_dir():
            problems.append(f"{path} is not a directory" if path.exists() else f"{path} does not exist")
            continue
        found_directories.append(str(path))
        meta_path = path / META_PROPERTIES
        if not meta_path.exists():
            problems.append(f"{path} is not formatted.")
            continue
        raw = RawMetaProperties(read_properties(meta_path), source=meta_path)
        current = raw if raw.version in (0, 1) else None
        if current is None:
            problems.append(f"Unsupported version for {meta_path}: {raw.version}")
        if prev_metadata is None:
            prev_metadata = current
        elif current is not None and prev_metadata != current:
            problems.append(
                f"Metadata for {meta_path} was {current}, but other directories featured {prev_metadata}"
            )
    if prev_metadata is not None:
        if self_managed_mode and prev_metadata.version == 0:
            problems.append(
                "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories "
                "are formatted for legacy mode."
            )
        elif not self_managed_mode and prev_metadata.version == 1:
            problems.append(
                "The kafka configuration file appears to be for a legacy cluster, but the directories are "
                "formatted for a cluster in KRaft mode."
            )
    if not directories:
        stream.write("No directories specified.\n")
        return 0
    if found_directories:
        stream.write("Found log directory:\n" if len(found_directories) == 1 else "Found log directories:\n")
        stream.writelines(f"  {d}\n" for d in found_directories)
        stream.write("\n")
    if prev_metadata is not None:
        stream.write(f"Found metadata: {prev_metadata}\n\n")
    if not problems:
        return 0
    stream.write("Found problem:\n" if len(problems) == 1 else "Found problems:\n")
    stream.writelines(f"  {p}\n" for p in problems)
    stream.write("\n")
    return 1


# --8<-- [end:info_command]


def run_info(config: KafkaConfig, stream: TextIO) -> int:
    return info_command(stream, config_to_self_managed_mode(config), config_to_log_directories(config))
