"""What the cluster- and replication-control tests share: Kafka's MockRandom, and a context that
holds the managers, runs an operation, replays its records as the quorum controller does, and
registers, unfences and fences brokers (Kafka's ReplicationControlTestContext).
"""

from __future__ import annotations

import random
import uuid

from kafka_lite.common.metadata import (
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_lite.common.time import MockTime
from kafka_lite.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_lite.metadata.controller.configuration_control_manager import ConfigurationControlManager
from kafka_lite.metadata.controller.feature_control_manager import FeatureControlManager
from kafka_lite.metadata.controller.replication_control_manager import ReplicationControlManager
from kafka_lite.metadata.metadata_version import (
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)
from kafka_lite.metadata.placement import StripedReplicaPlacer
from kafka_lite.metadata.timeline import SnapshotRegistry

_MASK64 = (1 << 64) - 1


class MockRandom(random.Random):
    """Kafka's MockRandom (a fixed linear congruential generator), with ``java.util.Random``'s
    ``nextInt(bound)`` as ``randrange`` and ``Collections.shuffle`` as ``shuffle``, so a placer
    driven by it places exactly as Kafka's tests expect."""

    def __init__(self) -> None:
        super().__init__(0)
        self.state = 17

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & _MASK64
        value = self.state >> (64 - bits)
        return value - (1 << 32) if bits == 32 and value >= 1 << 31 else value

    def randrange(self, bound: int) -> int:  # type: ignore[override]
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        while u - r + m >= 1 << 31:  # Java's int overflow test ``u - r + m < 0``
            u = self._next(31)
            r = u % bound
        return r

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        for i in range(len(x), 1, -1):
            j = self.randrange(i)
            x[i - 1], x[j] = x[j], x[i - 1]


CLUSTER_ID = "fPZv1VBsRFmnlRvmGcOW9w"
SESSION_TIMEOUT_MS = 9000
_SERDE = MetadataRecordSerde()


def incarnation(broker_id: int) -> uuid.UUID:
    return uuid.UUID(int=0x1000 + broker_id)


# What a broker of this version supports: every KRaft metadata.version.
SUPPORTED_FEATURES = (
    {
        "name": METADATA_VERSION_FEATURE_NAME,
        "min_supported_version": MINIMUM_KRAFT_VERSION.feature_level,
        "max_supported_version": MetadataVersion.latest().feature_level,
    },
)


def registration_request(
    broker_id: int, cluster_id: str = CLUSTER_ID, incarnation_id=None, features=SUPPORTED_FEATURES, rack=None
):
    return {
        "broker_id": broker_id,
        "cluster_id": cluster_id,
        "incarnation_id": incarnation_id or incarnation(broker_id),
        "listeners": [
            {"name": "PLAINTEXT", "host": "localhost", "port": 9092 + broker_id, "security_protocol": 0}
        ],
        "features": list(features),
        "rack": rack,
    }


def heartbeat_request(broker_id: int, broker_epoch: int, offset: int, want_fence=False, want_shut_down=False):
    return {
        "broker_id": broker_id,
        "broker_epoch": broker_epoch,
        "current_metadata_offset": offset,
        "want_fence": want_fence,
        "want_shut_down": want_shut_down,
    }


class ReplicationControlTestContext:
    """The managers of one active controller over one snapshot registry, and the controller's part
    of every write: records replayed in order at increasing offsets (each also round-tripped through
    the metadata serde, so only records the log can hold are written)."""

    def __init__(self, default_replication_factor: int = 3, default_num_partitions: int = 1) -> None:
        self.time = MockTime(start_ns=0)
        self.registry = SnapshotRegistry()
        self.feature_control = FeatureControlManager(self.registry)
        self.configuration_control = ConfigurationControlManager(self.registry)
        self.cluster_control = ClusterControlManager(
            self.time,
            self.registry,
            SESSION_TIMEOUT_MS,
            StripedReplicaPlacer(MockRandom()),
            self.feature_control,
            CLUSTER_ID,
        )
        self.cluster_control.activate()
        ids = iter(uuid.UUID(int=0xA000 + i) for i in range(1_000))
        self.replication_control = ReplicationControlManager(
            self.registry,
            default_replication_factor,
            default_num_partitions,
            self.configuration_control,
            self.cluster_control,
            random_uuid=lambda: next(ids),
        )
        self.next_offset = 0
        self.replayed: list = []

    # --- the controller's half of a write ---

    def replay(self, records) -> int:
        """Replay ``records`` at the next offsets; return the last one's offset."""
        for record in records:
            assert _SERDE.deserialize(_SERDE.serialize(record)) == record
            message = record.message
            offset = self.next_offset
            if isinstance(message, RegisterBrokerRecord):
                self.cluster_control.replay(message, offset)
            elif isinstance(
                message,
                (
                    UnregisterBrokerRecord,
                    FenceBrokerRecord,
                    UnfenceBrokerRecord,
                    BrokerRegistrationChangeRecord,
                ),
            ):
                self.cluster_control.replay(message)
            elif isinstance(
                message, (TopicRecord, PartitionRecord, PartitionChangeRecord, RemoveTopicRecord)
            ):
                self.replication_control.replay(message)
            elif isinstance(message, ConfigRecord):
                self.configuration_control.replay(message)
            elif isinstance(message, FeatureLevelRecord):
                self.feature_control.replay(message)
            else:
                raise AssertionError(f"unexpected record {message!r}")
            self.replayed.append(message)
            self.next_offset += 1
        return self.next_offset - 1

    def replay_one(self, message, version: int = 0) -> int:
        return self.replay([ApiMessageAndVersion(message, version)])

    # --- brokers ---

    def register_broker(self, broker_id: int, **kwargs):
        result = self.cluster_control.register_broker(
            registration_request(broker_id, **kwargs),
            self.next_offset,
            self.feature_control.finalized_features(),
        )
        self.replay(result.records)
        return result

    def register_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            self.register_broker(broker_id)

    def epoch(self, broker_id: int) -> int:
        return self.cluster_control.registration(broker_id).epoch

    def heartbeat(self, broker_id: int, offset: int | None = None, **wants):
        """One heartbeat from ``broker_id`` (at the log's end unless ``offset``), its records replayed;
        a broker entering controlled shutdown gets the offset of those records as its shutdown
        offset, as the quorum controller sets it once they are appended."""
        offset = self.next_offset - 1 if offset is None else offset
        request = heartbeat_request(broker_id, self.epoch(broker_id), offset, **wants)
        result = self.replication_control.process_broker_heartbeat(request)
        last = self.replay(result.records)
        if result.response.in_controlled_shutdown:
            self.cluster_control.heartbeat_manager().update_controlled_shutdown_offset(broker_id, last)
        return result

    def unfence_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            reply = self.heartbeat(broker_id).response
            assert not reply.is_fenced, f"broker {broker_id} was not unfenced"

    def fence_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            reply = self.heartbeat(broker_id, want_fence=True).response
            assert reply.is_fenced

    # --- topics ---

    def create_topic(
        self, name: str, assignments=None, num_partitions=-1, replication_factor=-1, configs=None
    ):
        topic = {
            "topic": name,
            "num_partitions": num_partitions,
            "replication_factor": replication_factor,
            "replica_assignment": [
                {"partition_id": p, "replicas": list(replicas)}
                for p, replicas in enumerate(assignments or [])
            ],
            "config_entries": [{"config_name": k, "config_value": v} for k, v in (configs or {}).items()],
        }
        result = self.replication_control.create_topics(
            {"create_topic_requests": [topic], "timeout": 30_000, "validate_only": False}
        )
        self.replay(result.records)
        return result

    def create_test_topic(self, name: str, assignments) -> uuid.UUID:
        result = self.create_topic(name, assignments)
        error = result.response["topic_errors"][0]
        assert error["error_code"] == 0, error
        return self.replication_control.get_topic_id(name)

    def partition(self, topic_id: uuid.UUID, partition_id: int = 0):
        return self.replication_control.get_partition(topic_id, partition_id)
