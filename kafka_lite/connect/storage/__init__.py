"""Converters and offset storage: Connect data to bytes and back, and where source offsets are kept.

Mirrors: org.apache.kafka.connect.storage (connect/api/src/main/java/org/apache/kafka/connect/storage/
         and connect/runtime/src/main/java/org/apache/kafka/connect/storage/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
