"""Page views per page in one-minute windows of record time, in Spark: lab 14's windowed count's twin.

No Kafka twin: the page view count of ``kafka_lite/streams/examples/page_view_demo.py`` (Kafka's
         ``PageViewTypedDemo``) written for Spark Structured Streaming with ``window`` and
         ``withWatermark`` (the Structured Streaming programming guide, "Window Operations on Event
         Time" and "Handling Late Data and Watermarking", Spark 4.x).
Book:    chapter 9, 9.2.4 (windows), beside the data pipeline chapter's lab 11

A view is a record of the page views topic: keyed by user, its value the page, at the record's
timestamp. ``window(timestamp, "1 minute")`` puts it in the window ``[start, start + 1 min)`` whose
start is a whole number of minutes since the epoch, as Kafka Streams' ``TimeWindows.of(60_000)``
does, and ``timestamp`` is the record's own (the producer's CreateTime), the time Streams windows
by. So on the same records the two give the same counts, with the window named by its start in
epoch milliseconds, as the Streams program's output key names it.

What differs is late data. Streams keeps a window for its retention and updates it whenever one of
its views arrives. Spark, given a watermark (``watermark_delay``), stops waiting for a window once
the latest record time seen, less the delay, has passed the window's end: the window's state is
dropped, and a view that still arrives for it is dropped too. Without a watermark (and in a batch
query) every view counts, and a stream keeps every window's state for as long as it runs.

Works on a batch DataFrame and on a streaming one alike, with Spark's built-in functions only.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

WINDOW_SIZE = "1 minute"  # the Streams program's WINDOW_SIZE_MS, as Spark's interval text


# --8<-- [start:page_view_counts]
def page_view_counts(views: DataFrame, watermark_delay: str | None = None) -> DataFrame:
    """Count the views in ``views`` (Spark's Kafka schema: key the user, value the page) per page in
    tumbling windows of one minute of their ``timestamp``: columns ``page`` (a string),
    ``window_start`` (epoch ms) and ``count``. With ``watermark_delay`` (Spark's interval text), a
    streaming query gives up on a window that long after the latest record time seen passes its end."""
    if watermark_delay is not None:
        views = views.withWatermark("timestamp", watermark_delay)
    return (
        views.groupBy(
            F.col("value").cast("string").alias("page"), F.window("timestamp", WINDOW_SIZE).alias("w")
        )
        .count()
        .select("page", F.unix_millis("w.start").alias("window_start"), "count")
    )


# --8<-- [end:page_view_counts]
