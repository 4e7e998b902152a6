"""The source API: connectors and tasks that read another system and hand records to the worker.

Mirrors: org.apache.kafka.connect.source (connect/api/src/main/java/org/apache/kafka/connect/source/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
