"""What flows between a KTable's processors: a key's new value and, when asked for, its old one.

Mirrors: org.apache.kafka.streams.kstream.internals.Change
         (streams/src/main/java/org/apache/kafka/streams/kstream/internals/Change.java, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (KStream and KTable: a table's records are updates)

A KStream's record is a fact ("this happened"); a KTable's record is an update ("the value of key k
is now v"). Downstream of a table, each record is therefore a ``Change``: ``new_value`` (None for a
delete) and ``old_value``, which is None unless the table was asked to send old values
(``KTableImpl.enable_sending_old_values``). A filter needs the old value to know whether a key that
stops passing was passing before, and so whether a tombstone is owed downstream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    """Kafka's ``Change<T>``: ``(new_value, old_value)``."""

    new_value: Any
    old_value: Any

    def __str__(self) -> str:
        return f"({self.new_value}<-{self.old_value})"
