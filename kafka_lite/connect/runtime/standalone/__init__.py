"""Standalone mode: one worker process, connectors from properties files, offsets in a local file.

Mirrors: org.apache.kafka.connect.runtime.standalone (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/standalone/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
