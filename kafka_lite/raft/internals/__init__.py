"""The Raft client's internals: the leader's batch accumulator and the batch builder.

Mirrors: org.apache.kafka.raft.internals (raft/src/main/java/org/apache/kafka/raft/internals/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""
