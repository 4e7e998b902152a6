"""The state stores: in memory, RocksDB, segmented windows; the layers that log and type them.

Mirrors: org.apache.kafka.streams.state.internals (streams/src/main/java/.../state/internals/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
"""
