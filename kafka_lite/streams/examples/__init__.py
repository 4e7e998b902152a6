"""Example applications of the Streams DSL: ``wordcount``.

No Kafka twin: a package, Kafka's ``streams/examples`` artifact
(``org.apache.kafka.streams.examples``); each module names the demo it mirrors.
Book:    chapter 9, 9.2 (the DSL)
"""
