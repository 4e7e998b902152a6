"""A topic's partition by name: the key of almost every map in Kafka's clients and broker.

Mirrors: org.apache.kafka.common.TopicPartition
         (clients/src/main/java/org/apache/kafka/common/TopicPartition.java, Kafka 0.10.1)
Book:    chapter 2, 2.1.1 (the accumulator's batches per partition); chapter 4, 4.1 (the consumer's
         assignment)
Differs: a named tuple, as kafka-python's ``kafka.structs.TopicPartition``, so a program written for
         kafka-python reads ``tp.topic`` and ``tp.partition`` as it does there. Being a tuple, it is
         hashable, equal to the plain ``(topic, partition)`` pairs the protocol's nested arrays give,
         and ordered as Kafka sorts partitions (by topic, then number). Kafka's ``toString`` is
         ``topic-partition``, the name of the partition's log directory; ``str(tp)`` keeps the
         tuple's form, and ``LogManager`` spells the directory's name itself.
"""

from __future__ import annotations

from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int
