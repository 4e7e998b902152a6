"""The metadata records: what the quorum controller appends to ``__cluster_metadata``.

Mirrors: org.apache.kafka.common.metadata.RegisterBrokerRecord, UnregisterBrokerRecord, TopicRecord,
         PartitionRecord, ConfigRecord, PartitionChangeRecord, FenceBrokerRecord, UnfenceBrokerRecord,
         RemoveTopicRecord, FeatureLevelRecord, ProducerIdsRecord, BrokerRegistrationChangeRecord and
         NoOpRecord (metadata/src/main/resources/common/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: one schema table and one small class per record instead of a generated Java class (see
         ``api_message.py``); a nullable string defaults to None where Kafka's generated class
         starts it as "" (``RegisterBrokerRecord.rack``, ``ConfigRecord.value``), since None is
         what "no rack" and "delete this config" mean on the wire; Kafka's ACL, client-quota, SCRAM
         and delegation-token records are not kept.

Each record is the schema of its JSON spec, written as a table, then its class: the class names
its api key and its schemas by version, and its attributes are the spec's fields in snake_case
with the spec's defaults (the ``Field``'s last argument). Every record is flexible from v0 (compact
strings and arrays, a tagged-field section closing every struct), so a record can grow a tagged
field without a new version: ``PartitionRecord.leader_recovery_state`` (KIP-704) was added that
way. A tagged field is written only when it differs from its default, which is what lets a
``PartitionChangeRecord`` say "only the ISR changed" in a few bytes: its fields that did not change
hold their defaults (null, -2 for the leader, -1 for the recovery state) and are not on the wire.
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from kafka_lite.common.metadata.api_message import ApiMessage, Message
from kafka_lite.common.protocol.types import (
    BOOLEAN,
    COMPACT_NULLABLE_STRING,
    COMPACT_STRING,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT16,
    UUID,
    ZERO_UUID,
    CompactArrayOf,
    Field,
    FlexibleSchema,
    TaggedField,
)

F = Field
T = TaggedField
FS = FlexibleSchema
INT32_ARRAY = CompactArrayOf(INT32)
NULLABLE_INT32_ARRAY = CompactArrayOf(INT32, nullable=True)


# --- RegisterBrokerRecord (0), v0-1 -------------------------------------------------------------------
# A broker's registration, written when the controller accepts its BrokerRegistration request: where to
# reach it, what it supports, and its new broker epoch (the record's offset). v1 adds
# InControlledShutdown, so that a snapshot keeps a broker that is shutting down as shutting down.
BROKER_ENDPOINT_V0 = FS(
    F("name", COMPACT_STRING, "The name of the endpoint (the listener).", ""),
    F("host", COMPACT_STRING, "The hostname.", ""),
    F("port", UINT16, "The port.", 0),
    F("security_protocol", INT16, "The security protocol's id.", 0),
)
BROKER_FEATURE_V0 = FS(
    F("name", COMPACT_STRING, "The feature name.", ""),
    F("min_supported_version", INT16, "The minimum supported feature level.", 0),
    F("max_supported_version", INT16, "The maximum supported feature level.", 0),
)
_REGISTER_BROKER_V0_FIELDS = (
    F("broker_id", INT32, "The broker id.", 0),
    F("incarnation_id", UUID, "The incarnation id of the broker process.", ZERO_UUID),
    F("broker_epoch", INT64, "The broker epoch assigned by the controller.", 0),
    F("end_points", CompactArrayOf(BROKER_ENDPOINT_V0), "The endpoints to reach this broker at.", []),
    F("features", CompactArrayOf(BROKER_FEATURE_V0), "The features on this broker.", []),
    F("rack", COMPACT_NULLABLE_STRING, "The broker rack.", None),
    F("fenced", BOOLEAN, "True if the broker is fenced.", True),
)
REGISTER_BROKER_RECORD_V0 = FS(*_REGISTER_BROKER_V0_FIELDS)
REGISTER_BROKER_RECORD_V1 = FS(
    *_REGISTER_BROKER_V0_FIELDS,
    F("in_controlled_shutdown", BOOLEAN, "True if the broker is in controlled shutdown.", False),
)


class BrokerEndpoint(Message):
    """One listener of a registered broker (``RegisterBrokerRecord.BrokerEndpoint``)."""

    SCHEMAS = (BROKER_ENDPOINT_V0, BROKER_ENDPOINT_V0)  # the same at both versions of the record
    name: str
    host: str
    port: int
    security_protocol: int


class BrokerFeature(Message):
    """One feature a registered broker supports, with its range (``RegisterBrokerRecord.BrokerFeature``)."""

    SCHEMAS = (BROKER_FEATURE_V0, BROKER_FEATURE_V0)
    name: str
    min_supported_version: int
    max_supported_version: int


class RegisterBrokerRecord(ApiMessage):
    API_KEY = 0
    SCHEMAS = (REGISTER_BROKER_RECORD_V0, REGISTER_BROKER_RECORD_V1)
    STRUCTS: ClassVar = {"end_points": BrokerEndpoint, "features": BrokerFeature}
    broker_id: int
    incarnation_id: uuid.UUID
    broker_epoch: int
    end_points: list[BrokerEndpoint]
    features: list[BrokerFeature]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool


# --- UnregisterBrokerRecord (1), v0 -------------------------------------------------------------------
# A broker removed from the cluster (an admin's UnregisterBroker): its registration is dropped.
UNREGISTER_BROKER_RECORD_V0 = FS(
    F("broker_id", INT32, "The broker id.", 0),
    F("broker_epoch", INT64, "The broker epoch.", 0),
)


class UnregisterBrokerRecord(ApiMessage):
    API_KEY = 1
    SCHEMAS = (UNREGISTER_BROKER_RECORD_V0,)
    broker_id: int
    broker_epoch: int


# --- TopicRecord (2), v0 ------------------------------------------------------------------------------
# A new topic, named and given its id; its partitions follow as PartitionRecords in the same batch.
TOPIC_RECORD_V0 = FS(
    F("name", COMPACT_STRING, "The topic name.", ""),
    F("topic_id", UUID, "The unique id of this topic.", ZERO_UUID),
)


class TopicRecord(ApiMessage):
    API_KEY = 2
    SCHEMAS = (TOPIC_RECORD_V0,)
    name: str
    topic_id: uuid.UUID


# --- PartitionRecord (3), v0 --------------------------------------------------------------------------
# A partition's whole state: chapter 7's LeaderAndIsr znode and its assignment in one record. The
# partition epoch is new with KRaft: it counts every change to the partition, so that an AlterPartition
# built on an old state is refused.
PARTITION_RECORD_V0 = FS(
    F("partition_id", INT32, "The partition id.", -1),
    F("topic_id", UUID, "The unique id of this topic.", ZERO_UUID),
    F("replicas", INT32_ARRAY, "The replicas of this partition, sorted by preferred order.", []),
    F("isr", INT32_ARRAY, "The in-sync replicas of this partition.", []),
    F("removing_replicas", INT32_ARRAY, "The replicas being removed.", []),
    F("adding_replicas", INT32_ARRAY, "The replicas being added.", []),
    F("leader", INT32, "The lead replica, or -1 if there is no leader.", -1),
    F("leader_epoch", INT32, "The epoch of the partition leader.", -1),
    F("partition_epoch", INT32, "An epoch incremented each time anything in the partition changes.", -1),
    tagged=(
        T(0, "leader_recovery_state", INT8,
          "1 if the partition is recovering from an unclean leader election; 0 otherwise.", 0),
    ),
)  # fmt: skip


class PartitionRecord(ApiMessage):
    API_KEY = 3
    SCHEMAS = (PARTITION_RECORD_V0,)
    partition_id: int
    topic_id: uuid.UUID
    replicas: list[int]
    isr: list[int]
    removing_replicas: list[int]
    adding_replicas: list[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: int


# --- ConfigRecord (4), v0 -----------------------------------------------------------------------------
# One dynamic config of a topic or a broker set (or, with a null value, deleted): chapter 7's config
# znodes as records.
CONFIG_RECORD_V0 = FS(
    F("resource_type", INT8, "The type of resource this configuration applies to (2 topic, 4 broker).", 0),
    F("resource_name", COMPACT_STRING, "The name of the resource this configuration applies to.", ""),
    F("name", COMPACT_STRING, "The name of the configuration key.", ""),
    F("value", COMPACT_NULLABLE_STRING, "The value, or null if the key should be deleted.", None),
)


class ConfigRecord(ApiMessage):
    API_KEY = 4
    SCHEMAS = (CONFIG_RECORD_V0,)
    resource_type: int
    resource_name: str
    name: str
    value: str | None


# --- PartitionChangeRecord (5), v0 --------------------------------------------------------------------
# A change to one partition: every field but the partition and topic is tagged, and a field holding its
# default ("did not change") is not written. Replaying it bumps the partition epoch, and the leader epoch
# too if the leader changed (PartitionRegistration.merge).
PARTITION_CHANGE_RECORD_V0 = FS(
    F("partition_id", INT32, "The partition id.", -1),
    F("topic_id", UUID, "The unique id of this topic.", ZERO_UUID),
    tagged=(
        T(0, "isr", NULLABLE_INT32_ARRAY, "null if the ISR didn't change; the new ISR otherwise.", None),
        T(1, "leader", INT32,
          "-1 if there is now no leader; -2 if the leader didn't change; the new leader otherwise.", -2),
        T(2, "replicas", NULLABLE_INT32_ARRAY, "null if the replicas didn't change; the new ones otherwise.", None),
        T(3, "removing_replicas", NULLABLE_INT32_ARRAY, "null if they didn't change; the new ones otherwise.", None),
        T(4, "adding_replicas", NULLABLE_INT32_ARRAY, "null if they didn't change; the new ones otherwise.", None),
        T(5, "leader_recovery_state", INT8,
          "-1 if it didn't change; 0 recovered (or elected from the ISR); 1 elected uncleanly, still recovering.",
          -1),
    ),
)  # fmt: skip


class PartitionChangeRecord(ApiMessage):
    API_KEY = 5
    SCHEMAS = (PARTITION_CHANGE_RECORD_V0,)
    partition_id: int
    topic_id: uuid.UUID
    isr: list[int] | None
    leader: int
    replicas: list[int] | None
    removing_replicas: list[int] | None
    adding_replicas: list[int] | None
    leader_recovery_state: int


# --- FenceBrokerRecord (7) and UnfenceBrokerRecord (8), v0 --------------------------------------------
# A broker whose session expired (or that is shutting down) is fenced: taken out of every ISR and of the
# leaders to choose from. A registered broker that has caught up with the metadata log is unfenced.
FENCE_BROKER_RECORD_V0 = FS(
    F("id", INT32, "The broker id to fence. It will be removed from all ISRs.", 0),
    F("epoch", INT64, "The epoch of the broker to fence.", 0),
)
UNFENCE_BROKER_RECORD_V0 = FS(
    F("id", INT32, "The broker id to unfence.", 0),
    F("epoch", INT64, "The epoch of the broker to unfence.", 0),
)


class FenceBrokerRecord(ApiMessage):
    API_KEY = 7
    SCHEMAS = (FENCE_BROKER_RECORD_V0,)
    id: int
    epoch: int


class UnfenceBrokerRecord(ApiMessage):
    API_KEY = 8
    SCHEMAS = (UNFENCE_BROKER_RECORD_V0,)
    id: int
    epoch: int


# --- RemoveTopicRecord (9), v0 ------------------------------------------------------------------------
REMOVE_TOPIC_RECORD_V0 = FS(
    F("topic_id", UUID, "The topic to remove; its partitions are removed with it.", ZERO_UUID),
)


class RemoveTopicRecord(ApiMessage):
    API_KEY = 9
    SCHEMAS = (REMOVE_TOPIC_RECORD_V0,)
    topic_id: uuid.UUID


# --- FeatureLevelRecord (12), v0 ----------------------------------------------------------------------
# A finalized feature level. A metadata log begins with one for metadata.version, which says what a
# reader needs to read the rest; for that reason this record's own version can never advance past 0.
FEATURE_LEVEL_RECORD_V0 = FS(
    F("name", COMPACT_STRING, "The feature name.", ""),
    F("feature_level", INT16, "The finalized level of the feature; 0 means not supported.", 0),
)


class FeatureLevelRecord(ApiMessage):
    API_KEY = 12
    SCHEMAS = (FEATURE_LEVEL_RECORD_V0,)
    name: str
    feature_level: int


# --- ProducerIdsRecord (15), v0 -----------------------------------------------------------------------
# A block of producer ids handed to a broker (AllocateProducerIds): chapter 9's /latest_producer_id_block
# znode as a record; the next block starts at next_producer_id.
PRODUCER_IDS_RECORD_V0 = FS(
    F("broker_id", INT32, "The id of the requesting broker.", 0),
    F("broker_epoch", INT64, "The epoch of the requesting broker.", -1),
    F("next_producer_id", INT64, "The first producer id of the next block to assign.", 0),
)


class ProducerIdsRecord(ApiMessage):
    API_KEY = 15
    SCHEMAS = (PRODUCER_IDS_RECORD_V0,)
    broker_id: int
    broker_epoch: int
    next_producer_id: int


# --- BrokerRegistrationChangeRecord (17), v0-1 --------------------------------------------------------
# Kafka 3.3's controller fences and unfences with this record from metadata.version 3.3-IV0; kafka_lite's
# writes the older FenceBrokerRecord/UnfenceBrokerRecord pair, and reads this one. v1 adds tag 1.
_BROKER_REGISTRATION_CHANGE_FIELDS = (
    F("broker_id", INT32, "The broker id.", 0),
    F("broker_epoch", INT64, "The broker epoch assigned by the controller.", 0),
)
_FENCED_TAG = T(0, "fenced", INT8, "-1 if the broker was unfenced, 0 if no change, 1 if it was fenced.", 0)
BROKER_REGISTRATION_CHANGE_RECORD_V0 = FS(*_BROKER_REGISTRATION_CHANGE_FIELDS, tagged=(_FENCED_TAG,))
BROKER_REGISTRATION_CHANGE_RECORD_V1 = FS(
    *_BROKER_REGISTRATION_CHANGE_FIELDS,
    tagged=(
        _FENCED_TAG,
        T(1, "in_controlled_shutdown", INT8, "0 if no change, 1 if the broker is in controlled shutdown.", 0),
    ),
)


class BrokerRegistrationChangeRecord(ApiMessage):
    API_KEY = 17
    SCHEMAS = (BROKER_REGISTRATION_CHANGE_RECORD_V0, BROKER_REGISTRATION_CHANGE_RECORD_V1)
    broker_id: int
    broker_epoch: int
    fenced: int
    in_controlled_shutdown: int


# --- AccessControlEntryRecord (18) and RemoveAccessControlEntryRecord (19), v0 ----------------------
# KIP-801: an ACL is metadata. The controller gives each ACL an id when it creates it, and a removal
# names only that id; every controller and broker replays both into its StandardAuthorizer. The
# enums are their codes (ResourceType, PatternType, AclOperation, AclPermissionType).
ACCESS_CONTROL_ENTRY_RECORD_V0 = FS(
    F("id", UUID, "The unique ID of this ACL.", ZERO_UUID),
    F("resource_type", INT8, "The resource type.", 0),
    F("resource_name", COMPACT_STRING, "The resource name.", ""),
    F("pattern_type", INT8, "The resource name pattern type.", 0),
    F("principal", COMPACT_STRING, "The principal name.", ""),
    F("host", COMPACT_STRING, "The host name.", ""),
    F("operation", INT8, "The AclOperation.", 0),
    F("permission_type", INT8, "The AclPermissionType.", 0),
)


class AccessControlEntryRecord(ApiMessage):
    API_KEY = 18
    SCHEMAS = (ACCESS_CONTROL_ENTRY_RECORD_V0,)
    id: uuid.UUID
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


REMOVE_ACCESS_CONTROL_ENTRY_RECORD_V0 = FS(
    F("id", UUID, "The ID of the AccessControlEntry to remove.", ZERO_UUID),
)


class RemoveAccessControlEntryRecord(ApiMessage):
    API_KEY = 19
    SCHEMAS = (REMOVE_ACCESS_CONTROL_ENTRY_RECORD_V0,)
    id: uuid.UUID


# --- NoOpRecord (20), v0 ------------------------------------------------------------------------------
# No fields: the active controller appends one now and then so that the log's high watermark moves and
# every broker can tell it is caught up even when nothing else changes.
NOOP_RECORD_V0 = FS()


class NoOpRecord(ApiMessage):
    API_KEY = 20
    SCHEMAS = (NOOP_RECORD_V0,)
