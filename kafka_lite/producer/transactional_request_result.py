"""What the application waits on while the sender thread runs a transactional request.

Mirrors: org.apache.kafka.clients.producer.internals.TransactionalRequestResult
         (clients/src/main/java/.../producer/internals/TransactionalRequestResult.java, Kafka 0.11.0)
Book:    beyond the book (transactions are Kafka 0.11's, KIP-98)
Differs: ``await_result`` takes a timeout (the producer passes ``max.block.ms``) and raises
         ``TimeoutException`` when it runs out; Kafka 0.11 waits for ever, and Kafka 2.0 added the
         same bound. A Python threading.Event stands in for the CountDownLatch of one.

``init_transactions``, ``commit_transaction``, ``abort_transaction`` and
``send_offsets_to_transaction`` only queue a request in the ``TransactionManager`` and wake the
sender; the sender sends it, and the request's handler, on the sender's thread, calls ``done`` (after
``set_error`` if it failed). The application thread blocks in ``await_result`` until then.
"""

from __future__ import annotations

import threading

from kafka_lite.common.errors import TimeoutException


class TransactionalRequestResult:
    def __init__(self, operation: str = "transactional request") -> None:
        self.operation = operation  # named in the timeout's message
        self._latch = threading.Event()
        self.error: BaseException | None = None

    def set_error(self, error: BaseException) -> None:
        self.error = error

    def done(self) -> None:
        self._latch.set()

    def await_result(self, timeout_ms: int | None = None) -> None:
        """Block until the request completed; raise its error if it failed, ``TimeoutException`` if
        ``timeout_ms`` passed first (the request still runs: waiting again is allowed)."""
        if not self._latch.wait(None if timeout_ms is None else timeout_ms / 1000):
            raise TimeoutException(f"Timeout expired after {timeout_ms} ms while awaiting {self.operation}")
        if self.error is not None:
            raise self.error

    def is_successful(self) -> bool:
        return self.error is None

    def is_completed(self) -> bool:
        return self._latch.is_set()
