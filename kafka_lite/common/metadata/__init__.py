"""The metadata log's records: what the quorum controller writes to ``__cluster_metadata``.

Mirrors: org.apache.kafka.common.metadata (generated from
         metadata/src/main/resources/common/metadata/*.json, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

- ``records``: one class per record type over its schema table (``TopicRecord``, ``PartitionRecord``,
  ...), on the base of ``api_message``;
- ``metadata_record_type``: ``MetadataRecordType``, the record types by id;
- ``api_message_and_version``: a record with the version it is written at;
- ``metadata_record_serde``: the framing of a record in the log, and ``MetadataParseException``.
"""

from kafka_lite.common.metadata.api_message import ApiMessage, Message, UnsupportedVersionException
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.metadata_record_serde import MetadataParseException, MetadataRecordSerde
from kafka_lite.common.metadata.metadata_record_type import MetadataRecordType
from kafka_lite.common.metadata.records import (
    AccessControlEntryRecord,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)

__all__ = [
    "AccessControlEntryRecord",
    "ApiMessage",
    "ApiMessageAndVersion",
    "BrokerEndpoint",
    "BrokerFeature",
    "BrokerRegistrationChangeRecord",
    "ConfigRecord",
    "FeatureLevelRecord",
    "FenceBrokerRecord",
    "Message",
    "MetadataParseException",
    "MetadataRecordSerde",
    "MetadataRecordType",
    "NoOpRecord",
    "PartitionChangeRecord",
    "PartitionRecord",
    "ProducerIdsRecord",
    "RegisterBrokerRecord",
    "RemoveAccessControlEntryRecord",
    "RemoveTopicRecord",
    "TopicRecord",
    "UnfenceBrokerRecord",
    "UnregisterBrokerRecord",
    "UnsupportedVersionException",
]
