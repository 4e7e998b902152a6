"""Kafka Streams: a stream-processing library on kafka_lite's producer and consumer (book chapter 9).

Mirrors: org.apache.kafka.streams (streams/src/main/java/org/apache/kafka/streams/, Kafka 0.10.1 and 0.11)
Book:    chapter 9, 9.1 (the Processor API: topologies, threads, tasks, state stores) and 9.2 (the DSL)
"""
