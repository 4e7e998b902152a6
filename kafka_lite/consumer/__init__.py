"""kafka_lite's consumer: subscriptions, the consumer's group protocol and assignors, its fetcher.

Mirrors: org.apache.kafka.clients.consumer (clients/src/main/java/org/apache/kafka/clients/consumer/,
         Kafka 0.10.1)
Book:    chapter 4 (the new consumer), 5.1 (the assignors)

How a record reaches the application: ``KafkaConsumer.poll`` (the caller's thread) lets the
``ConsumerCoordinator`` join the group and take its assignment into the ``SubscriptionState``, gives
each partition a position (a committed offset, or ``auto.offset.reset``), and hands out what the
``Fetcher`` has fetched through the ``ConsumerNetworkClient``, sending the next fetches before it
returns. Beside it, the coordinator's heartbeat thread keeps the member in its group.

As in Kafka's package, the public types (the consumer, its records and offsets, the exceptions an
application catches) live here, a module per class; the machinery that uses them is in
``internals``.
"""

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.commit_failed_exception import CommitFailedException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.invalid_offset_exception import InvalidOffsetException
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.consumer.no_offset_for_partition_exception import NoOffsetForPartitionException
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.consumer.offset_and_timestamp import OffsetAndTimestamp
from kafka_lite.consumer.offset_commit_callback import OffsetCommitCallback
from kafka_lite.consumer.offset_out_of_range_exception import OffsetOutOfRangeException
from kafka_lite.consumer.offset_reset_strategy import OffsetResetStrategy
from kafka_lite.consumer.retriable_commit_failed_exception import RetriableCommitFailedException

__all__ = [
    "CommitFailedException",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "InvalidOffsetException",
    "KafkaConsumer",
    "NoOffsetForPartitionException",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "OffsetCommitCallback",
    "OffsetOutOfRangeException",
    "OffsetResetStrategy",
    "RetriableCommitFailedException",
    "TopicPartition",
]
