"""The registered brokers at one offset of the metadata log.

Mirrors: org.apache.kafka.image.ClusterImage
         (metadata/src/main/java/org/apache/kafka/image/ClusterImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Where chapter 7's controller watches ``/brokers/ids`` for ephemeral znodes, here a broker is
registered by a ``RegisterBrokerRecord`` and stays registered (fenced or not) until an
``UnregisterBrokerRecord``: a broker that stops heartbeating is fenced, not forgotten.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.broker_registration import BrokerRegistration
from kafka_lite.metadata.metadata_version import MetadataVersion


def register_broker_record_version(metadata_version: MetadataVersion) -> int:
    """RegisterBrokerRecord v1 (with ``in_controlled_shutdown``) from metadata.version 3.3-IV3 on,
    as Kafka's ``isInControlledShutdownStateSupported``; v0 before."""
    return 1 if metadata_version.is_at_least(MetadataVersion.IBP_3_3_IV3) else 0


@dataclass(frozen=True)
class ClusterImage:
    EMPTY: ClassVar[ClusterImage]

    brokers: Mapping[int, BrokerRegistration] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "brokers", MappingProxyType(dict(self.brokers)))

    def is_empty(self) -> bool:
        return not self.brokers

    def broker(self, node_id: int) -> BrokerRegistration | None:
        return self.brokers.get(node_id)

    def write(self, out: list[ApiMessageAndVersion], metadata_version: MetadataVersion) -> None:
        version = register_broker_record_version(metadata_version)
        for broker in self.brokers.values():
            out.append(broker.to_record(version))

    def __repr__(self) -> str:
        return f"ClusterImage(brokers={dict(self.brokers)})"


ClusterImage.EMPTY = ClusterImage()
