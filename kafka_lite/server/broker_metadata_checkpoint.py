"""``meta.properties``: what a log directory remembers of the node it belongs to.

Mirrors: kafka.server.BrokerMetadataCheckpoint, RawMetaProperties, MetaProperties, ZkMetaProperties
         (core/src/main/scala/kafka/server/BrokerMetadataCheckpoint.scala, Kafka 3.3.0), and the
         check of KafkaRaftServer.initializeLogDirs (KafkaRaftServer.scala)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a directory whose ``meta.properties`` cannot be read stops the node, naming the file
         (Kafka marks the directory offline and goes on with the others); no ``bootstrap.checkpoint``
         is read here (``storage_tool.py`` writes it).

Every log directory holds a small properties file saying whose data it is, so that a disk moved to
the wrong machine, or a ``log.dirs`` pointing at another node's data, is caught at start-up rather
than served. It comes in two versions:

- **version 0** (ZooKeeper mode, since Kafka 0.9): ``broker.id``, written by the broker itself the
  first time it starts on an empty directory. The cluster id lives in ZooKeeper.
- **version 1** (KRaft mode, KIP-631): ``cluster.id`` and ``node.id``, written only by
  ``kafka-storage format`` (``storage_tool.py``). A KRaft node never formats its own directories:
  with no ZooKeeper to hand out a cluster id, a node that made one up on an empty disk would
  start a new cluster of one, so it refuses to start on an unformatted directory instead.

``RawMetaProperties`` is the file as read, any version; ``MetaProperties`` is a checked version 1 and
``ZkMetaProperties`` a version 0 as the ZooKeeper broker writes it. ``BrokerMetadataCheckpoint``
reads and writes one file, atomically (a temporary file, flushed, then renamed over the old one).
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.server.kafka_config import read_properties

log = logging.getLogger(__name__)

META_PROPERTIES = "meta.properties"

CLUSTER_ID_KEY = "cluster.id"
BROKER_ID_KEY = "broker.id"
NODE_ID_KEY = "node.id"
VERSION_KEY = "version"

# The directory of the metadata log (Kafka's UnifiedLog.logDirName(KafkaRaftServer.MetadataPartition)).
METADATA_PARTITION_DIR = "__cluster_metadata-0"


class MetaPropertiesException(KafkaException):
    """A ``meta.properties`` that lacks a field, has one that does not parse, or has the wrong version."""


class InconsistentBrokerMetadataException(KafkaException):
    """The log directories of one node hold different ``meta.properties`` (Kafka's kafka.common one)."""


class InconsistentNodeIdException(KafkaException):
    """The configured ``node.id`` is not the one the directories were formatted for."""


class RawMetaProperties:
    """The file's properties as read, whatever the version; ``source`` names the file in errors.
    Two are equal when their properties are (the file they came from does not count)."""

    def __init__(self, props: Mapping[str, str] | None = None, source: str | Path | None = None) -> None:
        self.props: dict[str, str] = dict(props or {})
        self.source = source

    @property
    def cluster_id(self) -> str | None:
        return self.props.get(CLUSTER_ID_KEY)

    @cluster_id.setter
    def cluster_id(self, cluster_id: str) -> None:
        self.props[CLUSTER_ID_KEY] = cluster_id

    @property
    def broker_id(self) -> int | None:
        return self._int_value(BROKER_ID_KEY)

    @broker_id.setter
    def broker_id(self, broker_id: int) -> None:
        self.props[BROKER_ID_KEY] = str(broker_id)

    @property
    def node_id(self) -> int | None:
        return self._int_value(NODE_ID_KEY)

    @node_id.setter
    def node_id(self, node_id: int) -> None:
        self.props[NODE_ID_KEY] = str(node_id)

    @property
    def version(self) -> int:
        """0 when the field is missing: the files Kafka 0.9-2.7 wrote always say 0, but the
        rule is Kafka's, so that a hand-written file with only ``broker.id`` is read too."""
        version = self._int_value(VERSION_KEY)
        return 0 if version is None else version

    @version.setter
    def version(self, version: int) -> None:
        self.props[VERSION_KEY] = str(version)

    def require_version(self, expected_version: int) -> None:
        if self.version != expected_version:
            raise MetaPropertiesException(
                f"{self._where()}Expected version {expected_version}, but got version {self.version}"
            )

    def require(self, key: str, value: object) -> object:
        """``value``, or an error naming the missing field and the file (Kafka's ``MetaProperties.require``)."""
        if value is None:
            raise MetaPropertiesException(f"{self._where()}Failed to find required property {key}.")
        return value

    def _int_value(self, key: str) -> int | None:
        value = self.props.get(key)
        if value is None:
            return None
        try:
            return int(value.strip())
        except ValueError:
            raise MetaPropertiesException(
                f"{self._where()}Failed to parse {key} property as an int: {value!r}"
            ) from None

    def _where(self) -> str:
        return f"{self.source}: " if self.source is not None else ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawMetaProperties) and self.props == other.props

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.props.items())))

    def __str__(self) -> str:
        # Kafka's toString: the keys sorted, "{cluster.id=..., node.id=1, version=1}"
        return "{" + ", ".join(f"{k}={self.props[k]}" for k in sorted(self.props)) + "}"

    __repr__ = __str__


@dataclass(frozen=True)
class MetaProperties:
    """A KRaft node's ``meta.properties``: version 1, with the cluster id and the node id."""

    cluster_id: str
    node_id: int

    @classmethod
    def parse(cls, properties: RawMetaProperties) -> MetaProperties:
        properties.require_version(1)
        cluster_id = properties.require(CLUSTER_ID_KEY, properties.cluster_id)
        node_id = properties.require(NODE_ID_KEY, properties.node_id)
        return cls(cluster_id, node_id)

    def to_properties(self) -> dict[str, str]:
        properties = RawMetaProperties()
        properties.version = 1
        properties.cluster_id = self.cluster_id
        properties.node_id = self.node_id
        return properties.props

    def __str__(self) -> str:
        return f"MetaProperties(clusterId={self.cluster_id}, nodeId={self.node_id})"


