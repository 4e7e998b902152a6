"""The facts about the record being processed that the context answers: topic, partition, offset, time.

Mirrors: org.apache.kafka.streams.processor.internals.ProcessorRecordContext
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/ProcessorRecordContext.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (the task sets the record context before processing a record)

The task makes one of these per record (and one per punctuation, with the stream time and no
topic), and gives it to the context; every processor the record reaches reads the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessorRecordContext:
    timestamp: int
    offset: int
    partition: int
    topic: str | None
