"""kafka_lite's consumer: subscriptions, the consumer's group protocol and assignors, its fetcher.

Mirrors: org.apache.kafka.clients.consumer (clients/src/main/java/org/apache/kafka/clients/consumer/,
         Kafka 0.10.1)
Book:    chapter 4 (the new consumer), 5.1 (the assignors)
"""
