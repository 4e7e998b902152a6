"""The Raft thread's inbound queue: peers' requests, answers to ours, and wakeups.

Mirrors: org.apache.kafka.raft.RaftMessageQueue and internals.BlockingMessageQueue
         (raft/src/main/java/org/apache/kafka/raft/RaftMessageQueue.java,
         raft/src/main/java/org/apache/kafka/raft/internals/BlockingMessageQueue.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the interface and the real queue in one module.

``KafkaRaftClient.poll`` ends by taking at most one message, waiting for it up to the time its
state's poll said nothing else needs doing (the next election timeout, fetch, linger). A real node
waits in ``BlockingMessageQueue.poll`` and so sleeps instead of spinning; anything that changes what
the next poll would do (a response, an append scheduled, a shutdown) adds a message or calls
``wakeup``, which ends the wait at once. Tests and the simulator move time themselves, so their
queue (``kafka_lite.raft.simulation.mock_message_queue``) never waits.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import deque
from typing import Any

from kafka_lite.common.time import SYSTEM, Time


class RaftMessageQueue(ABC):
    @abstractmethod
    def poll(self, timeout_ms: int) -> Any | None:
        """The next message, waiting up to ``timeout_ms``; None on timeout or after a wakeup."""

    @abstractmethod
    def add(self, message: Any) -> None:
        """Queue ``message`` for the Raft thread (from any thread)."""

    @abstractmethod
    def is_empty(self) -> bool: ...

    @abstractmethod
    def wakeup(self) -> None:
        """End a blocked ``poll`` now, with None if nothing is queued."""

    @abstractmethod
    def size(self) -> int: ...


class BlockingMessageQueue(RaftMessageQueue):
    """The real node's queue. Kafka's is a LinkedBlockingQueue with a wakeup marker put into it;
    here a deque under a condition, waited on through ``Time.wait_for`` so a MockTime can drive the
    timeout in tests, with a wakeup flag in place of the marker."""

    def __init__(self, time: Time = SYSTEM) -> None:
        self._time = time
        self._condition = threading.Condition()
        self._messages: deque = deque()
        self._woken = False

    def poll(self, timeout_ms: int) -> Any | None:
        with self._condition:
            self._time.wait_for(self._condition, lambda: self._messages or self._woken, max(timeout_ms, 0))
            self._woken = False
            return self._messages.popleft() if self._messages else None

    def add(self, message: Any) -> None:
        with self._condition:
            self._messages.append(message)
            self._condition.notify_all()

    def is_empty(self) -> bool:
        with self._condition:
            return not self._messages

    def wakeup(self) -> None:
        with self._condition:
            self._woken = True
            self._condition.notify_all()

    def size(self) -> int:
        with self._condition:
            return len(self._messages)
