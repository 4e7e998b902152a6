"""Interceptors: application code that sees every record on its way in and every acknowledgement.

Mirrors: org.apache.kafka.clients.producer.ProducerInterceptor and
         org.apache.kafka.clients.producer.internals.ProducerInterceptors
         (clients/src/main/java/.../producer/, Kafka 0.11.0; KIP-42)
Book:    chapter 2, 2.1.1 (send runs the interceptors before serializing; Kafka 0.10.0 has them,
         KIP-42, and the book does not describe them)
Differs: ``interceptor_classes`` takes Python classes, not class names, as the serializers and the
         partitioner are callables: kafka_lite loads no code by name. An interceptor needs
         ``on_send`` and ``on_acknowledgement``; ``configure`` and ``close`` are optional, where
         Java's interface declares all four.

Usage::

    class CountingInterceptor:
        def __init__(self):
            self.sent = self.acked = 0

        def on_send(self, record):              # before serialization, on the caller's thread
            self.sent += 1
            return record                        # or a changed copy: dataclasses.replace(record, ...)

        def on_acknowledgement(self, metadata, exception):   # on the sender thread: keep it quick
            self.acked += 1

    producer = KafkaProducer(bootstrap_servers="...", interceptor_classes=[CountingInterceptor])

``on_send`` runs in ``send`` before the key and value are serialized and the partition chosen, so an
interceptor may change any field of the record; each interceptor gets what the one before it
returned. ``on_acknowledgement`` runs when the record's batch completes, before the callback given to
``send`` and any callback added to the future, or at once when ``send`` fails the record. As in Kafka, an exception raised by an
interceptor is logged and swallowed: interceptors observe and adjust, they never fail a send (an
``on_send`` that raises leaves the record as the previous interceptor returned it).

A producer without interceptors has no ``ProducerInterceptors`` at all (``None``, as Kafka's
``KafkaProducer`` keeps it), so records pay nothing for the feature.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from kafka_lite.clients.interceptors import Interceptors
from kafka_lite.common.record.constants import NO_TIMESTAMP
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.future_record_metadata import INVALID_OFFSET, RecordMetadata
from kafka_lite.producer.producer_record import ProducerRecord

log = logging.getLogger(__name__)

UNKNOWN_PARTITION = -1  # RecordMetadata.UNKNOWN_PARTITION: the record failed before it had one


class ProducerInterceptor(Protocol):
    """What an interceptor offers (Kafka's ``ProducerInterceptor``); ``configure(configs)`` and
    ``close()`` are called too when the class defines them."""

    def on_send(self, record: ProducerRecord) -> ProducerRecord: ...

    def on_acknowledgement(self, metadata: RecordMetadata, exception: BaseException | None) -> None: ...


class ProducerInterceptors(Interceptors):
    """The configured interceptors, called in order, each one's failure contained."""

    CLIENT = "producer"
    METHODS = ("on_send", "on_acknowledgement")

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Pass the record through every interceptor's ``on_send``, before serialization."""
        intercept_record = record
        for interceptor in self.interceptors:
            try:
                returned = interceptor.on_send(intercept_record)
                if not isinstance(returned, ProducerRecord):
                    raise TypeError(f"on_send returned {type(returned).__name__}, not a ProducerRecord")
                intercept_record = returned
            except Exception:
                # Do not propagate an interceptor's exception: log it and go on with the others.
                log.warning(
                    "Error executing interceptor onSend callback for topic: %s, partition: %s",
                    record.topic,
                    record.partition,
                    exc_info=True,
                )
        return intercept_record

    def on_acknowledgement(self, metadata: RecordMetadata, exception: BaseException | None) -> None:
        """Tell every interceptor that a record was written, or failed (on the sender thread)."""
        for interceptor in self.interceptors:
            try:
                interceptor.on_acknowledgement(metadata, exception)
            except Exception:
                log.warning("Error executing interceptor onAcknowledgement callback", exc_info=True)

    def on_send_error(self, topic: str, partition: int | None, exception: BaseException) -> None:
        """``send`` failed the record before it reached a batch (Kafka's ``onSendError``)."""
        self.on_acknowledgement(_unknown_metadata(topic, partition), exception)

    def intercept_callback(
        self,
        tp: TopicPartition,
        user_callback: Callable[[RecordMetadata | None, BaseException | None], object] | None = None,
    ) -> Callable[[RecordMetadata | None, BaseException | None], None]:
        """The callback ``send`` gives the record's batch (Kafka's ``InterceptorCallback``): when the
        batch completes it calls ``on_acknowledgement``, then the application's callback given to
        ``send`` (with the metadata as the batch gave it: None for a failed record), and only then
        do the callbacks added to the future run."""

        def on_completion(metadata: RecordMetadata | None, exception: BaseException | None) -> None:
            self.on_acknowledgement(_unknown_metadata(*tp) if metadata is None else metadata, exception)
            if user_callback is not None:
                user_callback(metadata, exception)

        return on_completion


def _unknown_metadata(topic: str, partition: int | None) -> RecordMetadata:
    """Kafka's ``new RecordMetadata(tp, -1, -1, NO_TIMESTAMP, -1L, -1, -1)`` for a failed record."""
    partition = UNKNOWN_PARTITION if partition is None else partition
    return RecordMetadata(
        topic, partition, TopicPartition(topic, partition), INVALID_OFFSET, NO_TIMESTAMP, None, -1, -1, -1
    )
