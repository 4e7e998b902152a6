"""What every connector and task is: the base classes of the source and sink APIs, and the record.

Mirrors: org.apache.kafka.connect.connector (connect/api/src/main/java/org/apache/kafka/connect/connector/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
