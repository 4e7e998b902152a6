"""Joining a stream to a table: each record of the stream looks up the table's value for its key.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamKTableLeftJoin
         (streams/src/main/java/.../kstream/internals/KStreamKTableLeftJoin.java, Kafka 0.10.1)
Book:    chapter 9, 9.2.3 (joins)
Differs: the inner ``join`` (``left_join=False``) is 0.10.2's ``KStreamKTableJoin``, which this class
         is named after; 0.10.1 has only ``leftJoin``. The joiner is a Python callable
         ``joiner(stream_value, table_value)`` (Kafka's ``ValueJoiner``).

Only the stream drives the join: a table update changes what later records find, and emits
nothing. So the result depends on order: a record arriving before its key's row is in the table
finds None, and the inner join drops it while the left join emits ``joiner(value, None)``. A record
with a null key is dropped (it has no row to find).

Both inputs must be co-partitioned (the same number of partitions, keyed alike), so that a task
holds the table rows for the keys of the stream partition it reads; ``connect_processor_and_state_stores``
puts the join and the table's store in one sub-topology. Checking the partition counts is the
partition assignor's job (``ensure_copartitioning``), not the builder's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.kstream.internals.ktable_value_getter import ValueGetterProcessor
from kafka_lite.streams.processor.processor import Processor


class KStreamKTableJoin:
    def __init__(
        self, value_getter_supplier: Any, joiner: Callable[[Any, Any], Any], left_join: bool
    ) -> None:
        self.value_getter_supplier = value_getter_supplier
        self.joiner = joiner
        self.left_join = left_join

    def __call__(self) -> Processor:
        return _KStreamKTableJoinProcessor(self, self.value_getter_supplier.get())


# --8<-- [start:process]
class _KStreamKTableJoinProcessor(ValueGetterProcessor):
    def process(self, key: Any, value: Any) -> None:
        if key is None:
            return
        value2 = self.value_getter.get(key)
        if self.supplier.left_join or value2 is not None:
            self.context().forward(key, self.supplier.joiner(value, value2))


# --8<-- [end:process]
