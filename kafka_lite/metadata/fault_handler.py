"""What a server does with a fault it cannot recover from: the quorum controller's fatal fault handler.

Mirrors: org.apache.kafka.server.fault.FaultHandler, FaultHandlerException and
         ProcessExitingFaultHandler (server-common/src/main/java/org/apache/kafka/server/fault/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the three live in one module, in ``metadata/`` beside their one user, since kafka_lite
         has no server-common package and each is a few lines; the process ends with
         ``os._exit`` (Java's ``Exit.exit`` runs the shutdown hooks first).

A fault is not an error a request can be answered with. When the active controller cannot apply a
record it has just decided, its memory no longer matches what it is about to write to the log, and
no reply to the client repairs that. Kafka 3.3 hands such a fault to the *fatal* fault handler the
server passed in, and in a real server that handler ends the process: a controller that stops
cannot write a wrong record, and a restarted one rebuilds its memory from the log. Tests pass a
handler that records the fault instead (``kafka_lite.testing.mock_fault_handler``), so they can
see it and go on.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

log = logging.getLogger(__name__)


class FaultHandlerException(RuntimeError):
    """The exception a fault handler gives back, for its caller to raise."""

    def __init__(self, failure_message: str, cause: BaseException | None = None) -> None:
        super().__init__(failure_message)
        self.__cause__ = cause


class FaultHandler(Protocol):
    def handle_fault(self, failure_message: str, cause: BaseException | None = None) -> RuntimeError:
        """Handle a fault; the exception the caller raises, if this handler returns at all."""
        ...


class ProcessExitingFaultHandler:
    """Log the fault and end the process with status 1, as a real KRaft server does."""

    def handle_fault(self, failure_message: str, cause: BaseException | None = None) -> RuntimeError:
        log.error("Encountered fatal fault: %s", failure_message, exc_info=cause)
        # The quorum controller calls this on its own event thread, where sys.exit would end only
        # that thread and leave a server without a working controller: the whole process goes.
        logging.shutdown()
        os._exit(1)
