"""A long with a history, such as the next producer id block's start.

Mirrors: org.apache.kafka.timeline.TimelineLong
         (metadata/src/main/java/org/apache/kafka/timeline/TimelineLong.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Python's integers have no width, so a long is a ``TimelineInteger`` under Kafka's name; the
         class exists so that code ported from Kafka keeps the type it names.
"""

from __future__ import annotations

from kafka_lite.metadata.timeline.timeline_integer import TimelineInteger


class TimelineLong(TimelineInteger):
    pass
