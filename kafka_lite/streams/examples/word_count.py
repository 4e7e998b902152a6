"""The word count, twice: with the Processor API (9.1.1) and with the DSL (9.2.1).

Mirrors: org.apache.kafka.streams.examples.wordcount.WordCountProcessorDemo and WordCountDemo
         (streams/examples/src/main/java/.../wordcount/, Kafka 0.10.1)
Book:    chapter 9, 9.1.1 (a Processor API application), 9.2.1 (a DSL application)
Differs: each function returns the topology's builder; Kafka's demos also build the
         ``KafkaStreams`` around it and run it until killed. Words are cut at every non-word
         character and lower-cased (Kafka's demos split on a space), so "Hello," and "hello" count
         as one word.

Both count the words of the lines in ``streams-file-input``, and both keep the counts in a store
named ``Counts`` whose changelog (``<application.id>-Counts-changelog``) is what lets another
instance take the count over. They differ in when they write: the processor forwards every count
once per second of *stream time*, from its punctuation; the DSL's count forwards each update as it
makes it (kafka_lite has no record cache to hold updates back).
"""

from __future__ import annotations

import re

from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.processor.processor import AbstractProcessor
from kafka_lite.streams.processor.processor_context import ProcessorContext
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.stores import Stores

INPUT_TOPIC = "streams-file-input"
PROCESSOR_OUTPUT_TOPIC = "streams-wordcount-processor-output"
DSL_OUTPUT_TOPIC = "streams-wordcount-output"
STORE_NAME = "Counts"
PUNCTUATE_INTERVAL_MS = 1000


def split_words(line: str) -> list[str]:
    """The words of ``line``, lower-cased: cut at every run of non-word characters."""
    return [word for word in re.split(r"\W+", line.lower()) if word]


# --8<-- [start:processor]
class WordCountProcessor(AbstractProcessor):
    """Count each word of each line in the ``Counts`` store; forward every count once per second
    of stream time (Kafka's ``WordCountProcessorDemo.MyProcessorSupplier``)."""

    def init(self, context: ProcessorContext) -> None:
        super().init(context)
        # Called once per task: ask to be punctuated, and find this task's own store.
        context.schedule(PUNCTUATE_INTERVAL_MS)
        self.kv_store = context.get_state_store(STORE_NAME)

    def process(self, key: str | None, line: str) -> None:
        for word in split_words(line):
            old_value = self.kv_store.get(word)
            self.kv_store.put(word, 1 if old_value is None else old_value + 1)

    def punctuate(self, timestamp: int) -> None:
        # Every count, in the store's key order; the sink below writes each to the output topic.
        with self.kv_store.all() as entries:
            for entry in entries:
                self.context().forward(entry.key, entry.value)
        # Ask the task to commit now rather than at the next commit.interval.ms.
        self.context().commit()


# --8<-- [end:processor]


# --8<-- [start:processor_topology]
def processor_word_count() -> TopologyBuilder:
    """Source -> Process (with its store) -> Sink: the topology of ``WordCountProcessorDemo``."""
    strings, longs = Serdes.String(), Serdes.Long()
    builder = TopologyBuilder()
    builder.add_source(
        "Source",
        INPUT_TOPIC,
        key_deserializer=strings.deserializer(),
        value_deserializer=strings.deserializer(),
    )
    builder.add_processor("Process", WordCountProcessor, "Source")
    builder.add_state_store(
        Stores.create(STORE_NAME).with_keys(strings).with_values(longs).in_memory().build(), "Process"
    )
    builder.add_sink(
        "Sink",
        PROCESSOR_OUTPUT_TOPIC,
        "Process",
        key_serializer=strings.serializer(),
        value_serializer=longs.serializer(),
    )
    return builder


# --8<-- [end:processor_topology]


# --8<-- [start:dsl]
def dsl_word_count() -> KStreamBuilder:
    """Split, re-key by the word, count: the topology of ``WordCountDemo``."""
    strings, longs = Serdes.String(), Serdes.Long()
    builder = KStreamBuilder()
    counts = (
        builder.stream(INPUT_TOPIC, key_serde=strings, value_serde=strings)
        .flat_map_values(split_words)
        .group_by(lambda key, word: word, strings, strings)  # the word becomes the key: repartition
        .count(STORE_NAME)
    )
    counts.to_stream().to(DSL_OUTPUT_TOPIC, strings, longs)
    return builder


# --8<-- [end:dsl]
