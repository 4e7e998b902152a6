"""The simplest state manager a task can run with: it keeps the stores its task registers, no more.

No Kafka twin: a stand-in with the calls of Kafka's
org.apache.kafka.streams.processor.internals.ProcessorStateManager that ``StreamTask`` and
``ProcessorContextImpl`` make (``register``, ``get_store``, ``flush``, ``close``), and none of its
work: no changelog topics, no restoring, no checkpoint file, no state directory.
Book: chapter 9, 9.1.3 (the state manager owns a task's stores)

It lets the Processor API run, and be tested, before the real state manager exists; the real one
(restoring a logged store from its changelog before the task processes anything, and checkpointing
the changelog offsets in ``close(ack_offsets)``) replaces it behind the same four calls. A store
registered with ``logging_enabled`` is kept here like any other; its restore callback is never
called, because there is nothing to restore from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import StreamsException


class SimpleStateManager:
    """A task's stores by name; flushes and closes them with the task."""

    def __init__(self, task_id: Any) -> None:
        self.log_prefix = f"task [{task_id}]"
        self.stores: dict[str, Any] = {}

    def register(
        self, store: Any, logging_enabled: bool, restore_callback: Callable[[bytes, bytes | None], None]
    ) -> None:
        if store.name in self.stores:
            # Kafka's ProcessorStateManager.register wording.
            raise ValueError(f"{self.log_prefix} Store {store.name} has already been registered.")
        self.stores[store.name] = store

    def get_store(self, name: str) -> Any:
        return self.stores.get(name)

    def flush(self) -> None:
        for store in self.stores.values():
            try:
                store.flush()
            except Exception as e:
                raise StreamsException(f"{self.log_prefix} Failed to flush state store {store.name}") from e

    def close(self, ack_offsets: dict[TopicPartition, int]) -> None:
        """Flush and close every store; ``ack_offsets`` (the collector's) would be checkpointed by the real one."""
        for store in self.stores.values():
            store.flush()
            store.close()
        self.stores.clear()
