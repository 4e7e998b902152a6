"""Reading a table by key: the value getters that joins use to look up the other side.

Mirrors: org.apache.kafka.streams.kstream.internals.KTableValueGetter, KTableValueGetterSupplier,
         KTableSourceValueGetterSupplier and the ``view()`` of KTableFilter/KTableMapValues
         (streams/src/main/java/.../kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.3 (joins)
Differs: ``store_names()`` is 0.10.2's: the join connects its node to those stores, since kafka_lite's
         context, like 0.10.2's, lets a processor open only the stores connected to it.

A join receives a record of one side and must know the other side's current value for its key. A
table's rows live in one store, but a table downstream of a filter or ``map_values`` is not stored
again: its value is the store's value passed through the operators between. So each table hands out
a value getter supplier (``KTableImpl.value_getter_supplier``, Kafka's ``view()``): the store's
getter at the source or aggregate, and at each operator its parent's getter with the operator's
``compute_value`` applied. Every task calls ``get()`` for getters of its own, and ``init`` opens the
store in that task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.processor.processor import AbstractProcessor
from kafka_lite.streams.processor.processor_context import ProcessorContext


class KTableValueGetter:
    """``get(key)``: the table's current value for ``key``, or None."""

    def init(self, context: ProcessorContext) -> None:
        raise NotImplementedError

    def get(self, key: Any) -> Any:
        raise NotImplementedError


class ValueGetterProcessor(AbstractProcessor):
    """A join's processor: its supplier, and a value getter of its own on the other side, opened
    in ``init`` (the store it reads is the task's)."""

    def __init__(self, supplier: Any, value_getter: KTableValueGetter) -> None:
        super().__init__()
        self.supplier = supplier
        self.value_getter = value_getter

    def init(self, context: ProcessorContext) -> None:
        super().init(context)
        self.value_getter.init(context)


class _StoreValueGetter(KTableValueGetter):
    def __init__(self, store_name: str) -> None:
        self.store_name = store_name
        self.store: Any = None

    def init(self, context: ProcessorContext) -> None:
        self.store = context.get_state_store(self.store_name)

    def get(self, key: Any) -> Any:
        return self.store.get(key)


class KTableSourceValueGetterSupplier:
    """Getters of a table that is its store: the source's and a (non-windowed) aggregate's."""

    def __init__(self, store_name: str) -> None:
        self.store_name = store_name

    def get(self) -> KTableValueGetter:
        return _StoreValueGetter(self.store_name)

    def store_names(self) -> list[str]:
        return [self.store_name]


class _ComputedValueGetter(KTableValueGetter):
    def __init__(self, parent_getter: KTableValueGetter, compute_value: Callable[[Any, Any], Any]) -> None:
        self.parent_getter = parent_getter
        self.compute_value = compute_value

    def init(self, context: ProcessorContext) -> None:
        self.parent_getter.init(context)

    def get(self, key: Any) -> Any:
        return self.compute_value(key, self.parent_getter.get(key))


class KTableComputedValueGetterSupplier:
    """Getters of a table computed from its parent's by ``compute_value(key, value)`` (a filter's or
    ``map_values``'s ``view()``)."""

    def __init__(self, parent: Any, compute_value: Callable[[Any, Any], Any]) -> None:
        self.parent = parent
        self.compute_value = compute_value

    def get(self) -> KTableValueGetter:
        return _ComputedValueGetter(self.parent.get(), self.compute_value)

    def store_names(self) -> list[str]:
        return self.parent.store_names()
