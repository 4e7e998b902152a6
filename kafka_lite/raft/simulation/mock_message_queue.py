"""A Raft message queue that never waits: the simulator and the unit tests move time themselves.

Mirrors: org.apache.kafka.raft.MockMessageQueue
         (raft/src/test/java/org/apache/kafka/raft/MockMessageQueue.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Beside the simulator, as Kafka keeps it beside its tests: the runtime never imports it, and a real
voter is given a ``BlockingMessageQueue``. A poll with nothing queued returns None at once, and
records the timeout it was given, so a test can check how long a real node would have slept.
Not thread-safe: everything that touches it runs on the one simulated thread.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from kafka_lite.raft.raft_message_queue import RaftMessageQueue


class MockMessageQueue(RaftMessageQueue):
    def __init__(self) -> None:
        self._messages: deque = deque()
        self.last_poll_timeout_ms: int | None = None
        self.wakeup_requested = False

    def poll(self, timeout_ms: int) -> Any | None:
        self.last_poll_timeout_ms = timeout_ms
        self.wakeup_requested = False
        return self._messages.popleft() if self._messages else None

    def add(self, message: Any) -> None:
        self._messages.append(message)

    def is_empty(self) -> bool:
        return not self._messages

    def wakeup(self) -> None:
        self.wakeup_requested = True

    def size(self) -> int:
        return len(self._messages)
