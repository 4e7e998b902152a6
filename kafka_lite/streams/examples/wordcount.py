"""Word count, the "hello world" of stream processing, twice: with the Processor API and the DSL.

Mirrors: org.apache.kafka.streams.examples.wordcount.WordCountDemo and WordCountProcessorDemo
         (streams/examples/src/main/java/org/apache/kafka/streams/examples/wordcount/, Kafka 0.10.1)
Book:    chapter 9, 9.1.1 (a Processor API application), 9.2.1 (a DSL application)
Differs: a line is split on runs of non-word characters (``\\W+``) and empty words are dropped, as
         Confluent's WordCountLambdaExample does; Kafka's demo splits on single spaces, so
         "hello, world" counts "hello," and two spaces count an empty word. It groups with
         ``group_by`` (Kafka 1.0's demo), where 0.10.1's maps each word to a key and calls
         ``groupByKey``: the same repartition either way. The topology only; running it is the
         application's (``KafkaStreams``; ``kafka-lite streams wordcount`` runs the DSL one).

The topology, in two sub-topologies joined by the repartition topic::

    input_topic --flat_map_values(split)--> words --group_by(word)--> <app>-Counts-repartition
    <app>-Counts-repartition --count("Counts")--> KTable word -> count --to_stream--> output_topic

The key of an input line does not matter: ``group_by`` re-keys every word by itself, and since the
key changed, the words are written to the repartition topic and read back, so that all the
occurrences of one word reach the same task (and the same "Counts" store, logged to
``<app>-Counts-changelog``). Every update of a count is one output record: the word as a UTF-8
string, the count as an 8-byte big-endian long (``Serdes.Long``).

The Processor API version (``processor_word_count``) keeps the same ``Counts`` store by hand and
writes differently: it forwards every count once per second of *stream time*, from its
punctuation, where the DSL's count forwards each update as it makes it (kafka_lite has no record
cache to hold updates back).
"""

from __future__ import annotations

import re

from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.processor.processor import AbstractProcessor
from kafka_lite.streams.processor.processor_context import ProcessorContext
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.stores import Stores

INPUT_TOPIC = "streams-plaintext-input"
PROCESSOR_OUTPUT_TOPIC = "streams-wordcount-processor-output"
DSL_OUTPUT_TOPIC = "streams-wordcount-output"
PUNCTUATE_INTERVAL_MS = 1000
STORE_NAME = "Counts"
WORD_SEPARATOR = re.compile(r"\W+")


def split_words(line: str) -> list[str]:
    """The line's words, lower-cased, in order; no empty words (a line may start with punctuation)."""
    return [word for word in WORD_SEPARATOR.split(line.lower()) if word]


# --8<-- [start:dsl]
def build_wordcount(builder: KStreamBuilder, input_topic: str, output_topic: str) -> KStreamBuilder:
    """Add word count from ``input_topic`` (String lines) to ``output_topic`` (String word, Long count)."""
    string, long = Serdes.String(), Serdes.Long()
    counts = (
        builder.stream(input_topic, key_serde=string, value_serde=string)
        .flat_map_values(split_words)
        .group_by(lambda key, word: word, string, string)
        .count(STORE_NAME)
    )
    # The count's values are longs: the output needs the Long serde, not the input's String one.
    counts.to_stream().to(output_topic, string, long)
    return builder


# --8<-- [end:dsl]


def dsl_word_count() -> KStreamBuilder:
    """``WordCountDemo``'s topology on its default topics."""
    return build_wordcount(KStreamBuilder(), INPUT_TOPIC, DSL_OUTPUT_TOPIC)


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
