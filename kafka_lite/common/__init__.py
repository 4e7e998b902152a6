"""The bottom layer: records, protocol, errors, configs and time. It imports nothing above it.

Mirrors: org.apache.kafka.common (clients/src/main/java/org/apache/kafka/common/, Kafka 0.10.1/0.11.0)
Book:    chapter 2, 2.1.3 (the protocol); chapter 6, 6.1 (the record formats)
"""
