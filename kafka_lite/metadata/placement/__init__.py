"""Replica placement: which brokers a new partition's replicas go to, and which of them leads.

Mirrors: org.apache.kafka.metadata.placement (metadata/src/main/java/org/apache/kafka/metadata/
         placement/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7's ZooKeeper controller places replicas with
         AdminUtils.assignReplicasToBrokers, which this replaces

The quorum controller asks a ``ReplicaPlacer`` for a ``PlacementSpec`` (which partitions, how many
replicas each) and describes the cluster to it through a ``ClusterDescriber``: an iterator of
``UsableBroker`` (id, rack, fenced). ``StripedReplicaPlacer`` is the only placer, as in Kafka 3.3.
"""

from kafka_lite.metadata.placement.cluster_describer import ClusterDescriber
from kafka_lite.metadata.placement.placement_spec import PlacementSpec
from kafka_lite.metadata.placement.replica_placer import ReplicaPlacer
from kafka_lite.metadata.placement.striped_replica_placer import StripedReplicaPlacer
from kafka_lite.metadata.placement.usable_broker import UsableBroker

__all__ = ["ClusterDescriber", "PlacementSpec", "ReplicaPlacer", "StripedReplicaPlacer", "UsableBroker"]
