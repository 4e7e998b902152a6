"""A value with the timestamp it is ordered by: a buffered record, or a punctuation's next time.

Mirrors: org.apache.kafka.streams.processor.internals.Stamped and StampedRecord
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (the record queue orders by extracted timestamps)

A ``StampedRecord`` is a deserialized ``ConsumerRecord`` with the timestamp the extractor gave it,
which may differ from ``record.timestamp``. Comparisons are by timestamp only: two records of the
same time are equal for ordering, as Kafka's ``Stamped.compareTo`` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka_lite.consumer.consumer_record import ConsumerRecord


@dataclass(eq=False)
class Stamped:
    value: Any = field(compare=False)
    timestamp: int

    def __lt__(self, other: Stamped) -> bool:
        return self.timestamp < other.timestamp


class StampedRecord(Stamped):
    """A record as it waits in a ``RecordQueue``: the consumer record and its extracted timestamp."""

    value: ConsumerRecord

    def key(self) -> Any:
        return self.value.key

    def topic(self) -> str:
        return self.value.topic

    def partition(self) -> int:
        return self.value.partition

    def offset(self) -> int:
        return self.value.offset

    def __repr__(self) -> str:
        return f"{self.value!r}, timestamp = {self.timestamp}"
