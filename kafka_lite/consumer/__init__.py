"""kafka_lite's consumer: subscriptions, the consumer's group protocol and assignors, its fetcher.

Mirrors: org.apache.kafka.clients.consumer (clients/src/main/java/org/apache/kafka/clients/consumer/,
         Kafka 0.10.1)
Book:    chapter 4 (the new consumer), 5.1 (the assignors)

How a record reaches the application: ``KafkaConsumer.poll`` (the caller's thread) lets the
``ConsumerCoordinator`` join the group and take its assignment into the ``SubscriptionState``, gives
each partition a position (a committed offset, or ``auto.offset.reset``), and hands out what the
``Fetcher`` has fetched through the ``ConsumerNetworkClient``, sending the next fetches before it
returns. Beside it, the coordinator's heartbeat thread keeps the member in its group.
"""

from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.internals.consumer_coordinator import CommitFailedException
from kafka_lite.consumer.internals.fetcher import OffsetAndTimestamp
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

__all__ = [
    "CommitFailedException",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "KafkaConsumer",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
]
