"""The metadata log's records: what the quorum controller writes to ``__cluster_metadata``.

Mirrors: org.apache.kafka.common.metadata (generated from
         metadata/src/main/resources/common/metadata/*.json, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""
