"""The range assignor: each topic's partitions cut into consecutive ranges, one per member.

Mirrors: org.apache.kafka.clients.consumer.RangeAssignor
         (clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java, Kafka 0.10.1)
Book:    chapter 5, 5.1.1 (metadata and partition assignors)
Labs:    lab 7 (assign_partitions)
Differs: topics are taken in sorted order and each member's list comes out sorted by topic, where
         Kafka walks a ``HashMap`` of topics; which partitions a member gets is the same.

The range assignor works topic by topic. For each topic it lays out the partitions in numeric order
and the members subscribed to that topic in the order of their member ids, divides the partition
count by the member count, and gives each member that many consecutive partitions; when the division
leaves a remainder ``n mod m``, the first ``n mod m`` members get one partition more. With two members
C0 and C1 and two topics t0 and t1 of three partitions each:

    C0: [t0p0, t0p1, t1p0, t1p1]
    C1: [t0p2, t1p2]

Because every topic is cut the same way, the same members get the extra partitions of every topic:
C0 has twice C1's share here. That is the price of its one virtue: a member gets the same partition
numbers of every topic, which is what a join of co-partitioned topics wants.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.partition_assignor import (
    AbstractPartitionAssignor,
    java_string_order,
    partitions,
)


class RangeAssignor(AbstractPartitionAssignor):
    def name(self) -> str:
        return "range"

    @staticmethod
    def consumers_per_topic(consumer_metadata: Mapping[str, list[str]]) -> dict[str, list[str]]:
        """Topic -> the members subscribed to it. A member listed twice for a topic (a subscription
        that names the topic twice) counts twice, as in Kafka; a consumer's own subscription is a set."""
        result: dict[str, list[str]] = {}
        for consumer_id, topics in consumer_metadata.items():
            for topic in topics:
                result.setdefault(topic, []).append(consumer_id)
        return result

    # --8<-- [start:assign_partitions]
    def assign_partitions(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, list[str]]
    ) -> dict[str, list[TopicPartition]]:
        """Member id -> its partitions: every subscribed member listed (an empty list if it gets
        nothing), each topic the metadata knows cut into consecutive ranges over its members in
        member-id order, the first ``partitions mod members`` members taking one more."""
        # BEGIN SOLUTION
        consumers_per_topic = self.consumers_per_topic(subscriptions)
        assignment: dict[str, list[TopicPartition]] = {
            member_id: [] for member_id in sorted(subscriptions, key=java_string_order)
        }

        for topic in sorted(consumers_per_topic, key=java_string_order):
            num_partitions_for_topic = partitions_per_topic.get(topic)
            if num_partitions_for_topic is None:
                continue  # the metadata does not know the topic: nothing to assign
            consumers_for_topic = sorted(consumers_per_topic[topic], key=java_string_order)

            num_partitions_per_consumer = num_partitions_for_topic // len(consumers_for_topic)
            consumers_with_extra_partition = num_partitions_for_topic % len(consumers_for_topic)

            topic_partitions = partitions(topic, num_partitions_for_topic)
            for i, consumer in enumerate(consumers_for_topic):
                # The first members take one extra each, so member i starts after min(i, extra) extras.
                start = num_partitions_per_consumer * i + min(i, consumers_with_extra_partition)
                length = num_partitions_per_consumer + (1 if i < consumers_with_extra_partition else 0)
                assignment[consumer].extend(topic_partitions[start : start + length])
        return assignment
        # END SOLUTION

    # --8<-- [end:assign_partitions]
