"""What Kafka's transformations share: config parsing, validators, checks on a record's shape, schema copying.

Mirrors: org.apache.kafka.connect.transforms.util (connect/transforms/src/main/java/.../util/, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
"""
