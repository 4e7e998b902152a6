"""Where a consumer starts reading a partition that has no valid position: ``auto.offset.reset``.

Mirrors: org.apache.kafka.clients.consumer.OffsetResetStrategy
         (clients/src/main/java/org/apache/kafka/clients/consumer/OffsetResetStrategy.java, Kafka 0.10.1)
Book:    chapter 4, 4.1.2 (a partition without a committed offset is reset before the first fetch)
Differs: each member's value is its ``auto.offset.reset`` spelling, so ``OffsetResetStrategy("earliest")``
         reads the config (Kafka calls ``valueOf`` on the upper-cased string).

A partition needs a reset when the group has no committed offset for it, when the user asks for
``seek_to_beginning``/``seek_to_end``, or when a fetch finds its position out of range. ``EARLIEST``
and ``LATEST`` ask the partition's leader for its log start or end offset (a ListOffsets request);
``NONE`` refuses to guess, and the consumer raises ``NoOffsetForPartitionException`` instead.
"""

from __future__ import annotations

import enum


class OffsetResetStrategy(enum.Enum):
    LATEST = "latest"
    EARLIEST = "earliest"
    NONE = "none"
