"""The round-robin assignor: every subscribed partition dealt in turn to the members, like cards.

Mirrors: org.apache.kafka.clients.consumer.RoundRobinAssignor and
         org.apache.kafka.common.utils.CircularIterator
         (clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java and
         .../common/utils/CircularIterator.java, Kafka 0.10.1)
Book:    chapter 5, 5.1.1 (metadata and partition assignors)
Differs: a call with no members returns no assignments, where Kafka's ``CircularIterator`` throws on
         the empty member list (the leader is a member, so a real group never gets there).

The round-robin assignor lays out all the partitions of all subscribed topics, sorted by topic and
then by partition number, and all the members, sorted by member id. It then deals the partitions in
turn, going round the members; a member that is not subscribed to a partition's topic is skipped,
and the turn passes on to the next one that is. With two members C0 and C1 and two topics t0 and t1 of
three partitions each:

    C0: [t0p0, t0p2, t1p1]
    C1: [t0p1, t1p0, t1p2]

When every member subscribes to the same topics, the shares differ by one partition at most. When
subscriptions differ, the skipping can leave the shares uneven: with members C0 (subscribed to t0),
C1 (t0, t1) and C2 (t0, t1, t2), and topics t0, t1 and t2 of one, two and three partitions:

    C0: [t0p0]
    C1: [t1p0]
    C2: [t1p1, t2p0, t2p1, t2p2]
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.partition_assignor import (
    AbstractPartitionAssignor,
    java_string_order,
    partitions,
)


class CircularIterator:
    """Goes round a list for ever, and can look at the next element without taking it (Kafka's
    ``CircularIterator``, which the assignor needs for ``peek``)."""

    def __init__(self, items: list[str]) -> None:
        if not items:
            raise ValueError("CircularIterator can only be used on non-empty lists")
        self.items = items
        self.i = 0

    def peek(self) -> str:
        return self.items[self.i]

    def next(self) -> str:
        item = self.items[self.i]
        self.i = (self.i + 1) % len(self.items)
        return item


class RoundRobinAssignor(AbstractPartitionAssignor):
    def name(self) -> str:
        return "roundrobin"

    def assign_partitions(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, list[str]]
    ) -> dict[str, list[TopicPartition]]:
        members = sorted(subscriptions, key=java_string_order)
        assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in members}
        all_partitions = self.all_partitions_sorted(partitions_per_topic, subscriptions)
        if not all_partitions:
            return assignment  # no members, or none of their topics known: nothing to deal

        assigner = CircularIterator(members)
        for partition in all_partitions:
            topic = partition[0]
            # Every topic here is some member's, so the skipping ends within one turn of the circle.
            while topic not in subscriptions[assigner.peek()]:
                assigner.next()
            assignment[assigner.next()].append(partition)
        return assignment

    @staticmethod
    def all_partitions_sorted(
        partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, list[str]]
    ) -> list[TopicPartition]:
        """Every partition of every subscribed topic the metadata knows, by topic then number."""
        topics = sorted(
            {topic for topics in subscriptions.values() for topic in topics}, key=java_string_order
        )
        all_partitions: list[TopicPartition] = []
        for topic in topics:
            num_partitions_for_topic = partitions_per_topic.get(topic)
            if num_partitions_for_topic is not None:
                all_partitions.extend(partitions(topic, num_partitions_for_topic))
        return all_partitions
