"""Futures that fail on their own once a time limit passes: how the Raft client bounds a held Fetch.

Mirrors: org.apache.kafka.raft.ExpirationService
         (raft/src/main/java/org/apache/kafka/raft/ExpirationService.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The Raft client asks the service for a future with a deadline (``fail_after``) and puts it in its
fetch purgatory. Either the client completes it first (the Fetch has something to answer with), or
the service fails it with a TimeoutException when the deadline passes. The real process uses
``TimingWheelExpirationService``, Kafka's timing wheel with a reaper thread; tests and the simulator
use ``kafka_lite.raft.simulation.mock_expiration_service``, which expires nothing until told the
mock clock has moved.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import Future


class ExpirationService(ABC):
    @abstractmethod
    def fail_after(self, timeout_ms: int) -> Future:
        """A new future that fails with TimeoutException unless completed within ``timeout_ms``."""

    def shutdown(self) -> None:  # noqa: B027 - only the real service has a thread to stop
        pass