@dataclass(frozen=True)
class ZkMetaProperties:
    """A ZooKeeper-mode broker's ``meta.properties``: version 0 with its ``broker.id``. Kafka 0.10.1
    writes only that; from 2.x Kafka adds the ZooKeeper cluster's id, which kafka_lite's broker,
    on the book's path, leaves out (``cluster_id`` None)."""

    broker_id: int
    cluster_id: str | None = None

    def to_properties(self) -> dict[str, str]:
        properties = RawMetaProperties()
        properties.version = 0
        if self.cluster_id is not None:
            properties.cluster_id = self.cluster_id
        properties.broker_id = self.broker_id
        return properties.props


class BrokerMetadataCheckpoint:
    """One ``meta.properties`` file: ``read`` gives its properties (None if there is none), ``write``
    replaces it whole, so that a crash leaves either the old file or the new one."""

    def __init__(self, file: str | Path, time: Time = SYSTEM) -> None:
        self.file = Path(file)
        self._time = time  # the date Java's Properties.store writes as a comment

    def write(self, properties: Mapping[str, str]) -> None:
        temp = self.file.with_name(self.file.name + ".tmp")
        with open(temp, "w", encoding="utf-8") as out:
            out.write(_properties_text(properties, self._time.milliseconds()))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, self.file)  # Kafka's Utils.atomicMoveWithFallback

    def read(self) -> dict[str, str] | None:
        # a temporary file is what a crash during write left behind: the real file is whole
        self.file.with_name(self.file.name + ".tmp").unlink(missing_ok=True)
        if not self.file.exists():
            log.warning("No meta.properties file under dir %s", self.file.parent.absolute())
            return None
        return read_properties(self.file)

    def read_raw(self) -> RawMetaProperties | None:
        """``read``, as ``RawMetaProperties`` whose errors name this file."""
        props = self.read()
        return None if props is None else RawMetaProperties(props, source=self.file)


def _properties_text(properties: Mapping[str, str], now_ms: int) -> str:
    """What Java's ``Properties.store(out, "")`` writes: an empty comment, the date, then
    ``key=value`` lines (sorted here; a Hashtable has no order). Our keys and values need no escapes."""
    date = datetime.datetime.fromtimestamp(now_ms / 1000, tz=datetime.UTC)
    lines = ["#", "#" + date.strftime("%a %b %d %H:%M:%S UTC %Y")]
    lines += [f"{key}={properties[key]}" for key in sorted(properties)]
    return "\n".join(lines) + "\n"


def get_broker_metadata(log_dirs: Sequence[str | Path], ignore_missing: bool) -> RawMetaProperties:
    """The one ``meta.properties`` the directories agree on (Kafka's
    ``getBrokerMetadataAndOfflineDirs``): an empty ``RawMetaProperties`` if none has one, an error if
    one lacks it (unless ``ignore_missing``, as a ZooKeeper broker that writes its own) or if two differ.
    Two brokers sharing a directory, or data copied by hand from another node, show up here."""
    if not log_dirs:
        raise KafkaException("Must have at least one log dir to read meta.properties")
    found: dict[Path, RawMetaProperties] = {}
    for log_dir in map(Path, log_dirs):
        raw = BrokerMetadataCheckpoint(log_dir / META_PROPERTIES).read_raw()
        if raw is not None:
            found[log_dir] = raw
        elif not ignore_missing:
            raise KafkaException(
                f"No `meta.properties` found in {log_dir} (have you run `kafka-lite storage format` to "
                f"format the directory?)"
            )
    if not found:
        return RawMetaProperties()
    if len(set(found.values())) > 1:
        lines = "".join(f"- {log_dir} -> {raw}\n" for log_dir, raw in found.items())
        raise InconsistentBrokerMetadataException(
            "BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers shared "
            f"a log directory (log.dirs) or partial data was manually copied from another broker. Found:\n{lines}"
        )
    return next(iter(found.values()))


# --8<-- [start:initialize_log_dirs]
def initialize_log_dirs(log_dirs: Sequence[Path], metadata_log_dir: Path, node_id: int) -> MetaProperties:
    """What a KRaft node checks of its directories before it starts (Kafka's
    ``KafkaRaftServer.initializeLogDirs``): every one formatted, all with the same ``meta.properties``
    (so one cluster id), version 1, for this ``node.id``, and the metadata log only in
    ``metadata.log.dir``."""
    dirs = list(dict.fromkeys([*map(Path, log_dirs), Path(metadata_log_dir)]))
    raw = get_broker_metadata(dirs, ignore_missing=False)
    for log_dir in dirs:
        metadata_dir = log_dir / METADATA_PARTITION_DIR
        if log_dir != Path(metadata_log_dir) and metadata_dir.exists():
            raise KafkaException(
                f"Found unexpected metadata location in data directory `{metadata_dir}` (the configured "
                f"metadata directory is {metadata_log_dir})."
            )
    meta_properties = MetaProperties.parse(raw)
    if meta_properties.node_id != node_id:
        raise InconsistentNodeIdException(
            f"Configured node.id `{node_id}` doesn't match stored node.id `{meta_properties.node_id}` in "
            "meta.properties. If you moved your data, make sure your configured node.id matches. If you "
            "intend to create a new node, you should remove all data in your data directories (log.dirs)."
        )
    return meta_properties


# --8<-- [end:initialize_log_dirs]
