"""Tools that read the cluster or its files.

Mirrors: kafka.tools (core/src/main/scala/kafka/tools/, Kafka 0.10.1): DumpLogSegments so far
Book:    chapter 8 (MirrorMaker lives here in Kafka too)
"""
