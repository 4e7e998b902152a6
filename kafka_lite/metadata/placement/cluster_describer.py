"""What a replica placer may know of the cluster: the brokers it can use.

Mirrors: org.apache.kafka.metadata.placement.ClusterDescriber
         (metadata/src/main/java/org/apache/kafka/metadata/placement/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The replication control manager implements it over the cluster control manager's heartbeat state
(``ClusterControlManager.usable_brokers``), so a placer sees brokers, never the managers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from kafka_lite.metadata.placement.usable_broker import UsableBroker


class ClusterDescriber(Protocol):
    def usable_brokers(self) -> Iterator[UsableBroker]: ...
