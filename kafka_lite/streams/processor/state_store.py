"""The contract between the Processor API and a state store: what a task asks of a store.

Mirrors: org.apache.kafka.streams.processor.StateStore, StateStoreSupplier and StateRestoreCallback
         (streams/src/main/java/org/apache/kafka/streams/processor/, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (state stores)
Differs: structural types (``typing.Protocol``): a store or a supplier is any object with these
         members; the stores themselves live in ``kafka_lite.streams.state``.

How a store joins a task: ``TopologyBuilder.build`` calls each connected supplier's ``get()`` for a
new store; the task calls ``store.init(context, store)``; the store, from its ``init``, calls
``context.register(self, logging_enabled, restore_callback)``, which hands it to the task's state
manager. From then on the state manager flushes the store on every commit and closes it with the
task, and a processor reaches it with ``context.get_state_store(name)``. A store that logs its
changes sends them through ``context.record_collector()`` to ``<application.id>-<name>-changelog``;
after a crash the state manager replays that topic into ``restore_callback(key, value)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

# Kafka's StateRestoreCallback.restore(byte[] key, byte[] value): one changelog record replayed.
StateRestoreCallback = Callable[[bytes, bytes | None], None]


@runtime_checkable
class StateStore(Protocol):
    """A store a task owns (Kafka's ``StateStore``)."""

    @property
    def name(self) -> str: ...

    def init(self, context: Any, root: Any) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def persistent(self) -> bool: ...

    def is_open(self) -> bool: ...


@runtime_checkable
class StateStoreSupplier(Protocol):
    """Makes a new store for each task (Kafka's ``StateStoreSupplier``); it may also offer
    ``logging_enabled()`` and ``log_config()``, which ``topic_groups`` reads when present."""

    @property
    def name(self) -> str: ...

    def get(self) -> StateStore: ...
