"""Converters that need no library of their own: raw bytes through unchanged.

Mirrors: org.apache.kafka.connect.converters (connect/runtime/src/main/java/org/apache/kafka/connect/converters/, Kafka 0.11.0)
Book:    chapter 8, 8.3
"""
