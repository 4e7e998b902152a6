"""A KRaft broker's side of the metadata log: it follows ``__cluster_metadata`` and applies each
committed change to the parts of the broker that serve from it.

Mirrors: kafka.server.metadata (core/src/main/scala/kafka/server/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

In chapter 7 the controller pushes state to each broker (LeaderAndIsr, UpdateMetadata, StopReplica).
A KRaft broker pulls instead: it is an observer of the metadata quorum, its Raft client fetches the
metadata log, and three pieces turn what it fetches into the broker's state::

    Raft client --handle_commit/handle_snapshot--> BrokerMetadataListener
        (replays records into a MetadataDelta of the current MetadataImage)
    BrokerMetadataListener --publish(delta, new_image)--> BrokerMetadataPublisher
        --> KRaftMetadataCache.set_image      (what Metadata requests answer from)
        --> ReplicaManager.apply_delta        (lead, follow, delete the local replicas)
        --> the group and transaction coordinators (elect or resign)
        --> topic configs                     (the logs' settings)
"""
