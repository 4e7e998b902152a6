"""The log storage layer: segments, their sparse indexes, the log, retention and compaction.

Mirrors: kafka.log (core/src/main/scala/kafka/log/, Kafka 0.10.1)
Book:    chapter 6, 6.1
"""
