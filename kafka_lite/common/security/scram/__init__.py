"""SASL/SCRAM (RFC 5802, KIP-84): salted challenge-response, with credentials in ZooKeeper.

Mirrors: org.apache.kafka.common.security.scram (clients/src/main/java/org/apache/kafka/common/security/scram/,
         Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
"""
