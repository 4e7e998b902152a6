"""The sink API: connectors and tasks that take records from Kafka and write them elsewhere.

Mirrors: org.apache.kafka.connect.sink (connect/api/src/main/java/org/apache/kafka/connect/sink/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
