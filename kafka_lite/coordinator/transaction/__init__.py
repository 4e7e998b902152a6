"""The transaction coordinator: the broker's side of transactional producers (KIP-98).

Mirrors: kafka.coordinator.transaction (core/src/main/scala/kafka/coordinator/transaction/, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions)
"""
