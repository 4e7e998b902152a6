"""The API keys: one number per request type, with the versions kafka_lite speaks for each.

Mirrors: org.apache.kafka.common.protocol.ApiKeys (clients/.../common/protocol/ApiKeys.java, Kafka 0.11.0)
Book:    chapter 2 (KafkaApis.handle switches on the request's api key)
Differs: names are the current protocol's (FindCoordinator, not 0.10's GroupCoordinator).

The version range of each API is read off the schema tables in ``messages.py``, never typed
twice: the lowest version with a schema is the oldest, the last is the newest.
"""

from __future__ import annotations

import enum

from kafka_lite.common.protocol.messages import REQUESTS, RESPONSES
from kafka_lite.common.protocol.types import Schema


class ApiKeys(enum.IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17  # Kafka 0.10 (KIP-43); v1 in 1.0 (KIP-152)
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSETS_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    SASL_AUTHENTICATE = 36  # Kafka 1.0 (KIP-152)
    CREATE_PARTITIONS = 37  # Kafka 1.0 (KIP-195)
    DESCRIBE_PRODUCERS = 61  # Kafka 3.0 (KIP-664): finding and aborting hanging transactions

    @property
    def api_name(self) -> str:
        """CamelCase, as Kafka's docs and the clients' logs name it (``ListOffsets``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def inter_broker(self) -> bool:
        """Sent only between brokers (by the controller or a follower), never by a client."""
        return self in _INTER_BROKER

    @property
    def oldest_version(self) -> int:
        return next(v for v, s in enumerate(REQUESTS[self]) if s is not None)

    @property
    def latest_version(self) -> int:
        return len(REQUESTS[self]) - 1

    def is_version_supported(self, version: int) -> bool:
        """A version kafka_lite has a schema for (every version from the oldest to the latest has)."""
        schemas = REQUESTS[self]
        return 0 <= version < len(schemas) and schemas[version] is not None

    def request_schema(self, version: int) -> Schema:
        return REQUESTS[self][version]

    def response_schema(self, version: int) -> Schema:
        return RESPONSES[self][version]

    @classmethod
    def for_id(cls, api_key: int) -> ApiKeys | None:
        try:
            return cls(api_key)
        except ValueError:
            return None


_INTER_BROKER = {
    ApiKeys.LEADER_AND_ISR,
    ApiKeys.STOP_REPLICA,
    ApiKeys.UPDATE_METADATA,
    ApiKeys.CONTROLLED_SHUTDOWN,
    ApiKeys.OFFSETS_FOR_LEADER_EPOCH,
    ApiKeys.WRITE_TXN_MARKERS,  # the transaction coordinator to a partition's leader
}


def api_versions(handled: list[ApiKeys] | set[ApiKeys]) -> list[dict[str, int]]:
    """The ``api_versions`` entries a broker advertises: exactly the APIs it has handlers for, each
    with the version range read off its schemas (never typed twice)."""
    return [
        {"api_key": int(api), "min_version": api.oldest_version, "max_version": api.latest_version}
        for api in sorted(handled)
    ]
