"""The session store interface: one aggregate per key and session, found by overlapping time.

Mirrors: org.apache.kafka.streams.state.SessionStore and ReadOnlySessionStore
         (streams/src/main/java/org/apache/kafka/streams/state/, Kafka 0.10.2, where sessions begin)
Book:    chapter 9, 9.2.4 (windows: session windows)
Differs: no ``fetch(key)`` over all of a key's sessions; ``find_sessions`` is what aggregation uses.

A session's window is not fixed in advance: it is ``[first record, last record]`` of a burst of
activity, and it grows, or merges with its neighbours, as records arrive. So the store is asked
"which of this key's sessions reach into ``[earliest_session_end_time, latest_session_start_time]``",
and the aggregation removes the ones it merges and puts the merged one.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.key_value_store import KeyValueIterator


class SessionStore(StateStore):
    @abstractmethod
    def find_sessions(
        self, key: Any, earliest_session_end_time: int, latest_session_start_time: int
    ) -> KeyValueIterator:
        """``key``'s sessions ending at or after ``earliest_session_end_time`` and starting at or before
        ``latest_session_start_time``, as ``KeyValue(Windowed(key, window), aggregate)``, by start."""

    @abstractmethod
    def remove(self, session_key: Any) -> None:
        """Delete the session ``session_key`` (a ``Windowed``)."""

    @abstractmethod
    def put(self, session_key: Any, aggregate: Any) -> None:
        """Store ``aggregate`` for the session ``session_key`` (a ``Windowed``)."""
