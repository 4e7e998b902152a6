"""Records per key in tumbling windows of record time: the windowed count of 9.2.4 as an application.

No Kafka twin: modelled on Kafka's ``PageViewUntypedDemo`` (``streams/examples/.../pageview/``,
         Kafka 0.10.1), whose windowed ``countByKey`` this is with tumbling windows and no join.
Book:    chapter 9, 9.2.4 (windows)

The topology, one sub-topology with no repartition (the input is already keyed by what it counts)::

    input_topic --group_by_key--> count("WindowCounts", TimeWindows.of(size).until(retention))
        --to_stream--> map(Windowed(key, window), n -> "key@start", n) --> output_topic

The window of a record is chosen by its timestamp (the default extractor's: the record's own, a
producer's CreateTime), not by when the record is processed. ``TimeWindows.of(size)`` starts a
window at every multiple of ``size`` since the epoch, so the windows are the same on every instance
and in Spark's ``window(timestamp, "10 seconds")``. Each record updates its window's count in the
window store and forwards the new count: the output topic is a changelog of counts, whose latest
value per ``key@start`` is the count. A record arriving late, but while its window is still in the
store (the retention, ``until``), updates that window and forwards its new count again.

``window_counts_spark`` in ``kafka_lite/spark/window_counts.py`` is the same count in Spark
Structured Streaming; the chapter 9 guide's "Streams beside Spark" runs both over one topic.
"""

from __future__ import annotations

from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.kstream.windows import DEFAULT_MAINTAIN_DURATION, TimeWindows
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.key_value_store import KeyValue

STORE_NAME = "WindowCounts"


# --8<-- [start:dsl]
def build_window_counts(
    builder: KStreamBuilder,
    input_topic: str,
    output_topic: str,
    size_ms: int = 10_000,
    retention_ms: int = DEFAULT_MAINTAIN_DURATION,
) -> KStreamBuilder:
    """Count ``input_topic``'s records (String keys) per key in tumbling windows of ``size_ms``; write
    every update to ``output_topic`` as ``"key@window start"`` (String) -> count (Long)."""
    string = Serdes.String()
    counts = (
        builder.stream(input_topic, key_serde=string, value_serde=string)
        .group_by_key(string, string)
        # A window is kept retention_ms (at least: the store drops whole segments) for late records.
        .count(STORE_NAME, windows=TimeWindows.of(size_ms).until(retention_ms))
    )
    # The table's keys are Windowed(key, window); the output names the window by its start.
    (
        counts.to_stream()
        .map(lambda windowed, count: KeyValue(f"{windowed.key}@{windowed.window.start}", count))
        .to(output_topic, string, Serdes.Long())
    )
    return builder


# --8<-- [end:dsl]
