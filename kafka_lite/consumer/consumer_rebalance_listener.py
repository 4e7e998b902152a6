"""The user's hook into a group rebalance: told which partitions it loses, then which it gets.

Mirrors: org.apache.kafka.clients.consumer.ConsumerRebalanceListener
         (clients/src/main/java/org/apache/kafka/clients/consumer/ConsumerRebalanceListener.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.1.1 (the subscription state holds the listener); chapter 5, 5.1.4 (the join's
         preparation and completion call it), 5.4.1 (rebalancing and listeners)
Differs: an abstract base class where Kafka has an interface; subclass it and write both methods.

It applies only when the group manages the assignment (``subscribe`` to topics or a pattern); with
``assign`` the partitions never move and the listener is never called. Both methods run in the
consumer's own thread, inside ``poll``. When the group rebalances, every member first calls
``on_partitions_revoked`` with the partitions it held, before it rejoins; Kafka guarantees all
members have done so before any member calls ``on_partitions_assigned`` with its new partitions. So
offsets or state saved on revocation are saved before the partition's next owner loads them on
assignment: the usual use is to commit (or store elsewhere) the positions of the revoked partitions,
and to ``seek`` the assigned ones to positions kept outside Kafka.
"""

from __future__ import annotations

import abc
from collections.abc import Collection

from kafka_lite.common.topic_partition import TopicPartition


class ConsumerRebalanceListener(abc.ABC):
    @abc.abstractmethod
    def on_partitions_revoked(self, partitions: Collection[TopicPartition]) -> None:
        """Called before a rebalance, after fetching stops, with the partitions assigned until now.

        Commit their offsets here, to Kafka or to a store of your own, so that the next owner does
        not read their records again. Not called by ``close``.
        """

    @abc.abstractmethod
    def on_partitions_assigned(self, partitions: Collection[TopicPartition]) -> None:
        """Called after a rebalance, before fetching starts, with the partitions now assigned.

        They may include partitions this consumer held before. ``seek`` them here to start from
        positions kept outside Kafka.
        """
