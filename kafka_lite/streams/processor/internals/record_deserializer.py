"""Turn a raw record into a record of objects with its source node's deserializers, or ask the handler.

Mirrors: org.apache.kafka.streams.processor.internals.RecordDeserializer
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/RecordDeserializer.java,
         Kafka 1.0, KIP-161)
Book:    chapter 9, 9.1.2 (a task's record queues deserialize what the consumer fetched)
Differs: the failure's message names the record's topic, partition and offset and the error; Kafka's
         leaves them to the handler's log line. No skipped-records metric.

``deserialize`` returns the record with its key and value deserialized, or None when the record
cannot be read and the handler says CONTINUE: the queue then drops it. A handler answering FAIL,
or raising itself, fails the task with a ``StreamsException``.

What a skipped record's offset becomes (Kafka 1.0, as here): the consumer's position is already past
it, so the running task does not fetch it again; the task commits the offset of the last record it
*processed*, so the skipped offset is committed with the next readable record of its partition. If
the skipped record is the last one of the partition, a restart reads it again and skips it again
(``deserialize`` says which later Kafka commits past it).
"""

from __future__ import annotations

import logging

from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.streams.deserialization_exception_handler import (
    DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
    DeserializationExceptionHandler,
    DeserializationHandlerResponse,
)
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.source_node import SourceNode
from kafka_lite.streams.processor.processor_context import ProcessorContext

log = logging.getLogger(__name__)


class RecordDeserializer:
    """Kafka's ``RecordDeserializer``: a source node's deserializers, and what to do when they fail."""

    def __init__(
        self, source_node: SourceNode, deserialization_exception_handler: DeserializationExceptionHandler
    ) -> None:
        self.source_node = source_node
        self.deserialization_exception_handler = deserialization_exception_handler

    def deserialize(
        self, processor_context: ProcessorContext, raw_record: ConsumerRecord
    ) -> ConsumerRecord | None:
        """The record with key and value deserialized; None if it cannot be and the handler skips it.

        A skipped record's offset is committed with its partition's next readable record, as Kafka
        1.0 does; Kafka 3.2 commits past a skipped last record too (KAFKA-6502), which kafka_lite,
        reading as 1.0, does not."""
        try:
            return raw_record._replace(
                key=self.source_node.deserialize_key(raw_record.topic, raw_record.key),
                value=self.source_node.deserialize_value(raw_record.topic, raw_record.value),
            )
        except Exception as deserialization_exception:
            try:
                response = self.deserialization_exception_handler.handle(
                    processor_context, raw_record, deserialization_exception
                )
            except Exception as fatal_user_exception:
                log.error("Deserialization error callback failed after deserialization error for record %s",
                          raw_record, exc_info=deserialization_exception)  # fmt: skip
                raise StreamsException(
                    "Fatal user code error in deserialization error callback"
                ) from fatal_user_exception
            if response is DeserializationHandlerResponse.FAIL:
                raise StreamsException(
                    f"Failed to deserialize the record at topic={raw_record.topic}, partition="
                    f"{raw_record.partition}, offset={raw_record.offset} ({deserialization_exception!r}), "
                    "and the deserialization exception handler is set to fail upon a deserialization "
                    "error. If you would rather have the streaming pipeline continue after a "
                    f"deserialization error, please set the {DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG} "
                    "appropriately."
                ) from deserialization_exception
        return None
