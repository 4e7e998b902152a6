"""The worker: runs connectors and their tasks, converts records, commits offsets; the herders, the REST API.

Mirrors: org.apache.kafka.connect.runtime (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
