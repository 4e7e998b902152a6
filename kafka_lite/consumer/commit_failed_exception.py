"""A commit that cannot complete: the group rebalanced and gave the partitions to another member.

Mirrors: org.apache.kafka.clients.consumer.CommitFailedException
         (clients/src/main/java/org/apache/kafka/clients/consumer/CommitFailedException.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.4.3 (synchronous and asynchronous commits)

The coordinator refuses an OffsetCommit whose generation or member id is no longer the group's
(ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS): the member has been replaced, so
its offsets may no longer be its to commit. The message says the usual cause, a poll loop slower
than ``max.poll.interval.ms``.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException


class CommitFailedException(KafkaException):
    """The commit cannot complete: the group rebalanced and gave the partitions to another member."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or "Commit cannot be completed since the group has already rebalanced and assigned the "
            "partitions to another member. This means that the time between subsequent calls to poll() "
            "was longer than the configured max.poll.interval.ms, which typically implies that the poll "
            "loop is spending too much time message processing. You can address this either by "
            "increasing the session timeout or by reducing the maximum size of batches returned in "
            "poll() with max.poll.records."
        )
