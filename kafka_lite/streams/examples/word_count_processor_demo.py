"""Word count on the Processor API: one processor, a key-value store, a punctuation by stream time.

Mirrors: org.apache.kafka.streams.examples.wordcount.WordCountProcessorDemo
         (streams/examples/src/main/java/.../wordcount/WordCountProcessorDemo.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.1 (a stream processing application), 9.1.4 (state stores)
Differs: the topology is returned by ``word_count_topology`` instead of being started by a
         ``main`` with ``KafkaStreams``; the processor is a class (Kafka's is an anonymous class
         made by ``MyProcessorSupplier.get``), and ``close`` leaves the store alone: the task closes
         its stores (Kafka's demo closes it too, which the task then does again).
Labs:    lab 14, stage 1

The demo's topology, node by node::

    Source  --lines-->  Process  --(word, count)-->  Sink
    (streams-file-input)   |                         (streams-wordcount-processor-output)
                        Counts (a key-value store: word -> count)

``process`` does no forwarding: it only counts, in the store. Output comes from ``punctuate``,
which the task calls each time stream time (the largest timestamp the task has seen, not the clock
on the wall) passes another ``PUNCTUATE_INTERVAL_MS``; it forwards every entry of the store, so the
sink receives the whole table of counts, once per second of stream time. That is the book's point
of the example: a processor's state lives in a store the task owns (and logs to a changelog topic,
so a new instance can restore it), and punctuation turns that state into output on a schedule of
event time, whatever the rate of records.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.processor import Processor
from kafka_lite.streams.processor.processor_context import ProcessorContext
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.stores import Stores

SOURCE_TOPIC = "streams-file-input"
SINK_TOPIC = "streams-wordcount-processor-output"
STORE_NAME = "Counts"
PUNCTUATE_INTERVAL_MS = 1000


# --8<-- [start:word_count_processor]
class WordCountProcessor(Processor):
    """Counts the words of each line in the store ``Counts``; every second of stream time, forwards
    ``(word, str(count))`` for every word in it (the processor of Kafka's ``MyProcessorSupplier``)."""

    def init(self, context: ProcessorContext) -> None:
        """Keep the context, ask for ``punctuate`` every ``PUNCTUATE_INTERVAL_MS`` of stream time, and
        look the store ``STORE_NAME`` up."""
        # BEGIN SOLUTION
        self.context = context
        self.context.schedule(PUNCTUATE_INTERVAL_MS)
        self.kv_store = context.get_state_store(STORE_NAME)
        # END SOLUTION

    def process(self, key: Any, line: str) -> None:
        """Add one to the count of each word of ``line`` (lower-cased, split on whitespace)."""
        # BEGIN SOLUTION
        for word in line.lower().split():
            old_value = self.kv_store.get(word)
            self.kv_store.put(word, 1 if old_value is None else old_value + 1)
        # A request, not a commit: the thread commits once this record has gone through the topology.
        self.context.commit()
        # END SOLUTION

    def punctuate(self, timestamp: int) -> None:
        """Forward ``(word, str(count))`` for every entry of the store, in the store's key order."""
        # BEGIN SOLUTION
        with self.kv_store.all() as entries:
            for entry in entries:
                self.context.forward(entry.key, str(entry.value))
        # END SOLUTION

    def close(self) -> None:
        pass  # the store is the task's: it flushes and closes it with the task


# --8<-- [end:word_count_processor]


# --8<-- [start:word_count_topology]
def word_count_topology() -> TopologyBuilder:
    """The demo's topology: the source ``Source`` reading ``SOURCE_TOPIC`` (string keys and values),
    the processor ``Process`` (a ``WordCountProcessor`` per task) with the in-memory store
    ``STORE_NAME`` (string keys, integer values), and the sink ``Sink`` writing ``SINK_TOPIC`` (string
    keys and values)."""
    # BEGIN SOLUTION
    builder = TopologyBuilder()
    builder.add_source(
        "Source",
        SOURCE_TOPIC,
        key_deserializer=Serdes.String().deserializer(),
        value_deserializer=Serdes.String().deserializer(),
    )
    builder.add_processor("Process", WordCountProcessor, "Source")
    builder.add_state_store(
        Stores.create(STORE_NAME)
        .with_keys(Serdes.String())
        .with_values(Serdes.Integer())
        .in_memory()
        .build(),
        "Process",
    )
    builder.add_sink(
        "Sink",
        SINK_TOPIC,
        "Process",
        key_serializer=Serdes.String().serializer(),
        value_serializer=Serdes.String().serializer(),
    )
    return builder
    # END SOLUTION


# --8<-- [end:word_count_topology]
