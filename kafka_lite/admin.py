"""The admin client and the value types it takes, where a kafka-python program imports them.

No Kafka twin: the front door of ``kafka_lite.clients.admin`` (Kafka's
``org.apache.kafka.clients.admin``), as kafka-python's ``kafka.admin`` is, so that a program written
for kafka-python runs by changing ``kafka.admin`` to ``kafka_lite.admin``.
"""

from __future__ import annotations

from kafka_lite.clients.acl_resource import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka_lite.clients.admin import (
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    ConsumerGroupDescription,
    ConsumerGroupListing,
    KafkaAdminClient,
    ListOffsetsResultInfo,
    MemberDescription,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

__all__ = [
    "ACL",
    "ACLFilter",
    "ACLOperation",
    "ACLPermissionType",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConsumerGroupDescription",
    "ConsumerGroupListing",
    "KafkaAdminClient",
    "ListOffsetsResultInfo",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
]
