"""The partition assignor's interface, and the base class that hands an assignor partition counts.

Mirrors: org.apache.kafka.clients.consumer.internals.PartitionAssignor and AbstractPartitionAssignor
         (clients/src/main/java/.../consumer/internals/, Kafka 0.10.1)
Book:    chapter 5, 5.1.1 (metadata and partition assignors), 5.1.3 (the leader consumer runs the
         assignment)
Differs: ``subscription`` lists the topics sorted, where Kafka copies a ``HashSet``'s order, so a
         member's JoinGroup bytes do not change from run to run; assignments are plain dicts, with
         an assignor's own results ordered by member id and partition where Kafka returns
         ``HashMap``s (the coordinator sends one assignment per member, so no order is visible).

Kafka's consumer does not let the broker decide who reads what. The coordinator picks one member of
the group, the leader, and sends it every member's subscription in its JoinGroup response; the
leader's consumer coordinator calls the chosen assignor's ``assign`` with the cluster metadata it
knows, and sends the result back in its SyncGroup request. So an assignor is plain client code, chosen
by name (``partition.assignment.strategy``): every member lists the assignors it supports, in order
of preference, and the coordinator picks the first one that all members support.

``PartitionAssignor`` is the interface the consumer coordinator calls. ``AbstractPartitionAssignor``
does the part every simple assignor shares: it reduces the subscriptions to each member's topic
list, looks up each subscribed topic's partition count in the metadata (leaving out a topic the
metadata does not know, or knows with no partitions), and calls the assignor's
``assign_partitions(partitions_per_topic, subscriptions)``, Kafka's abstract
``assign(Map<String, Integer>, Map<String, List<String>>)``: Python has no overloading, so the two
``assign`` methods of Kafka take two names here.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping

from kafka_lite.clients.metadata import Cluster
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.consumer_protocol import Assignment, Subscription

log = logging.getLogger(__name__)


def java_string_order(s: str) -> bytes:
    """A sort key that orders strings as Java's ``String.compareTo`` does: by UTF-16 code units.

    Kafka's assignors sort member ids and topic names with Java's natural string order, which
    compares UTF-16 code units. Python compares code points; the two differ only when a character
    beyond U+FFFF (a surrogate pair in UTF-16, 0xD800-0xDFFF) meets one from U+E000 to U+FFFF. The
    big-endian UTF-16 bytes compare, byte by byte, exactly as the code units do.
    """
    return s.encode("utf-16-be", "surrogatepass")


class PartitionAssignor(ABC):
    """What the consumer coordinator needs of an assignor (Kafka's ``PartitionAssignor`` interface)."""

    @abstractmethod
    def name(self) -> str:
        """The assignor's unique name, the protocol name it joins with ("range", "roundrobin")."""

    @abstractmethod
    def subscription(self, topics: Iterable[str]) -> Subscription:
        """This member's subscription to ``topics``, with any user data the assignor wants the leader
        to see (a rack-aware assignor would put the member's rack there)."""

    @abstractmethod
    def assign(self, metadata: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        """The leader's job: an Assignment for every member in ``subscriptions`` (member id ->
        Subscription), given the cluster metadata the leader knows."""

    @abstractmethod
    def on_assignment(self, assignment: Assignment) -> None:
        """Called on every member when its assignment arrives from the leader."""


class AbstractPartitionAssignor(PartitionAssignor):
    """The grunt work of simple assignors: partition counts from metadata, no user data."""

    @abstractmethod
    def assign_partitions(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, list[str]]
    ) -> dict[str, list[TopicPartition]]:
        """The assignment itself (Kafka's abstract ``assign(partitionsPerTopic, subscriptions)``).

        ``partitions_per_topic`` holds the partition count of each subscribed topic the metadata
        knows; ``subscriptions`` maps each member id to its topics. Returns every member's
        partitions, an empty list for a member that gets none.
        """

    def subscription(self, topics: Iterable[str]) -> Subscription:
        return Subscription(sorted(topics, key=java_string_order))

    def assign(self, metadata: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        all_subscribed_topics: set[str] = set()
        topic_subscriptions: dict[str, list[str]] = {}
        for member_id, subscription in subscriptions.items():
            all_subscribed_topics.update(subscription.topics)
            topic_subscriptions[member_id] = subscription.topics

        partitions_per_topic: dict[str, int] = {}
        for topic in sorted(all_subscribed_topics, key=java_string_order):
            num_partitions = partition_count_for_topic(metadata, topic)
            if num_partitions:
                partitions_per_topic[topic] = num_partitions
            else:
                log.debug("Skipping assignment for topic %s since no metadata is available", topic)

        raw_assignments = self.assign_partitions(partitions_per_topic, topic_subscriptions)
        # This assignor keeps no user data, so each result is wrapped as it is.
        return {member_id: Assignment(partitions) for member_id, partitions in raw_assignments.items()}

    def on_assignment(self, assignment: Assignment) -> None:
        pass  # the assignor keeps no state between rebalances


def partition_count_for_topic(metadata: Cluster, topic: str) -> int | None:
    """How many partitions ``topic`` has, or None if the metadata does not know it (Kafka's
    ``Cluster.partitionCountForTopic``). Every partition the metadata lists counts, with or without a
    leader: a partition whose leader is down is still the group's to assign."""
    count = len(metadata.partitions_for_topic(topic))
    return count or None


def partitions(topic: str, num_partitions: int) -> list[TopicPartition]:
    """Partitions 0 to ``num_partitions - 1`` of ``topic``, in order (Kafka's ``partitions`` helper)."""
    return [TopicPartition(topic, i) for i in range(num_partitions)]
