"""A fault handler for tests and notebooks: it records the first fault, where a server's would end the process.

Mirrors: org.apache.kafka.server.fault.MockFaultHandler
         (server-common/src/test/java/org/apache/kafka/server/fault/MockFaultHandler.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The quorum controller raises what ``handle_fault`` returns, so after a fault the controller goes on
as Kafka 3.3's does under this handler in its tests: the event fails and, if the controller was
active, it renounces. A test reads ``first_exception`` to see that the fault happened, and what it
was; ``maybe_rethrow_first_exception`` lets a harness fail a run that met a fault nobody checked.
"""

from __future__ import annotations

import logging
import threading

from kafka_lite.metadata.fault_handler import FaultHandlerException

log = logging.getLogger(__name__)


class MockFaultHandler:
    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self.first_exception: FaultHandlerException | None = None
        self.ignore = False

    def handle_fault(self, failure_message: str, cause: BaseException | None = None) -> RuntimeError:
        log.error("Encountered %s fault: %s", self.name, failure_message, exc_info=cause)
        message = f"{self.name}: {failure_message}" + ("" if cause is None else f": {cause}")
        with self._lock:
            if self.first_exception is None:
                self.first_exception = FaultHandlerException(message, cause)
            return self.first_exception

    def maybe_rethrow_first_exception(self) -> None:
        with self._lock:
            if self.first_exception is not None and not self.ignore:
                raise self.first_exception
