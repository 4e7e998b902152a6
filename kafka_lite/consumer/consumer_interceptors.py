"""Interceptors: application code that sees every poll's records before the application does, and
every offset commit the coordinator acknowledges.

Mirrors: org.apache.kafka.clients.consumer.ConsumerInterceptor and
         org.apache.kafka.clients.consumer.internals.ConsumerInterceptors
         (clients/src/main/java/.../consumer/, Kafka 0.10.1; KIP-42)
Book:    chapter 4, 4.1.3 (``poll`` hands its records through the interceptors), 4.4.3 (a commit the
         coordinator acknowledged is reported to them); Kafka 0.10.0 has them (KIP-42), the book
         does not describe them
Differs: ``interceptor_classes`` takes Python classes, not class names, as the producer's does. An
         interceptor needs ``on_consume`` and ``on_commit``; ``configure`` and ``close`` are
         optional, where Java's interface declares all four. Records are kafka-python's shape, a
         dict of partition to its list of records, where Java's are a ``ConsumerRecords``.

Usage::

    class SkipTombstones:
        def on_consume(self, records):          # in poll, on the application's thread
            return {tp: [r for r in rs if r.value is not None] for tp, rs in records.items()}

        def on_commit(self, offsets):            # after the coordinator acknowledged the commit
            print("committed", offsets)

    consumer = KafkaConsumer("orders", bootstrap_servers="...", group_id="billing",
                             interceptor_classes=[SkipTombstones])

``on_consume`` runs at the end of ``poll``, after the next fetches went out, and what it returns is
what ``poll`` returns; each interceptor gets what the one before it returned. The positions have
already moved past every fetched record, so a record an interceptor drops is still consumed.
``on_commit`` runs when an OffsetCommit succeeds, synchronous or asynchronous (auto-commit
included), in whichever thread handled the response. As in Kafka, an exception raised by an
interceptor is logged and swallowed (an ``on_consume`` that raises leaves the records as the
previous interceptor returned them).

A consumer without interceptors has none at all (``None``, as Kafka's ``KafkaConsumer`` keeps it),
so a poll pays nothing for the feature.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from kafka_lite.clients.interceptors import Interceptors
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

log = logging.getLogger(__name__)

Records = dict[TopicPartition, list[ConsumerRecord]]


class ConsumerInterceptor(Protocol):
    """What an interceptor offers (Kafka's ``ConsumerInterceptor``); ``configure(configs)`` and
    ``close()`` are called too when the class defines them."""

    def on_consume(self, records: Records) -> Records: ...

    def on_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None: ...


class ConsumerInterceptors(Interceptors):
    """The configured interceptors, called in order, each one's failure contained."""

    CLIENT = "consumer"
    METHODS = ("on_consume", "on_commit")

    def on_consume(self, records: Records) -> Records:
        """Pass a poll's records through every interceptor's ``on_consume``, before ``poll`` returns."""
        intercept_records = records
        for interceptor in self.interceptors:
            try:
                returned = interceptor.on_consume(intercept_records)
                if not isinstance(returned, dict):
                    raise TypeError(
                        f"on_consume returned {type(returned).__name__}, not a dict of partition to records"
                    )
                intercept_records = returned
            except Exception:
                # Do not propagate an interceptor's exception: log it and go on with the others.
                log.warning("Error executing interceptor onConsume callback", exc_info=True)
        return intercept_records

    def on_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        """Tell every interceptor that the coordinator acknowledged a commit of ``offsets``."""
        for interceptor in self.interceptors:
            try:
                interceptor.on_commit(offsets)
            except Exception:
                log.warning("Error executing interceptor onCommit callback", exc_info=True)
