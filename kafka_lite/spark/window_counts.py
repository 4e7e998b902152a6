"""Records per key in tumbling windows of record time, in Spark: the Streams windowed count's twin.

No Kafka twin: the windowed count of ``kafka_lite/streams/examples/window_counts.py`` written for
         Spark Structured Streaming with ``window`` and ``withWatermark`` (the Structured Streaming
         programming guide, "Window Operations on Event Time" and "Handling Late Data and
         Watermarking", Spark 4.x).
Book:    chapter 9, 9.2.4 (windows), beside the data pipeline chapter's lab 11

``window(timestamp, "10 seconds")`` puts a row in the window ``[start, start + 10 s)`` whose start
is a multiple of 10 s since the epoch, as Kafka Streams' ``TimeWindows.of(10_000)`` does, and
``timestamp`` is the record's own (the producer's CreateTime), the time Streams windows by. So on
the same records the two give the same counts, with the window named by its start in epoch
milliseconds, as the Streams example's ``"key@start"`` names it.

What differs is late data. Streams keeps a window for its retention and updates it whenever one of
its records arrives. Spark, given a watermark (``watermark_delay``), stops waiting for a window
once the latest record time seen, less the delay, has passed the window's end: the window's state
is dropped, and a record that still arrives for it is dropped too. Without a watermark (and in a
batch query) every record counts, and a stream keeps every window's state for as long as it runs.

Works on a batch DataFrame and on a streaming one alike, with Spark's built-in functions only.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


# --8<-- [start:window_counts]
def window_counts(
    records: DataFrame, size: str = "10 seconds", watermark_delay: str | None = None
) -> DataFrame:
    """Count the records of ``records`` (Spark's Kafka schema) per key in tumbling windows of
    ``size`` (Spark's interval text) of their ``timestamp``: columns ``key`` (a string),
    ``window_start`` (epoch ms) and ``count``. With ``watermark_delay``, a streaming query gives up
    on a window that long after the latest record time seen has passed its end."""
    if watermark_delay is not None:
        records = records.withWatermark("timestamp", watermark_delay)
    return (
        records.groupBy(F.col("key").cast("string").alias("key"), F.window("timestamp", size).alias("w"))
        .count()
        .select("key", F.unix_millis("w.start").alias("window_start"), "count")
    )


# --8<-- [end:window_counts]
