"""The rebalance listener of a subscription made without one: it does nothing.

Mirrors: org.apache.kafka.clients.consumer.internals.NoOpConsumerRebalanceListener
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/NoOpConsumerRebalanceListener.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.1.1 (subscribing, with or without a listener)

The coordinator calls a listener around every rebalance; with this one in place it never has to ask
whether there is one.
"""

from __future__ import annotations

from collections.abc import Collection

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener


class NoOpConsumerRebalanceListener(ConsumerRebalanceListener):
    """The listener of a subscription made without one: it does nothing."""

    def on_partitions_revoked(self, partitions: Collection[TopicPartition]) -> None:
        pass

    def on_partitions_assigned(self, partitions: Collection[TopicPartition]) -> None:
        pass
