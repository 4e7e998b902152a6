"""Word count, the "hello world" of stream processing, on the DSL: lines in, a running count per word out.

Mirrors: org.apache.kafka.streams.examples.wordcount.WordCountDemo
         (streams/examples/src/main/java/org/apache/kafka/streams/examples/wordcount/WordCountDemo.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.2.1 (a DSL application)
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
``<app>-Counts-changelog``). The store has the record cache in front, so each commit writes one
output record per word counted since the last one, with its count then (with
``cache.max.bytes.buffering=0``, one per update): the word as a UTF-8 string, the count as an
8-byte big-endian long (``Serdes.Long``).

The Processor API version (``word_count_processor_demo``) keeps the same ``Counts`` store by hand
and writes differently: it forwards every count once per second of *stream time*, from its
punctuation, where the DSL's count forwards from its cache, at the commits (wall-clock time).
"""

from __future__ import annotations

import re

from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.serialization import Serdes

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
