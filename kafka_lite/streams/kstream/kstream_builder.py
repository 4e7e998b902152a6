"""The DSL's entry point: a ``TopologyBuilder`` that hands out streams and tables.

Mirrors: org.apache.kafka.streams.kstream.KStreamBuilder
         (streams/src/main/java/org/apache/kafka/streams/kstream/KStreamBuilder.java, Kafka 0.10.1)
Book:    chapter 9, 9.2.1 (a DSL application starts here), 9.2.2 (KStream and KTable)
Differs: no regex sources, no ``merge``. Keyword serdes replace Kafka's overloads
         (``stream(*topics, key_serde=, value_serde=)``); a serde left out means bytes. A table's
         store is in memory (0.10.1's is RocksDB), cached and not logged, as in Kafka: the
         source topic is its changelog (``connect_source_store_and_topic``), restored up to the
         task's committed offset.

The DSL is the Processor API written for you: every operator is an ``add_processor`` on this
builder, so ``build``, ``node_groups`` and ``topic_groups`` work on a DSL topology unchanged, and the
``TopologyTestDriver`` runs one as it runs any other. ``new_name`` numbers nodes in the order they
are made with one counter for all kinds (``KSTREAM-SOURCE-0000000000``,
``KSTREAM-FILTER-0000000001``, ...), so the same program gives the same names on every instance:
which is what lets two instances agree on store names, topic names and task ids.
"""

from __future__ import annotations

from kafka_lite.streams.kstream.internals import kstream_impl, ktable_impl
from kafka_lite.streams.kstream.internals.kstream_impl import KStreamImpl
from kafka_lite.streams.kstream.internals.ktable_impl import KTableImpl
from kafka_lite.streams.kstream.internals.ktable_processors import KTableSource
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.serialization import Serde, Serdes
from kafka_lite.streams.state.stores import Stores


class KStreamBuilder(TopologyBuilder):
    """Kafka's ``KStreamBuilder``: ``stream`` and ``table`` add sources; the rest is the operators'."""

    def __init__(self) -> None:
        super().__init__()
        self.index = 0

    def stream(
        self, *topics: str, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> KStreamImpl:
        """A stream of the records of ``topics``: every record a fact, none replacing another."""
        name = self.new_name(kstream_impl.SOURCE_NAME)
        self.add_source(
            name,
            *topics,
            key_deserializer=None if key_serde is None else key_serde.deserializer(),
            value_deserializer=None if value_serde is None else value_serde.deserializer(),
        )
        return KStreamImpl(self, name, frozenset({name}), False)

    def table(
        self, topic: str, store_name: str, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> KTableImpl:
        """A table of ``topic``: each record the key's latest value (a None value deletes it), kept in
        the store ``store_name``."""
        source = self.new_name(kstream_impl.SOURCE_NAME)
        name = self.new_name(ktable_impl.SOURCE_NAME)
        processor_supplier = KTableSource(store_name)
        self.add_source(
            source,
            topic,
            key_deserializer=None if key_serde is None else key_serde.deserializer(),
            value_deserializer=None if value_serde is None else value_serde.deserializer(),
        )
        self.add_processor(name, processor_supplier, source)
        k_table = KTableImpl(self, name, processor_supplier, frozenset({source}), store_name)
        # Kafka's KTableImpl.materialize: the store, with no changelog of its own.
        store_supplier = (
            Stores.create(store_name)
            .with_keys(key_serde or Serdes.ByteArray())
            .with_values(value_serde or Serdes.ByteArray())
            .in_memory()
            .disable_logging()
            .enable_caching()  # as 0.10.1's: the table forwards on the cache's flush
            .build()
        )
        self.add_state_store(store_supplier, name)
        self.connect_source_store_and_topic(store_name, topic)
        return k_table

    def new_name(self, prefix: str) -> str:
        """``prefix`` and the next number of the builder's one counter, in ten digits."""
        name = f"{prefix}{self.index:010d}"
        self.index += 1
        return name
