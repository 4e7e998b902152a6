"""The DSL's implementation: ``KStreamImpl``, ``KTableImpl``, ``KGroupedStreamImpl`` and the
processors their operators add.

No Kafka twin: a package, Kafka's ``org.apache.kafka.streams.kstream.internals``; each module names
the class it mirrors.
Book:    chapter 9, 9.2 (the DSL)
"""
