"""The errors Connect raises: a connector or task that cannot go on, data that cannot be converted.

Mirrors: org.apache.kafka.connect.errors.ConnectException, DataException, RetriableException,
         NotFoundException and AlreadyExistsException
         (connect/api/src/main/java/org/apache/kafka/connect/errors/, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: nothing beyond being Python exceptions under kafka_lite's ``KafkaException``.

A ``RetriableException`` from a sink task's ``put`` is not fatal: the worker pauses the consumer
and hands the same records again (Kafka's "redelivery"). Every other exception from a task stops
that task, and the worker logs it; the other tasks keep running.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException


class ConnectException(KafkaException):
    """A connector, a task or the worker cannot go on."""


class DataException(ConnectException):
    """A value does not fit its schema, or bytes cannot be turned into Connect data."""


class RetriableException(ConnectException):
    """A transient failure: the same call may succeed if tried again."""


class NotFoundException(ConnectException):
    """No connector (or task) of that name."""


class AlreadyExistsException(ConnectException):
    """A connector of that name is already running."""
