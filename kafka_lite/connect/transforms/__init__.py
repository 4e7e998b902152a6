"""Single message transformations (KIP-66): the ``Transformation`` interface and the ones Kafka ships.

Mirrors: org.apache.kafka.connect.transforms (connect/api's Transformation and connect/transforms/,
         Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2)
"""
