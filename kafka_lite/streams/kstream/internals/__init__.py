"""The DSL's implementation: ``KStreamImpl``, ``KTableImpl``, ``KGroupedStreamImpl`` and the
processors their operators add (Kafka's ``org.apache.kafka.streams.kstream.internals``)."""
