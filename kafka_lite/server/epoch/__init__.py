"""Leader epochs (KIP-101): which leader epoch began at which offset, kept beside each log.

Mirrors: kafka.server.epoch (core/src/main/scala/kafka/server/epoch/, Kafka 0.11.0)
Book:    chapter 6, 6.2 (a follower truncates its log after a leader change); the book's Kafka
         0.10 truncates to the high watermark, Kafka 0.11 asks the leader with OffsetsForLeaderEpoch
"""
