"""A state store, and the callback that restores one from its changelog.

Mirrors: org.apache.kafka.streams.processor.StateStore, StateRestoreCallback, StateStoreSupplier
         (streams/src/main/java/org/apache/kafka/streams/processor/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: a store is a subclass of the abstract ``StateStore``; a supplier is any object with the
         members of ``StateStoreSupplier`` (a structural type), as a processor supplier is any
         callable.

``init(context, root)`` is where a store joins its task: it opens its files and calls
``context.register(root, logging_enabled, restore_callback)``, handing the task's state manager
the outermost store (``root``: the one the processor sees) and the callback that replays changelog
records into the innermost one. ``root`` is passed down through every wrapping layer so that the
state manager registers, flushes and closes the store the processor holds, not a piece of it.

How a store joins a task: ``TopologyBuilder.build`` calls each connected supplier's ``get()`` for a
new store; the task calls ``store.init(context, store)``; the store registers itself from its
``init``. From then on the state manager flushes the store on every commit and closes it with the
task, and a processor reaches it with ``context.get_state_store(name)``. A store that logs its
changes sends them through ``context.record_collector()`` to ``<application.id>-<name>-changelog``;
after a crash the state manager replays that topic into ``restore_callback(key, value)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol


class StateRestoreCallback(Protocol):
    """Replays one changelog record into a store: ``value`` None is a delete (a tombstone)."""

    def __call__(self, key: bytes, value: bytes | None) -> None: ...


class StateStore(ABC):
    """A store a processor keeps state in, managed by its task: opened, flushed, closed with it."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The store's name; its changelog topic is ``<application.id>-<name>-changelog``."""

    @abstractmethod
    def init(self, context: Any, root: StateStore) -> None:
        """Open the store for ``context``'s task and register ``root`` with the task's state manager."""

    @abstractmethod
    def flush(self) -> None:
        """Write what is buffered to the store's files (the task does this before it checkpoints)."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def persistent(self) -> bool:
        """True when the store's data survive a restart on disk (RocksDB), so restore replays only the tail."""

    @abstractmethod
    def is_open(self) -> bool: ...


class StateStoreSupplier(Protocol):
    """Makes a task's instance of a store: each task gets its own (Kafka's ``StateStoreSupplier``)."""

    @property
    def name(self) -> str: ...

    def get(self) -> StateStore: ...

    def logging_enabled(self) -> bool: ...

    def log_config(self) -> dict[str, str]: ...
