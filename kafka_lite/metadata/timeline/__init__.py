"""Timeline data structures: collections that remember their state at each snapshot epoch, so the
active controller can apply records before they commit and revert them if they never do.

Mirrors: org.apache.kafka.timeline (metadata/src/main/java/org/apache/kafka/timeline/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""
