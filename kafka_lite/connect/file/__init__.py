"""Kafka's example connectors: a file's lines into a topic, and a topic's values into a file.

Mirrors: org.apache.kafka.connect.file (connect/file/src/main/java/org/apache/kafka/connect/file/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
