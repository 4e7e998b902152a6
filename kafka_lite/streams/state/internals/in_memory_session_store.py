"""A session store in memory: each key's sessions in a list, by start.

Mirrors: org.apache.kafka.streams.state.SessionStore (the interface; Kafka 0.10.2's only
         implementation is RocksDBSessionStore, over a segmented bytes store)
Book:    chapter 9, 9.2.4 (session windows)
Differs: in memory, typed, with no changelog and no retention: keys and aggregates are kept as
         the objects they are, and expired sessions are never dropped. Kafka's RocksDBSessionStore
         keeps ``key + end + start`` binary keys in time segments, retained for the windows'
         ``until``; that is the store to write next, over ``RocksDBSegmentedBytesStore``.

Kafka's binary key ends with the session's end and then its start, so that a scan from
``earliest_session_end_time`` finds the sessions that may overlap without reading older ones; a
list per key, checked session by session, gives the same answer for the few sessions a test has.
A session key is any object with ``key`` and ``window`` (the DSL's ``Windowed``): the store does
not import the DSL, which sits above it.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.internals.in_memory_key_value_store import InMemoryKeyValueIterator
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator
from kafka_lite.streams.state.session_store import SessionStore


class InMemorySessionStore(SessionStore):
    def __init__(self, name: str) -> None:
        self._name = name
        self._sessions: dict[Any, dict[Any, Any]] = {}
        self._open = False

    @property
    def name(self) -> str:
        return self._name

    def init(self, context: Any, root: StateStore) -> None:
        context.register(root, False, self._restore)
        self._open = True

    def _restore(self, key: bytes, value: bytes | None) -> None:
        raise NotImplementedError("the in-memory session store has no changelog to restore from")

    def find_sessions(
        self, key: Any, earliest_session_end_time: int, latest_session_start_time: int
    ) -> KeyValueIterator:
        found = [
            KeyValue(session_key, aggregate)
            for session_key, aggregate in self._sessions.get(key, {}).items()
            if session_key.window.end >= earliest_session_end_time
            and session_key.window.start <= latest_session_start_time
        ]
        found.sort(key=lambda entry: entry.key.window.start)
        return InMemoryKeyValueIterator(found)

    def remove(self, session_key: Any) -> None:
        self._sessions.get(session_key.key, {}).pop(session_key, None)

    def put(self, session_key: Any, aggregate: Any) -> None:
        if aggregate is None:
            self.remove(session_key)
        else:
            self._sessions.setdefault(session_key.key, {})[session_key] = aggregate

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self._open = False

    def persistent(self) -> bool:
        return False

    def is_open(self) -> bool:
        return self._open


class InMemorySessionStoreSupplier:
    """A task's own in-memory session store named ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def get(self) -> InMemorySessionStore:
        return InMemorySessionStore(self.name)

    def logging_enabled(self) -> bool:
        return False

    def log_config(self) -> dict[str, str]:
        return {}
