"""Where a KRaft node's broker or controller is in its start and stop, changed under one lock.

Mirrors: kafka.server.ProcessStatus (core/src/main/scala/kafka/server/Server.scala, Kafka 3.3.0),
         with the ``lock``, ``status`` and ``maybeChangeStatus`` that BrokerServer and ControllerServer
         each carry
Book:    beyond the book, chapter 12
Differs: the lock, the status and the change are one small object both servers hold, rather than
         three members written out in each.

``startup`` and ``shutdown`` each begin with a change from the state they expect: a second
``startup`` (or a ``shutdown`` of a server never started) finds the status elsewhere and returns at
once. The lock makes the check and the change one step, so two threads stopping a node stop it once.
"""

from __future__ import annotations

import enum
import threading


class ProcessStatus(enum.Enum):
    """Kafka's ``ProcessStatus``: where a server is in its start and stop."""

    SHUTDOWN = "shutdown"
    STARTING = "starting"
    STARTED = "started"
    SHUTTING_DOWN = "shutting down"


class ProcessStatusHolder:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.status = ProcessStatus.SHUTDOWN

    def maybe_change_status(self, from_: ProcessStatus, to: ProcessStatus) -> bool:
        """Move from ``from_`` to ``to``; False, changing nothing, if the status is not ``from_``."""
        with self._lock:
            if self.status is not from_:
                return False
            self.status = to
            return True
