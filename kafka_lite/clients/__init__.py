"""The client side of the network: what the producer, consumer and admin client share.

Mirrors: org.apache.kafka.clients (NetworkClient, InFlightRequests, ClusterConnectionStates,
         Metadata), Kafka 0.10.1
Book:    chapter 2, 2.1.3; chapter 7.3.2 (clients updating metadata)
"""
