"""A KTable's processors: the source that keeps a topic as a table, and the operators on its updates.

Mirrors: org.apache.kafka.streams.kstream.internals.KTableSource, KTableFilter, KTableMapValues,
         KTableProcessorSupplier
         (streams/src/main/java/org/apache/kafka/streams/kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (KStream and KTable)
Differs: a table source whose store is not cached forwards as it puts (0.10.2's
         ``TupleForwarder``); 0.10.1's table stores are always cached.

The table's source puts each record in its store, which has the thread's record cache in front
(``enable_caching()``, as 0.10.1's ``KTableImpl.materialize``): the source does not forward; the
store forwards each key's last value when its cache flushes (the task commits) or evicts it, through
the ``ForwardingCacheFlushListener`` the source gave it in ``init``.

Every processor here receives and forwards ``Change(new, old)``. Old values cost a store read at the
source, so they are off until a downstream operator asks: ``enable_sending_old_values`` walks up
from the operator that needs them to the table's source (or aggregate), turning each on.

Why the filter wants them. Without old values a filter cannot tell "stops passing" from "never
passed", so it forwards ``Change(None, None)`` (a delete) for every record that fails; correct, but
it deletes keys downstream never saw. With old values it sends that delete only when the old value
passed, and nothing when neither passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.kstream.internals.change import Change
from kafka_lite.streams.kstream.internals.forwarding_cache_flush_listener import ForwardingCacheFlushListener
from kafka_lite.streams.kstream.internals.ktable_value_getter import (
    KTableComputedValueGetterSupplier,
    KTableSourceValueGetterSupplier,
)
from kafka_lite.streams.processor.processor import AbstractProcessor, Processor
from kafka_lite.streams.processor.processor_context import ProcessorContext
from kafka_lite.streams.state.internals.cached_state_store import CachedStateStore

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.internals.ktable_impl import KTableImpl


class KTableSource:
    """Keep the topic's latest value per key in the store ``store_name`` and forward each update."""

    def __init__(self, store_name: str) -> None:
        self.store_name = store_name
        self.send_old_values = False

    def __call__(self) -> Processor:
        return _MaterializedKTableSourceProcessor(self)

    def enable_sending_old_values(self) -> None:
        self.send_old_values = True

    def view(self) -> KTableSourceValueGetterSupplier:
        """The table's value getters: reads of its store."""
        return KTableSourceValueGetterSupplier(self.store_name)


class StoreProcessor(AbstractProcessor):
    """A processor over its supplier's store ``supplier.store_name``, found when the task starts
    (the table source's and the aggregations' processors). A cached store forwards for it, on the
    cache's flush; ``cached`` says whether the processor must forward itself."""

    def __init__(self, supplier: Any) -> None:
        super().__init__()
        self.supplier = supplier
        self.store: Any = None
        self.cached = False

    # --8<-- [start:init]
    def init(self, context: ProcessorContext) -> None:
        super().init(context)
        self.store = context.get_state_store(self.supplier.store_name)
        if isinstance(self.store, CachedStateStore):
            listener = ForwardingCacheFlushListener(context, self.supplier.send_old_values)
            self.store.set_flush_listener(listener)
            self.cached = True

    # --8<-- [end:init]


class _MaterializedKTableSourceProcessor(StoreProcessor):
    def process(self, key: Any, value: Any) -> None:
        # A table is keyed: a record with no key cannot update any row.
        if key is None:
            raise StreamsException(
                f"Record key for the source KTable from store name {self.supplier.store_name} should not be null."
            )
        if self.cached:
            self.store.put(key, value)  # forwarded when the cache flushes or evicts the key
            return
        old_value = self.store.get(key) if self.supplier.send_old_values else None
        self.store.put(key, value)  # a None value (a tombstone) deletes the key
        self.context().forward(key, Change(value, old_value))


class KTableProcessorSupplier:
    """An operator on a table's updates; turning on its old values turns on its parent's first."""

    def __init__(self, parent: KTableImpl) -> None:
        self.parent = parent
        self.send_old_values = False

    def enable_sending_old_values(self) -> None:
        self.parent.enable_sending_old_values()
        self.send_old_values = True

    def __call__(self) -> Processor:
        return _ChangeProcessor(self)

    def view(self) -> KTableComputedValueGetterSupplier:
        """The parent's value getters with ``compute_value`` applied to what they read."""
        return KTableComputedValueGetterSupplier(self.parent.value_getter_supplier(), self.compute_value)

    def compute_value(self, key: Any, value: Any) -> Any:
        raise NotImplementedError


class _ChangeProcessor(AbstractProcessor):
    """Kafka's ``KTableFilterProcessor``/``KTableMapValuesProcessor``: the supplier's
    ``compute_value`` on the new value, and on the old one when old values are sent."""

    def __init__(self, supplier: KTableProcessorSupplier) -> None:
        super().__init__()
        self.supplier = supplier

    def process(self, key: Any, change: Change) -> None:
        send_old_values = self.supplier.send_old_values
        new_value = self.supplier.compute_value(key, change.new_value)
        old_value = self.supplier.compute_value(key, change.old_value) if send_old_values else None
        if send_old_values and old_value is None and new_value is None and self.supplier.skips_no_change:
            return  # neither passes: downstream never saw this key, so there is nothing to delete
        self.context().forward(key, Change(new_value, old_value))


class KTableFilter(KTableProcessorSupplier):
    """A value passes if ``predicate(key, value)`` holds (if it does not, with ``filter_not``); one that
    does not becomes None, a delete."""

    skips_no_change = True

    def __init__(self, parent: KTableImpl, predicate: Callable[[Any, Any], bool], filter_not: bool) -> None:
        super().__init__(parent)
        self.predicate = predicate
        self.filter_not = filter_not

    def compute_value(self, key: Any, value: Any) -> Any:
        if value is not None and (self.filter_not ^ bool(self.predicate(key, value))):
            return value
        return None


class KTableMapValues(KTableProcessorSupplier):
    """``mapper(value)`` for each value; a delete stays a delete."""

    skips_no_change = False

    def __init__(self, parent: KTableImpl, mapper: Callable[[Any], Any]) -> None:
        super().__init__(parent)
        self.mapper = mapper

    def compute_value(self, key: Any, value: Any) -> Any:
        return None if value is None else self.mapper(value)
