"""The inter-broker protocol versions: what ``inter.broker.protocol.version`` may name, in order.

Mirrors: kafka.api.ApiVersion (core/src/main/scala/kafka/api/ApiVersion.scala, Kafka 0.11.0) and the
         validator KafkaConfig gives ``inter.broker.protocol.version``
Book:    chapter 7 (the controller and brokers talk among themselves; a rolling upgrade keeps the
         older protocol until every broker runs the new code); chapter 6, 6.1 (each version names
         the message format it writes, which ``message.format.version`` picks per topic)
Differs: kafka_lite's brokers read the setting for two decisions only, whether a follower truncates
         by leader epoch (``uses_leader_epochs_for_truncation``) and which message formats logs may
         write (``log.message.format.version``, at most this version); the controller sends its
         requests at their Kafka 0.11 versions whatever the setting says, where Kafka picks each
         request's version from it.

Kafka names each change to the inter-broker protocol with an internal version (``0.10.1-IV2``: the
third change made while 0.10.1 was developed), and a release's short name (``0.10.1``) means its last
internal version. A rolling upgrade sets the old version, restarts each broker on the new code, then
sets the new version and restarts them again, so no broker sends a request another cannot read.
Versions compare by their place in the table, never as strings.

Why here, among the record formats: a topic's ``message.format.version`` and the broker's
``log.message.format.version`` are named by these same versions, and the log, a layer below the
broker, reads them to know which magic an append writes (Kafka's LogConfig imports ApiVersion too).
The broker's modules import it from ``kafka_lite.server.api_version``, where Kafka's broker finds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.record.constants import MAGIC_VALUE_V0, MAGIC_VALUE_V1, MAGIC_VALUE_V2


@dataclass(frozen=True, order=True)
class ApiVersion:
    """One inter-broker protocol version; ``id`` orders them (Kafka's ``ApiVersion`` case objects)."""

    id: int
    version: str
    message_format_version: int  # the record format a broker at this version writes

    def __str__(self) -> str:
        return self.version


KAFKA_0_8_0 = ApiVersion(0, "0.8.0.X", MAGIC_VALUE_V0)
KAFKA_0_8_1 = ApiVersion(1, "0.8.1.X", MAGIC_VALUE_V0)
KAFKA_0_8_2 = ApiVersion(2, "0.8.2.X", MAGIC_VALUE_V0)
KAFKA_0_9_0 = ApiVersion(3, "0.9.0.X", MAGIC_VALUE_V0)
KAFKA_0_10_0_IV0 = ApiVersion(4, "0.10.0-IV0", MAGIC_VALUE_V1)  # KIP-31/32: message format v1
KAFKA_0_10_0_IV1 = ApiVersion(5, "0.10.0-IV1", MAGIC_VALUE_V1)  # KIP-36 racks, KIP-43 SASL handshake
KAFKA_0_10_1_IV0 = ApiVersion(6, "0.10.1-IV0", MAGIC_VALUE_V1)  # KIP-62: JoinGroup's rebalance timeout
KAFKA_0_10_1_IV1 = ApiVersion(7, "0.10.1-IV1", MAGIC_VALUE_V1)  # KIP-74: fetch response size limit
KAFKA_0_10_1_IV2 = ApiVersion(8, "0.10.1-IV2", MAGIC_VALUE_V1)  # KIP-79: ListOffsets v1
KAFKA_0_10_2_IV0 = ApiVersion(9, "0.10.2-IV0", MAGIC_VALUE_V1)  # KIP-103: UpdateMetadata v3
KAFKA_0_11_0_IV0 = ApiVersion(10, "0.11.0-IV0", MAGIC_VALUE_V2)  # KIP-98: record batches v2
KAFKA_0_11_0_IV1 = ApiVersion(11, "0.11.0-IV1", MAGIC_VALUE_V2)  # KIP-107: Fetch v4
KAFKA_0_11_0_IV2 = ApiVersion(12, "0.11.0-IV2", MAGIC_VALUE_V2)  # KIP-101: leader epochs

# The names the setting accepts: every internal version, and each release's short name for its last one.
VERSION_NAMES: dict[str, ApiVersion] = {
    "0.8.0": KAFKA_0_8_0,
    "0.8.1": KAFKA_0_8_1,
    "0.8.2": KAFKA_0_8_2,
    "0.9.0": KAFKA_0_9_0,
    "0.10.0-IV0": KAFKA_0_10_0_IV0,
    "0.10.0-IV1": KAFKA_0_10_0_IV1,
    "0.10.0": KAFKA_0_10_0_IV1,
    "0.10.1-IV0": KAFKA_0_10_1_IV0,
    "0.10.1-IV1": KAFKA_0_10_1_IV1,
    "0.10.1-IV2": KAFKA_0_10_1_IV2,
    "0.10.1": KAFKA_0_10_1_IV2,
    "0.10.2-IV0": KAFKA_0_10_2_IV0,
    "0.10.2": KAFKA_0_10_2_IV0,
    "0.11.0-IV0": KAFKA_0_11_0_IV0,
    "0.11.0-IV1": KAFKA_0_11_0_IV1,
    "0.11.0-IV2": KAFKA_0_11_0_IV2,
    "0.11.0": KAFKA_0_11_0_IV2,
}

LATEST_VERSION = max(VERSION_NAMES.values())


def api_version(value: str) -> ApiVersion:
    """The version ``value`` names (Kafka's ``ApiVersion.apply``).

    Only the first three dot-separated parts count, so a release's full number names its protocol:
    ``0.10.1.1`` is ``0.10.1``, which is ``0.10.1-IV2``. An unknown name raises ``ValueError``.
    """
    name = ".".join(str(value).strip().split(".")[:3])
    try:
        return VERSION_NAMES[name]
    except KeyError:
        raise ValueError(f"Version `{value}` is not a valid version") from None


def uses_leader_epochs_for_truncation(version: ApiVersion) -> bool:
    """Whether a follower at ``version`` truncates by leader epoch (KIP-101, from ``0.11.0-IV2``).

    After a leader change a follower must drop whatever its log holds that the new leader's does
    not. From ``0.11.0-IV2`` it asks the leader with OffsetsForLeaderEpoch where its latest epoch
    ends and truncates there; below it, it truncates to its own high watermark, as the book's
    Kafka 0.10 does, which can lose acknowledged records or leave the replicas diverged. Either way
    the leader stamps its epoch into the batches it appends and keeps its epoch cache: only the
    follower's truncation changes. Kafka's ``ReplicaFetcherThread.shouldSendLeaderEpochRequest``.
    """
    return version >= KAFKA_0_11_0_IV2


class ApiVersionValidator:
    """The check of ``inter.broker.protocol.version``: a name ``api_version`` knows."""

    def __call__(self, name: str, value: Any) -> None:
        try:
            api_version(value)
        except ValueError as e:
            raise ConfigException(name, value, f"{e}; accepted values: {self}") from None

    def __str__(self) -> str:
        return "[" + ", ".join(VERSION_NAMES) + "]"
