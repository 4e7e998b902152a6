"""Kafka's Raft (KRaft): the quorum that keeps a Kafka cluster's metadata in a log of its own, the
controller Kafka runs since it left ZooKeeper (KIP-500, KIP-595, KIP-630).

Mirrors: org.apache.kafka.raft (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

One module per Kafka class. Leader election is Raft's; replication is Kafka's own: followers pull
from the leader with Fetch, and the leader answers a follower whose log diverged with the epoch and
offset to truncate to (Kafka's log reconciliation), which is why a new leader announces itself with
BeginQuorumEpoch instead of waiting to be asked.
"""
