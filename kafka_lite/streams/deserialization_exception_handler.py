"""What a task does with a record whose key or value cannot be deserialized: fail, or log and skip it.

Mirrors: org.apache.kafka.streams.errors.DeserializationExceptionHandler,
         LogAndContinueExceptionHandler and LogAndFailExceptionHandler
         (streams/src/main/java/org/apache/kafka/streams/errors/, Kafka 1.0, KIP-161)
Book:    chapter 9, 9.1.2 (a task's record queues deserialize what the consumer fetched)
Differs: ``default.deserialization.exception.handler`` takes a handler class, a handler instance,
         or one of Kafka's two class names (a fixed table: kafka_lite loads no code by name).

A source topic can hold a record its deserializers cannot read: a "poison pill" written by another
program, or by an older version of this one. Before Kafka 1.0 the task failed on it, and since the
offset was never committed, every restart read the same record and failed again. KIP-161 lets the
application choose, once, in the config::

    record at offset o cannot be deserialized
        --> handler.handle(context, raw_record, exception)
              FAIL      --> StreamsException: the stream thread dies (LogAndFail, the default)
              CONTINUE  --> the record is dropped before it reaches the topology (LogAndContinue)

Both built-in handlers log the task, topic, partition and offset first, so that the record can be
found. The default stays "fail": skipping data silently is a choice the application has to make.
"""

from __future__ import annotations

import enum
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafka_lite.common.config import configured_instances
from kafka_lite.common.errors import ConfigException
from kafka_lite.consumer.consumer_record import ConsumerRecord

if TYPE_CHECKING:
    from kafka_lite.streams.processor.processor_context import ProcessorContext

log = logging.getLogger(__name__)

DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG = "default.deserialization.exception.handler"


class DeserializationHandlerResponse(enum.Enum):
    """What the task does next (Kafka's ``DeserializationHandlerResponse``, with its ids)."""

    CONTINUE = 0  # drop the record and go on with the next one
    FAIL = 1  # stop processing: the task raises a StreamsException


class DeserializationExceptionHandler(ABC):
    """Decides the fate of a record that cannot be deserialized (Kafka's ``DeserializationExceptionHandler``).

    A handler class with a ``configure(configs)`` method is given the application's config once it
    is made, as Kafka's ``Configurable`` is; the built-in handlers need nothing."""

    @abstractmethod
    def handle(
        self, context: ProcessorContext, record: ConsumerRecord, exception: Exception
    ) -> DeserializationHandlerResponse:
        """``record`` is the raw record (bytes key and value); ``context`` is its task's context."""


class _LogAndRespond(DeserializationExceptionHandler):
    """The two built-in handlers: log where the record is (so that it can be found and read) at
    ``level``, then answer ``response``."""

    level: int
    response: DeserializationHandlerResponse

    def handle(
        self, context: ProcessorContext, record: ConsumerRecord, exception: Exception
    ) -> DeserializationHandlerResponse:
        log.log(self.level, "Exception caught during Deserialization, taskId: %s, topic: %s, partition: %d, offset: %d",
                context.task_id(), record.topic, record.partition, record.offset, exc_info=exception)  # fmt: skip
        return self.response


class LogAndContinueExceptionHandler(_LogAndRespond):
    """Log a warning naming the record, and skip it."""

    level, response = logging.WARNING, DeserializationHandlerResponse.CONTINUE


class LogAndFailExceptionHandler(_LogAndRespond):
    """Log an error naming the record, and fail: the default, as in Kafka."""

    level, response = logging.ERROR, DeserializationHandlerResponse.FAIL


# The names a Java application's properties file gives the built-in handlers.
KAFKA_CLASS_NAMES: dict[str, type[DeserializationExceptionHandler]] = {
    "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler": LogAndContinueExceptionHandler,
    "org.apache.kafka.streams.errors.LogAndFailExceptionHandler": LogAndFailExceptionHandler,
}


def default_deserialization_exception_handler(config: Mapping[str, Any]) -> DeserializationExceptionHandler:
    """The handler ``default.deserialization.exception.handler`` names, made and configured
    (``StreamsConfig.defaultDeserializationExceptionHandler``); LogAndFail when it is not set."""
    name = DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG
    spec = config.get(name, LogAndFailExceptionHandler)
    if isinstance(spec, str):
        if spec not in KAFKA_CLASS_NAMES:
            raise ConfigException(
                name,
                spec,
                f"Expected a DeserializationExceptionHandler class, or one of {sorted(KAFKA_CLASS_NAMES)}",
            )
        spec = KAFKA_CLASS_NAMES[spec]
    if isinstance(spec, type):
        (handler,) = configured_instances(name, [spec], config, "DeserializationExceptionHandler", ["handle"])
        return handler
    if not callable(getattr(spec, "handle", None)):
        raise ConfigException(
            name, spec, "Expected a DeserializationExceptionHandler: it has no handle method"
        )
    return spec
