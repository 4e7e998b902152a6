"""The broker's security: who may do what.

Mirrors: kafka.security (core/src/main/scala/kafka/security/, Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)

Import from the modules themselves (``kafka_lite.security.auth.simple_acl_authorizer``); the package
re-exports nothing.
"""
