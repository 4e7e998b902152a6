"""Which time a record carries through the topology: the timestamp in the record, or the clock's.

Mirrors: org.apache.kafka.streams.processor.TimestampExtractor, ConsumerRecordTimestampExtractor
         and WallclockTimestampExtractor (streams/src/main/java/org/apache/kafka/streams/processor/,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (stream time: the partition group picks records by their timestamps)
Differs: ``WallclockTimestampExtractor`` reads an injected ``Time`` (the system clock by default),
         so a test can drive it; Kafka's calls ``System.currentTimeMillis()``.

The extractor runs once per record as it enters a task's ``RecordQueue``. What it returns decides
the order in which records of different partitions are processed, when punctuation fires, and (in
the DSL) which window a record falls into. 0.10.1's default reads the record's own timestamp, the
producer's CreateTime or the broker's LogAppendTime; an extractor must not return a negative
timestamp, and the queue raises if it does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.consumer.consumer_record import ConsumerRecord


class TimestampExtractor(ABC):
    """Gives each record the timestamp the topology processes it at (Kafka's ``TimestampExtractor``)."""

    @abstractmethod
    def extract(self, record: ConsumerRecord) -> int:
        """The record's timestamp in ms; never negative."""


class ConsumerRecordTimestampExtractor(TimestampExtractor):
    """The timestamp stored in the record (event time or ingestion time): 0.10.1's default."""

    def extract(self, record: ConsumerRecord) -> int:
        return record.timestamp


class WallclockTimestampExtractor(TimestampExtractor):
    """The time the record is read (processing time): the same record gets a different timestamp on
    every run, so results are not reproducible; useful for topics written by pre-0.10 producers,
    whose records carry no timestamp."""

    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time

    def extract(self, record: ConsumerRecord) -> int:
        return self.time.milliseconds()
