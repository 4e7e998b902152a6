"""Security's shared names: principals, JAAS settings, the SASL mechanisms and the protocols a
listener speaks.

Mirrors: org.apache.kafka.common.security (clients/src/main/java/org/apache/kafka/common/security/, Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
"""
