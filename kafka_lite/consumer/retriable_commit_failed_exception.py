"""An asynchronous commit that failed with a retriable error, as its callback is told.

Mirrors: org.apache.kafka.clients.consumer.RetriableCommitFailedException
         (clients/src/main/java/org/apache/kafka/clients/consumer/RetriableCommitFailedException.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.4.3 (synchronous and asynchronous commits)

``commit_async`` does not retry (a retried commit could overwrite a later one); it hands the
callback this exception, with the retriable error as its cause, and the application decides.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException, RetriableException


class RetriableCommitFailedException(RetriableException):
    """An asynchronous commit failed with an error that a later commit may not meet again."""

    def __init__(self, cause: Exception) -> None:
        KafkaException.__init__(
            self,
            f"Offset commit failed with a retriable exception. You should retry committing offsets. ({cause})",
        )
        self.__cause__ = cause
