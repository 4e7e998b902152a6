"""The quorum controller (KIP-631): one event thread that turns requests into metadata records, and
the control managers that own each part of the cluster's state.

Mirrors: org.apache.kafka.controller (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7 reads the ZooKeeper controller it replaces
"""
