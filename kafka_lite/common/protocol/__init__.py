"""The Kafka wire protocol: primitive types, schemas as data, request and response headers.

Mirrors: org.apache.kafka.common.protocol (Protocol, ApiKeys, types.*), Kafka 0.11.0
Book:    chapter 2 (requests and responses between clients and brokers)
"""
