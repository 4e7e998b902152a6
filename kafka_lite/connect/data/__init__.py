"""Connect's data model: schemas, structs, and a value paired with its schema.

Mirrors: org.apache.kafka.connect.data (connect/api/src/main/java/org/apache/kafka/connect/data/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
