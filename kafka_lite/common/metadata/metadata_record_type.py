"""The metadata record types by id: which class a serialized record's api key names.

Mirrors: org.apache.kafka.common.metadata.MetadataRecordType (generated from
         metadata/src/main/resources/common/metadata/*.json, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: only the record types kafka_lite keeps; an id of one Kafka has and kafka_lite does not
         (a client quota, a delegation token, ...) is named in the error that refuses it (``not_kept``).
"""

from __future__ import annotations

import enum

from kafka_lite.common.metadata.api_message import ApiMessage
from kafka_lite.common.metadata.records import (
    AccessControlEntryRecord,
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


class MetadataRecordType(enum.IntEnum):
    """The api key of each metadata record (the ``apiKey`` of its JSON spec)."""

    REGISTER_BROKER_RECORD = 0
    UNREGISTER_BROKER_RECORD = 1
    TOPIC_RECORD = 2
    PARTITION_RECORD = 3
    CONFIG_RECORD = 4
    PARTITION_CHANGE_RECORD = 5
    FENCE_BROKER_RECORD = 7
    UNFENCE_BROKER_RECORD = 8
    REMOVE_TOPIC_RECORD = 9
    FEATURE_LEVEL_RECORD = 12
    PRODUCER_IDS_RECORD = 15
    BROKER_REGISTRATION_CHANGE_RECORD = 17
    ACCESS_CONTROL_ENTRY_RECORD = 18
    REMOVE_ACCESS_CONTROL_ENTRY_RECORD = 19
    NO_OP_RECORD = 20

    @staticmethod
    def from_id(record_id: int) -> MetadataRecordType:
        """The type of ``record_id``; a ValueError says which id is unknown, or that kafka_lite does
        not keep it (Kafka's ``fromId``: "Unknown metadata id ...")."""
        try:
            return MetadataRecordType(record_id)
        except ValueError:
            name = NOT_KEPT.get(record_id)
            if name is not None:
                raise ValueError(
                    f"metadata record type {record_id} is Kafka's {name}, which kafka_lite does not keep"
                ) from None
            raise ValueError(f"Unknown metadata id {record_id}") from None

    @property
    def record_class(self) -> type[ApiMessage]:
        return _CLASSES[self]

    def new_metadata_record(self) -> ApiMessage:
        return _CLASSES[self]()

    def lowest_supported_version(self) -> int:
        return _CLASSES[self].lowest_supported_version()

    def highest_supported_version(self) -> int:
        return _CLASSES[self].highest_supported_version()


_CLASSES: dict[MetadataRecordType, type[ApiMessage]] = {
    MetadataRecordType(cls.API_KEY): cls
    for cls in (
        RegisterBrokerRecord,
        UnregisterBrokerRecord,
        TopicRecord,
        PartitionRecord,
        ConfigRecord,
        PartitionChangeRecord,
        FenceBrokerRecord,
        UnfenceBrokerRecord,
        RemoveTopicRecord,
        FeatureLevelRecord,
        ProducerIdsRecord,
        BrokerRegistrationChangeRecord,
        AccessControlEntryRecord,
        RemoveAccessControlEntryRecord,
        NoOpRecord,
    )
}

# Kafka 3.3's other record types (13 and 16 were removed before 3.0 and are unused).
NOT_KEPT = {
    6: "AccessControlRecord",
    10: "DelegationTokenRecord",
    11: "UserScramCredentialRecord",
    14: "ClientQuotaRecord",
}
