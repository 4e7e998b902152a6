"""A consumer over records held in memory: the restore consumer of tests and of the topology test driver.

Mirrors: org.apache.kafka.clients.consumer.MockConsumer
         (clients/src/main/java/org/apache/kafka/clients/consumer/MockConsumer.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (a state manager restores its stores through a consumer)
Differs: only the calls a state manager's restore makes (``assign``, ``seek``, ``seek_to_beginning``,
         ``seek_to_end``, ``position``, ``poll``, ``beginning_offsets``, ``end_offsets``), in
         kafka_lite's ``KafkaConsumer`` shapes; no subscribe, no group, no commits. ``add_record``
         also moves the partition's end offset past the record (Kafka's ``MockConsumer`` leaves the
         end offsets to ``updateEndOffsets``), so a test states the changelog once.

A partition is a list of records and a position. ``poll`` hands out, for each assigned partition,
the records from its position on and moves the position past them, as a fetch would; it never
waits, so ``poll(100)`` with nothing to read returns ``{}`` at once.

Kafka ships it beside ``KafkaConsumer`` in the clients' main sources, for applications' tests; here
too, so the streams test driver (which may import the consumer, not ``kafka_lite.testing``) uses it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord


class MockConsumer:
    def __init__(self) -> None:
        self.records: dict[TopicPartition, list[ConsumerRecord]] = defaultdict(list)
        self.beginning: dict[TopicPartition, int] = {}
        self.end: dict[TopicPartition, int] = {}
        self.positions: dict[TopicPartition, int] = {}
        self.poll_calls = 0

    # -- what a test sets up ------------------------------------------------------------------------------

    def add_record(self, record: ConsumerRecord) -> None:
        """Append ``record`` to its partition, whose end offset becomes the record's offset + 1."""
        tp = TopicPartition(record.topic, record.partition)
        self.records[tp].append(record)
        self.beginning.setdefault(tp, record.offset)
        self.end[tp] = max(self.end.get(tp, 0), record.offset + 1)

    def update_beginning_offsets(self, offsets: dict[TopicPartition, int]) -> None:
        self.beginning.update(offsets)

    def update_end_offsets(self, offsets: dict[TopicPartition, int]) -> None:
        self.end.update(offsets)

    # -- the consumer's calls -----------------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions; an empty list unassigns. A new partition has no position yet."""
        partitions = set(partitions)
        self.positions = {tp: self.positions.get(tp) for tp in partitions}

    def assignment(self) -> set[TopicPartition]:
        return set(self.positions)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self._ensure_assigned(partition)
        if offset < 0:
            raise IllegalArgumentException(f"seek offset must not be a negative number, not {offset!r}")
        self.positions[partition] = offset

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        for tp in partitions or tuple(self.positions):
            self.seek(tp, self.beginning.get(tp, 0))

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        for tp in partitions or tuple(self.positions):
            self.seek(tp, self.end.get(tp, 0))

    def position(self, partition: TopicPartition) -> int:
        if partition not in self.positions:
            raise IllegalArgumentException(
                "You can only check the position for partitions assigned to this consumer."
            )
        if self.positions[partition] is None:
            # No reset strategy to fall back on: the caller seeks first, as a restore does.
            raise IllegalStateException(f"No current assignment position for partition {partition}")
        return self.positions[partition]

    def poll(self, timeout_ms: int = 0) -> dict[TopicPartition, list[ConsumerRecord]]:
        """The records of every assigned partition from its position on; positions move past them."""
        self.poll_calls += 1
        if not self.positions:
            raise IllegalStateException("Consumer is not subscribed to any topics or assigned any partitions")
        fetched = {}
        for tp, position in self.positions.items():
            if position is None:
                continue
            records = [r for r in self.records.get(tp, ()) if r.offset >= position]
            if records:
                fetched[tp] = records
                self.positions[tp] = records[-1].offset + 1
        return fetched

    def beginning_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.beginning.get(tp, 0) for tp in partitions}

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.end.get(tp, 0) for tp in partitions}

    def _ensure_assigned(self, partition: TopicPartition) -> None:
        if partition not in self.positions:
            raise IllegalStateException(f"Cannot seek or read partition {partition}: it is not assigned")
