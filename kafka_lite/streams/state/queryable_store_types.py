"""Interactive Queries: a running application's stores, read by name from outside its threads.

Mirrors: org.apache.kafka.streams.state.QueryableStoreTypes, QueryableStoreType,
         ReadOnlyKeyValueStore, ReadOnlyWindowStore and
         org.apache.kafka.streams.state.internals.CompositeReadOnlyKeyValueStore,
         CompositeReadOnlyWindowStore, QueryableStoreProvider (Kafka 0.10.1, KIP-67)
Book:    chapter 9, 9.1.4 (state stores)
Differs: ``all`` and ``range`` read the copies into lists at once, where Kafka's iterators are
         lazy and fail when a store closes under them. A store's type is checked by the methods it has (a window store has ``fetch``),
         where Kafka checks its Java interface.

A store of name N lives once in every task of the sub-topology that uses it, so one instance holds
as many copies as it runs such tasks, each with the keys of one partition. ``KafkaStreams.store(N,
QueryableStoreTypes.key_value_store())`` gathers them into one read-only view: ``get`` asks each
copy until one has the key, ``all`` and ``range`` chain them. A key this instance does not hold is
on another instance: ``KafkaStreams.metadata_for_key`` says which one (its ``application.server``),
and the application asks it there, over whatever it serves (kafka_lite's examples: nothing; Kafka's
use a REST endpoint).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from kafka_lite.streams.errors import InvalidStateStoreException


class QueryableStoreType:
    """Which kind of store a query wants, and how to wrap the copies found into one view."""

    def __init__(self, name: str, required_method: str, wrapper: type) -> None:
        self.name = name
        self.required_method = required_method
        self.wrapper = wrapper

    def accepts(self, store: Any) -> bool:
        return callable(getattr(store, self.required_method, None))

    def create(self, provider: Callable[[], list[Any]], store_name: str) -> Any:
        """The view over ``provider()``: the copies the running tasks hold at each call."""
        return self.wrapper(provider, store_name)


class CompositeReadOnlyKeyValueStore:
    """One read-only key-value view over the copies of a store in this instance's tasks."""

    def __init__(self, provider: Callable[[], list[Any]], store_name: str) -> None:
        self.provider = provider
        self.store_name = store_name

    def _open_stores(self) -> list[Any]:
        return _open_stores(self.provider(), self.store_name)

    def get(self, key: Any) -> Any:
        for store in self._open_stores():
            value = store.get(key)
            if value is not None:
                return value
        return None

    def range(self, from_key: Any, to_key: Any) -> Iterator[Any]:
        return itertools.chain.from_iterable(list(s.range(from_key, to_key)) for s in self._open_stores())

    def all(self) -> Iterator[Any]:
        return itertools.chain.from_iterable(list(s.all()) for s in self._open_stores())

    def approximate_num_entries(self) -> int:
        return sum(s.approximate_num_entries() for s in self._open_stores())


class CompositeReadOnlyWindowStore:
    """One read-only window view: ``fetch(key, time_from, time_to)`` from the copy that has the key."""

    def __init__(self, provider: Callable[[], list[Any]], store_name: str) -> None:
        self.provider = provider
        self.store_name = store_name

    def fetch(self, key: Any, time_from: int, time_to: int) -> list[Any]:
        for store in _open_stores(self.provider(), self.store_name):
            found = list(store.fetch(key, time_from, time_to))
            if found:
                return found
        return []


def _open_stores(stores: list[Any], store_name: str) -> list[Any]:
    """The copies, unless there are none or one is closing (a rebalance under way): ask again later."""
    if not stores:
        raise InvalidStateStoreException(
            f"the state store, {store_name}, may have migrated to another instance."
        )
    for store in stores:
        if not store.is_open():
            raise InvalidStateStoreException(
                f"the state store, {store_name}, may have migrated to another instance."
            )
    return stores


class QueryableStoreTypes:
    @staticmethod
    def key_value_store() -> QueryableStoreType:
        return QueryableStoreType("keyValueStore", "get", CompositeReadOnlyKeyValueStore)

    @staticmethod
    def window_store() -> QueryableStoreType:
        return QueryableStoreType("windowStore", "fetch", CompositeReadOnlyWindowStore)
