"""Kafka Streams' example applications: a word count on the Processor API, page views on the DSL.

Mirrors: org.apache.kafka.streams.examples (streams/examples/src/main/java/org/apache/kafka/streams/
         examples/, Kafka 0.10.1): wordcount.WordCountProcessorDemo, pageview.PageViewTypedDemo
Book:    chapter 9, 9.1.1 (a stream processing application), 9.2.1 (a DSL application)
Labs:    lab 14 (every stage)

Kafka ships these beside the library as the first programs to read; the book's chapter 9 opens
both of its parts with one. Here each builds its topology in a function, so that a test (or
``kafka_lite.streams.test_utils.TopologyTestDriver``) can run it with no broker.
"""
