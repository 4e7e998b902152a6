"""The two leader ids that are not brokers.

Mirrors: org.apache.kafka.metadata.LeaderConstants
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

# A partition with no leader (all its ISR is offline), as in chapter 7's LeaderAndIsr znode.
NO_LEADER = -1

# In a PartitionChangeRecord: the leader did not change (the record's default, so not on the wire).
NO_LEADER_CHANGE = -2
