"""What every DSL object is underneath: a node of the builder's topology, by name.

Mirrors: org.apache.kafka.streams.kstream.internals.AbstractStream
         (streams/src/main/java/org/apache/kafka/streams/kstream/internals/AbstractStream.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (the DSL builds a Processor API topology)

A ``KStream``, ``KTable`` or ``KGroupedStream`` holds no records. It is the name of the node its
operator added (``name``), the builder to add the next node to (``topology``) and the source nodes
it descends from (``source_nodes``, which Kafka's joins use to co-partition their inputs). Calling
an operator adds a processor whose parent is ``name`` and returns a new object naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder


class AbstractStream:
    def __init__(self, topology: KStreamBuilder, name: str, source_nodes: frozenset[str]) -> None:
        self.topology = topology
        self.name = name
        self.source_nodes = source_nodes
