"""The consumer's internals: subscription state, network client and request futures, fetcher, protocol.

Mirrors: org.apache.kafka.clients.consumer.internals
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/, Kafka 0.10.1)
Book:    chapter 4, 4.1-4.2
"""
