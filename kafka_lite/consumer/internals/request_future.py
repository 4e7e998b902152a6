"""A request's result that arrives later: the consumer's asynchronous requests, and how they compose.

Mirrors: org.apache.kafka.clients.consumer.internals.RequestFuture, RequestFutureListener,
         RequestFutureAdapter, NoAvailableBrokersException and StaleMetadataException
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/, Kafka 0.10.1)
Book:    chapter 4, 4.2.1 (asynchronous requests), 4.2.2 (asynchronous requests, composed)
Differs: Java's ``raise`` is a Python keyword, so the method is ``raise_`` (and takes an exception or
         an ``Errors`` entry, as Kafka's two overloads do). Kafka's ``AtomicReference`` becomes a
         small lock around the one place that must be atomic, setting the result once. The two
         exceptions used by the static helpers live here, beside the helpers, rather than in files
         of their own.

``ConsumerNetworkClient.send`` returns a ``RequestFuture[ClientResponse]`` at once; the request goes
out, and the future completes, during a later ``poll``. The future holds one of three things: nothing
yet, a value (``complete``), or an exception (``raise_``); once set, the result never changes, and a
second attempt to set it is a bug (``IllegalStateException``).

Two ways to build on a future, the heart of the consumer's coordinator code:

- ``compose(adapter)`` turns a ``RequestFuture[ClientResponse]`` into, say, a
  ``RequestFuture[ByteBuffer]`` for a JoinGroup: the adapter reads the response and completes (or
  fails) the new future. A failure passes straight through unless the adapter says otherwise.
- ``chain(other)`` completes ``other`` with whatever this future ends with, so a caller can hand back
  a future it made before it knew which request would serve it.

Listeners run on the thread that completes the future (for the consumer: the one in ``poll``),
at once if the future is already done when they are added.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import deque
from typing import Any, Generic, TypeVar

from kafka_lite.common.errors import (
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    InvalidMetadataException,
    KafkaException,
    RetriableException,
)

T = TypeVar("T")
S = TypeVar("S")

# The "no result yet" marker: a value of None is a real result (``void_success``), so it cannot be.
_INCOMPLETE = object()


class NoAvailableBrokersException(InvalidMetadataException):
    """No broker was available to send a request to (Kafka's ``NoAvailableBrokersException``)."""

    def __init__(self, message: str | None = None) -> None:
        KafkaException.__init__(self, message or "No brokers are available to send the request to.")


class StaleMetadataException(InvalidMetadataException):
    """The client's metadata is too old to act on; refresh it first (Kafka's ``StaleMetadataException``)."""

    def __init__(self, message: str | None = None) -> None:
        KafkaException.__init__(self, message or "The metadata is stale and needs a refresh.")


class RequestFutureListener(ABC, Generic[T]):
    """Told once when a future completes: ``on_success`` with its value or ``on_failure`` with its
    exception."""

    @abstractmethod
    def on_success(self, value: T) -> None: ...

    @abstractmethod
    def on_failure(self, e: Exception) -> None: ...


class RequestFutureAdapter(ABC, Generic[T, S]):
    """Turns the result of a ``RequestFuture[T]`` into the result of a ``RequestFuture[S]``.

    ``on_success`` must complete or fail ``future``; ``on_failure`` passes the failure on unchanged
    unless a subclass overrides it (a coordinator adapter may, for example, mark the coordinator
    dead first)."""

    @abstractmethod
    def on_success(self, value: T, future: RequestFuture[S]) -> None: ...

    def on_failure(self, e: Exception, future: RequestFuture[S]) -> None:
        future.raise_(e)


class RequestFuture(Generic[T]):
    """The result of an asynchronous request, set once by ``complete`` or ``raise_``."""

    def __init__(self) -> None:
        self._result: Any = _INCOMPLETE
        self._result_lock = threading.Lock()  # makes "set it if it is unset" one step, as compareAndSet
        self._listeners: deque[RequestFutureListener[T]] = deque()

    # -- the state ---------------------------------------------------------------------------------------

    def is_done(self) -> bool:
        return self._result is not _INCOMPLETE

    def succeeded(self) -> bool:
        return self.is_done() and not self.failed()

    def failed(self) -> bool:
        # As Kafka: the one slot holds either the value or the exception, and an exception can never
        # be a value (``complete`` refuses one), so its type says which.
        return isinstance(self._result, Exception)

    def value(self) -> T:
        if not self.succeeded():
            raise IllegalStateException(
                "Attempt to retrieve value from future which hasn't successfully completed"
            )
        return self._result

    def exception(self) -> Exception:
        if not self.failed():
            raise IllegalStateException("Attempt to retrieve exception from future which hasn't failed")
        return self._result

    def is_retriable(self) -> bool:
        """True if the request failed with a ``RetriableException`` (raises if it has not failed)."""
        return isinstance(self.exception(), RetriableException)

    def should_block(self) -> bool:
        """The poll condition (Kafka's ``PollCondition``): keep polling while the future is not done."""
        return not self.is_done()

    # -- completing it -----------------------------------------------------------------------------------

    def complete(self, value: T) -> None:
        """Succeed with ``value`` (None for a request with no result) and tell the listeners."""
        if isinstance(value, Exception):
            raise IllegalArgumentException(
                "The argument to complete can not be an instance of RuntimeException"
            )
        self._set_once(value)
        self._fire_success()

    def raise_(self, e: Exception | Errors) -> None:
        """Fail with ``e`` (an exception, or an ``Errors`` entry whose exception is used) and tell the
        listeners."""
        if e is None:
            raise IllegalArgumentException("The exception passed to raise must not be null")
        if isinstance(e, Errors):
            e = e.exception()
        if not isinstance(e, Exception):
            raise IllegalArgumentException(
                f"The argument to raise must be an exception or an Errors entry, not {e!r}"
            )
        self._set_once(e)
        self._fire_failure()

    def _set_once(self, result: Any) -> None:
        with self._result_lock:
            if self._result is not _INCOMPLETE:
                raise IllegalStateException(
                    "Invalid attempt to complete a request future which is already complete"
                )
            self._result = result

    # Each listener is taken off the queue before it runs, so it runs exactly once even when a
    # listener is added on another thread while the future completes: whichever thread pops it
    # runs it.
    def _fire_success(self) -> None:
        value = self.value()
        while self._listeners:
            try:
                listener = self._listeners.popleft()
            except IndexError:
                break  # another thread took the last one
            listener.on_success(value)

    def _fire_failure(self) -> None:
        exception = self.exception()
        while self._listeners:
            try:
                listener = self._listeners.popleft()
            except IndexError:
                break
            listener.on_failure(exception)

    # -- building on it ----------------------------------------------------------------------------------

    def add_listener(self, listener: RequestFutureListener[T]) -> None:
        """Tell ``listener`` when the future completes; at once if it already has."""
        self._listeners.append(listener)
        if self.failed():
            self._fire_failure()
        elif self.succeeded():
            self._fire_success()

    # --8<-- [start:compose_chain]
    def compose(self, adapter: RequestFutureAdapter[T, S]) -> RequestFuture[S]:
        """A new future whose result ``adapter`` makes from this one's."""
        adapted: RequestFuture[S] = RequestFuture()
        self.add_listener(_ComposeListener(adapter, adapted))
        return adapted

    def chain(self, future: RequestFuture[T]) -> None:
        """Complete ``future`` with this future's value, or fail it with this future's exception."""
        self.add_listener(_ChainListener(future))

    # --8<-- [end:compose_chain]

    # -- ready-made results --------------------------------------------------------------------------------

    @staticmethod
    def failure(e: Exception) -> RequestFuture[Any]:
        future: RequestFuture[Any] = RequestFuture()
        future.raise_(e)
        return future

    @staticmethod
    def void_success() -> RequestFuture[None]:
        future: RequestFuture[None] = RequestFuture()
        future.complete(None)
        return future

    @staticmethod
    def coordinator_not_available() -> RequestFuture[Any]:
        # Kafka 0.10's GROUP_COORDINATOR_NOT_AVAILABLE, under its current name.
        return RequestFuture.failure(Errors.COORDINATOR_NOT_AVAILABLE.exception())

    @staticmethod
    def leader_not_available() -> RequestFuture[Any]:
        return RequestFuture.failure(Errors.LEADER_NOT_AVAILABLE.exception())

    @staticmethod
    def no_brokers_available() -> RequestFuture[Any]:
        return RequestFuture.failure(NoAvailableBrokersException())

    @staticmethod
    def stale_metadata() -> RequestFuture[Any]:
        return RequestFuture.failure(StaleMetadataException())

    def __repr__(self) -> str:
        if not self.is_done():
            return "RequestFuture(incomplete)"
        return (
            f"RequestFuture(failed: {self._result!r})"
            if self.failed()
            else f"RequestFuture(value: {self._result!r})"
        )


# Kafka writes these two as anonymous inner classes inside compose and chain.


class _ComposeListener(RequestFutureListener[T], Generic[T, S]):
    def __init__(self, adapter: RequestFutureAdapter[T, S], adapted: RequestFuture[S]) -> None:
        self.adapter = adapter
        self.adapted = adapted

    def on_success(self, value: T) -> None:
        self.adapter.on_success(value, self.adapted)

    def on_failure(self, e: Exception) -> None:
        self.adapter.on_failure(e, self.adapted)


class _ChainListener(RequestFutureListener[T]):
    def __init__(self, future: RequestFuture[T]) -> None:
        self.future = future

    def on_success(self, value: T) -> None:
        self.future.complete(value)

    def on_failure(self, e: Exception) -> None:
        self.future.raise_(e)
