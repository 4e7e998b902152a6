"""Kafka's metadata module (KRaft): the cluster's metadata kept as a log of records in the Raft quorum,
the quorum controller that writes them, and the image that brokers and controllers build from them
(KIP-500, KIP-631).

Mirrors: org.apache.kafka.metadata, org.apache.kafka.controller, org.apache.kafka.image and
         org.apache.kafka.timeline (metadata/src/main/java/org/apache/kafka/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Where chapter 7's controller keeps the cluster's state in ZooKeeper's znodes and tells the brokers
with LeaderAndIsr and UpdateMetadata, the quorum controller keeps it as records in the metadata log
(the topic ``__cluster_metadata``, replicated by ``kafka_lite.raft``): a topic is a ``TopicRecord``
and one ``PartitionRecord`` per partition, a leader change is a ``PartitionChangeRecord``. The active
controller decides and appends; the standby controllers and every broker replay the same records
in the same order, so they all hold the same state at the same offset.

- ``controller/``: the quorum controller and its control managers (Kafka's org.apache.kafka.controller);
- ``image/``: ``MetadataImage`` and ``MetadataDelta``, the state a broker serves from;
- ``timeline/``: the snapshot registry and collections that let the active controller change its
  state before the records commit and roll back if they never do.

The records themselves live in ``kafka_lite.common.metadata`` (Kafka's org.apache.kafka.common.metadata),
so that the tools that decode the metadata log need nothing from here.
"""
