"""Small types the runtime shares.

Mirrors: org.apache.kafka.connect.util (connect/runtime/src/main/java/org/apache/kafka/connect/util/, Kafka 0.10.1)
Book:    chapter 8, 8.3
"""
