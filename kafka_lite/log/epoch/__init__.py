"""Leader epochs (KIP-101): which leader epoch began at which offset, kept beside each log.

Mirrors: kafka.server.epoch (core/src/main/scala/kafka/server/epoch/, Kafka 0.11.0)
Book:    chapter 6, 6.2 (a follower truncates its log after a leader change); the book's Kafka
         0.10 truncates to the high watermark, Kafka 0.11 asks the leader with OffsetsForLeaderEpoch
Differs: the package sits under log/, where current Kafka keeps it (its storage module's
         org.apache.kafka.storage.internals.epoch): a log owns its epoch cache, and the log layer
         imports nothing of the broker's.
"""
