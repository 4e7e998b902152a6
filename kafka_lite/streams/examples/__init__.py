"""Kafka Streams' example applications: the word count on both APIs, page views on the DSL.

No Kafka twin: a package, Kafka's ``streams/examples`` artifact (``org.apache.kafka.streams.examples``,
Kafka 0.10.1); each module names the example it mirrors: wordcount.WordCountDemo,
wordcount.WordCountProcessorDemo, pageview.PageViewTypedDemo.
Book:    chapter 9, 9.1.1 (a stream processing application), 9.2.1 (a DSL application)
Labs:    lab 14 (every stage)

Kafka ships these beside the library as the first programs to read; the book's chapter 9 opens
both of its parts with one. Each builds its topology in a function, so that a test (or
``kafka_lite.streams.test_utils.TopologyTestDriver``) can run it with no broker, and
``KafkaStreams`` on a cluster (``kafka-lite streams wordcount``).
"""
