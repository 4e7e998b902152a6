"""The Kafka Streams DSL: ``KStream``, ``KTable`` and ``KGroupedStream``, built as Processor API nodes.

Mirrors: org.apache.kafka.streams.kstream (streams/src/main/java/org/apache/kafka/streams/kstream/,
         Kafka 0.10.1)
Book:    chapter 9, 9.2.1 (a DSL application), 9.2.2 (KStream and KTable, aggregation), 9.2.3 (joins), 9.2.4 (windows)
Differs: ``KStream``, ``KTable`` and ``KGroupedStream`` name the implementation classes; Kafka
         declares them as interfaces with one implementation each.

    builder = KStreamBuilder()
    counts = (builder.stream("lines", value_serde=Serdes.String())
                     .flat_map_values(lambda line: line.lower().split())
                     .group_by(lambda key, word: word, Serdes.String(), Serdes.String())
                     .count("counts"))
    counts.to_stream().to("word-counts", Serdes.String(), Serdes.Long())
"""

from kafka_lite.streams.kstream.internals.change import Change
from kafka_lite.streams.kstream.internals.kgrouped_stream_impl import KGroupedStreamImpl as KGroupedStream
from kafka_lite.streams.kstream.internals.kstream_impl import KStreamImpl as KStream
from kafka_lite.streams.kstream.internals.ktable_impl import KTableImpl as KTable
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.kstream.windows import JoinWindows, SessionWindows, TimeWindows, Windowed, Windows
from kafka_lite.streams.state.key_value_store import KeyValue

__all__ = [
    "Change",
    "JoinWindows",
    "KGroupedStream",
    "KStream",
    "KStreamBuilder",
    "KTable",
    "KeyValue",
    "SessionWindows",
    "TimeWindows",
    "Windowed",
    "Windows",
]
