"""The metadata image: the cluster's state at one offset of the metadata log, and the delta that
takes it to the next.

Mirrors: org.apache.kafka.image (metadata/src/main/java/org/apache/kafka/image/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""
