"""Kafka Streams' state stores: the key-value and window stores a processor keeps its state in.

Mirrors: org.apache.kafka.streams.state (streams/src/main/java/org/apache/kafka/streams/state/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (state stores: local, backed by a changelog topic, restored on failover)

The interfaces live here (``StateStore``, ``KeyValueStore``, ``WindowStore``, the ``Stores``
factory); the stores themselves in ``internals/``. Every store keeps bytes ordered by bytes, as
RocksDB does; a typed layer with the store's serdes sits on top (``MeteredKeyValueStore``,
``RocksDBWindowStore``), and a change-logging layer between them sends each write to the store's
changelog topic.
"""
