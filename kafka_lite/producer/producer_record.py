"""A record as the application hands it to the producer: what interceptors see and may replace.

Mirrors: org.apache.kafka.clients.producer.ProducerRecord
         (clients/src/main/java/.../producer/ProducerRecord.java, Kafka 0.11.0)
Book:    chapter 2, 2.1.1 (the record send takes: topic, optional partition, key, value, timestamp)
Differs: ``KafkaProducer.send`` takes these fields as arguments (kafka-python's shape), so a
         ``ProducerRecord`` is made only for the interceptors' ``on_send``, and only when some are
         configured. Its fields are in ``send``'s order, and the timestamp is ``timestamp_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProducerRecord:
    """One record before serialization. Immutable, as Kafka's: an interceptor returns a new one
    (``dataclasses.replace(record, value=...)``) to change it."""

    topic: str
    value: object = None
    key: object = None
    partition: int | None = None  # None: the partitioner chooses
    timestamp_ms: int | None = None  # None: the producer's clock at send
    headers: list[tuple[str, bytes | None]] | None = None
