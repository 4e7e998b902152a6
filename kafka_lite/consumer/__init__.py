"""kafka_lite's consumer: the new consumer of Kafka's clients, and the parts it is built from.

Mirrors: org.apache.kafka.clients.consumer (clients/src/main/java/.../consumer/, Kafka 0.10.1)
Book:    chapter 4; chapter 5, 5.1
"""
