"""What an asynchronous commit calls when it completes: the offsets, and the failure or None.

Mirrors: org.apache.kafka.clients.consumer.OffsetCommitCallback
         (clients/src/main/java/org/apache/kafka/clients/consumer/OffsetCommitCallback.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.4.3 (synchronous and asynchronous commits)
Differs: a callable ``callback(offsets, exception)``, Kafka's ``onComplete`` as a function; an
         object with an ``on_complete`` method is accepted too.

It runs on the consumer's thread, in a later ``poll`` or commit, never on the heartbeat thread
that may have received the commit's response.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

OffsetCommitCallback = Callable[[dict[TopicPartition, OffsetAndMetadata], Exception | None], None]
