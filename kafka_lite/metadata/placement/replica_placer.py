"""The interface a replica placement policy implements.

Mirrors: org.apache.kafka.metadata.placement.ReplicaPlacer
         (metadata/src/main/java/org/apache/kafka/metadata/placement/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.metadata.placement.cluster_describer import ClusterDescriber
from kafka_lite.metadata.placement.placement_spec import PlacementSpec


class ReplicaPlacer(ABC):
    @abstractmethod
    def place(self, placement: PlacementSpec, cluster: ClusterDescriber) -> list[list[int]]:
        """One replica list per partition asked for, its first replica the intended leader.

        Raises ``InvalidReplicationFactorException`` when the cluster cannot hold that many
        replicas (or has no unfenced broker to lead).
        """
