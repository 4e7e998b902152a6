"""A callback for an asynchronous herder request, and the future a caller waits on for one.

Mirrors: org.apache.kafka.connect.util.Callback and org.apache.kafka.connect.util.FutureCallback
         (connect/runtime/src/main/java/org/apache/kafka/connect/util/, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``FutureCallback`` is a ``concurrent.futures.Future``, so ``result(timeout)`` is Kafka's
         ``get(timeout, unit)`` and raises the request's own exception.

A herder answers requests on its own thread (the distributed herder's ``tick``), so its methods
take a callback, called once with ``(error, None)`` or ``(None, result)``. The REST resources hand
it a ``FutureCallback`` and wait on that, with a deadline.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

T = TypeVar("T")

Callback = Callable[[BaseException | None, Any], None]


class FutureCallback(Future, Generic[T]):
    """A ``Future`` that is also a ``Callback``: calling it completes it."""

    def __init__(self, underlying: Callback | None = None) -> None:
        super().__init__()
        self.underlying = underlying

    def __call__(self, error: BaseException | None, result: T | None) -> None:
        if self.underlying is not None:
            self.underlying(error, result)
        if error is not None:
            self.set_exception(error)
        else:
            self.set_result(result)
