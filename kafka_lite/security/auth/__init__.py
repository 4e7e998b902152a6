"""Authorization: the ``Authorizer`` interface, ``SimpleAclAuthorizer`` over ZooKeeper, and which ACL
each request needs.

Mirrors: kafka.security.auth (core/src/main/scala/kafka/security/auth/, Kafka 0.11.0)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
"""
