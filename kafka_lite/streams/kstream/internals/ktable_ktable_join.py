"""Joining two tables: an update on either side recomputes the joined row for its key.

Mirrors: org.apache.kafka.streams.kstream.internals.KTableKTableAbstractJoin, KTableKTableJoin,
         KTableKTableLeftJoin, KTableKTableRightJoin, KTableKTableOuterJoin, KTableKTableJoinMerger
         (streams/src/main/java/.../kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.3 (joins)
Differs: the four join classes are one supplier, ``KTableKTableJoin``, whose ``join_kind`` picks the
         rule (Kafka's four ``process`` methods differ only in when they call the joiner); the
         joiner is a Python callable. The joined table is not materialized, as in 0.10.1: its
         ``store_name`` is None and reads go through the value getters.

``KTableImpl.join`` adds, under each table, a processor that receives that table's ``Change`` and
looks up the other table through its value getter, and a merger that forwards both::

    this  -> KTABLE-JOINTHIS  (getter on other) -+
    other -> KTABLE-JOINOTHER (getter on this)  -+-> KTABLE-MERGE

The rules, for an update ``Change(new, old)`` on this side, where ``v2`` is the other side's value
now: the new joined value is ``joiner(new, v2)``, or None (a delete downstream) when

=========  ==============================
kind       the joined value is None when
=========  ==============================
inner      ``new`` or ``v2`` is None
left       ``new`` is None
right      ``v2`` is None
outer      both are None
=========  ==============================

A left join is ``left`` under this table and ``right`` under the other (Kafka's
``KTableKTableRightJoin``, with the joiner's arguments swapped): an update of the other table gives
a row only where this table has one.
The old joined value is computed the same way from ``old`` when old values are sent, so a
downstream filter or aggregate can retract it. Every update forwards a ``Change``, even
``Change(None, None)``, as 0.10.1 does. Both tables must be co-partitioned, which the partition
assignor checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.kstream.internals.change import Change
from kafka_lite.streams.kstream.internals.ktable_value_getter import KTableValueGetter, ValueGetterProcessor
from kafka_lite.streams.processor.processor import AbstractProcessor, Processor
from kafka_lite.streams.processor.processor_context import ProcessorContext

INNER, LEFT, RIGHT, OUTER = "join", "left-join", "right-join", "outer-join"


def _joined(kind: str, joiner: Callable[[Any, Any], Any], value: Any, other: Any) -> Any:
    """The joined value of this side's ``value`` and the other side's ``other`` (None for no row)."""
    if kind == INNER:
        ready = value is not None and other is not None
    elif kind == LEFT:
        ready = value is not None
    elif kind == RIGHT:
        ready = other is not None
    else:
        ready = value is not None or other is not None
    return joiner(value, other) if ready else None


class KTableKTableJoin:
    """One side of a table-table join: this table's changes joined with the other's value getter."""

    def __init__(self, table1: Any, table2: Any, joiner: Callable[[Any, Any], Any], join_kind: str) -> None:
        self.table1 = table1
        self.table2 = table2
        self.value_getter_supplier1 = table1.value_getter_supplier()
        self.value_getter_supplier2 = table2.value_getter_supplier()
        self.joiner = joiner
        self.join_kind = join_kind
        self.send_old_values = False

    def enable_sending_old_values(self) -> None:
        self.table1.enable_sending_old_values()
        self.table2.enable_sending_old_values()
        self.send_old_values = True

    def __call__(self) -> Processor:
        return _KTableKTableJoinProcessor(self, self.value_getter_supplier2.get())

    def view(self) -> _JoinValueGetterSupplier:
        """The joined table's getters: both sides' getters, joined by the same rule."""
        return _JoinValueGetterSupplier(self)

    def joined(self, value: Any, other: Any) -> Any:
        return _joined(self.join_kind, self.joiner, value, other)


class _KTableKTableJoinProcessor(ValueGetterProcessor):
    def process(self, key: Any, change: Change) -> None:
        if key is None:
            raise StreamsException(
                f"Record key for KTable {self.supplier.join_kind} operator should not be null."
            )
        value2 = self.value_getter.get(key)
        new_value = self.supplier.joined(change.new_value, value2)
        old_value = self.supplier.joined(change.old_value, value2) if self.supplier.send_old_values else None
        self.context().forward(key, Change(new_value, old_value))


class _JoinValueGetter(KTableValueGetter):
    def __init__(self, supplier: KTableKTableJoin) -> None:
        self.supplier = supplier
        self.value_getter1 = supplier.value_getter_supplier1.get()
        self.value_getter2 = supplier.value_getter_supplier2.get()

    def init(self, context: ProcessorContext) -> None:
        self.value_getter1.init(context)
        self.value_getter2.init(context)

    def get(self, key: Any) -> Any:
        return self.supplier.joined(self.value_getter1.get(key), self.value_getter2.get(key))


class _JoinValueGetterSupplier:
    def __init__(self, supplier: KTableKTableJoin) -> None:
        self.supplier = supplier

    def get(self) -> KTableValueGetter:
        return _JoinValueGetter(self.supplier)

    def store_names(self) -> list[str]:
        return [
            *self.supplier.value_getter_supplier1.store_names(),
            *self.supplier.value_getter_supplier2.store_names(),
        ]


class KTableKTableJoinMerger:
    """Forward both join sides' changes as one table; its getters are the first side's."""

    def __init__(self, parent1: Any, parent2: Any) -> None:
        self.parent1 = parent1
        self.parent2 = parent2

    def __call__(self) -> Processor:
        return _KTableKTableJoinMergeProcessor()

    def view(self) -> Any:
        return self.parent1.value_getter_supplier()

    def enable_sending_old_values(self) -> None:
        self.parent1.enable_sending_old_values()
        self.parent2.enable_sending_old_values()


class _KTableKTableJoinMergeProcessor(AbstractProcessor):
    def process(self, key: Any, value: Change) -> None:
        self.context().forward(key, value)
