"""SASL/PLAIN (RFC 4616): one token carrying the user name and the password.

Mirrors: org.apache.kafka.common.security.plain (clients/src/main/java/org/apache/kafka/common/security/plain/,
         Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
"""
