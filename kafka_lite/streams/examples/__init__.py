"""Applications written on kafka_lite's Streams library: the word count, in both of its APIs.

No Kafka twin: a package, Kafka's ``streams/examples`` artifact (``org.apache.kafka.streams.examples``);
each module names the example it mirrors.
Book:    chapter 9, 9.1.1 (a Processor API application), 9.2.1 (a DSL application)
"""
