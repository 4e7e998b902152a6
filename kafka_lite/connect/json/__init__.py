"""The JSON converter: Connect data as JSON, with its schema in an envelope or without one.

Mirrors: org.apache.kafka.connect.json (connect/json/src/main/java/org/apache/kafka/connect/json/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
