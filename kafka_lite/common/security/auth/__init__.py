"""Who a connection is, and the ACL model the authorizer decides with.

Mirrors: org.apache.kafka.common.security.auth (clients/src/main/java/org/apache/kafka/common/security/auth/,
         Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
"""

from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal

__all__ = ["KafkaPrincipal"]
