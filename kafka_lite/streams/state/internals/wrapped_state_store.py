"""A store that wraps another and hands it what it does not change itself.

Mirrors: org.apache.kafka.streams.state.internals.WrappedStateStore.AbstractStateStore
         (streams/src/main/java/.../state/internals/WrappedStateStore.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4

A store the processor sees is a stack: a typed layer, then a change-logging layer, then the store
that holds the bytes. Each layer takes ``init``, ``flush`` and ``close`` down the stack; only the
innermost store registers with the task, passing the ``root`` it was given (the top of the stack).
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.state_store import StateStore


class WrappedStateStore(StateStore):
    def __init__(self, inner: StateStore) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    def init(self, context: Any, root: StateStore) -> None:
        self.inner.init(context, root)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()

    def persistent(self) -> bool:
        return self.inner.persistent()

    def is_open(self) -> bool:
        return self.inner.is_open()
