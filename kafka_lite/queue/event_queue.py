"""The event queue's interface: what the quorum controller needs of the thread that runs it.

Mirrors: org.apache.kafka.queue.EventQueue (server-common/src/main/java/org/apache/kafka/queue/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a deferred event's deadline is a number (monotonic nanoseconds) or a function of the
         deadline it replaces, as Kafka's ``Function<OptionalLong, OptionalLong>``.

The quorum controller has no locks: every request, every Raft callback and every timer becomes an
*event*, and one thread runs the events one at a time. An event is appended (the usual case),
prepended (to run before everything waiting: only the controller's activation uses it), or deferred
until a deadline under a tag, so that scheduling the same tag again replaces the earlier one (the
periodic fencing check is one tag). An event that cannot run (the queue is closing, its deadline
passed) is told so through ``handle_exception``.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable

from kafka_lite.common.errors import KafkaException

# A deadline: nanoseconds on the queue's Time's monotonic clock, or None for none.
DeadlineFunction = Callable[[int | None], int | None]


class RejectedExecutionException(KafkaException):
    """The queue is shutting down and takes no more events (Java's RejectedExecutionException)."""


class EventInsertionType(enum.Enum):
    APPEND = "append"
    PREPEND = "prepend"
    DEFERRED = "deferred"


class Event(ABC):
    @abstractmethod
    def run(self) -> None:
        """Run on the queue's thread."""

    def handle_exception(self, exc: BaseException) -> None:  # noqa: B027 - optional, as Kafka's default
        """``run`` raised, the event timed out, or the queue rejected it."""


class FunctionEvent(Event):
    """An event that calls a function (Kafka's EventQueue.FunctionEvent)."""

    def __init__(self, run: Callable[[], None]) -> None:
        self._run = run

    def run(self) -> None:
        self._run()


class EarliestDeadlineFunction:
    """Keep the earlier of the new deadline and the one it replaces, so rescheduling a periodic
    check for later never postpones one already due sooner."""

    def __init__(self, new_deadline_ns: int) -> None:
        self._new_deadline_ns = new_deadline_ns

    def __call__(self, prev_deadline_ns: int | None) -> int:
        if prev_deadline_ns is None:
            return self._new_deadline_ns
        return min(prev_deadline_ns, self._new_deadline_ns)


class EventQueue(ABC):
    @abstractmethod
    def enqueue(
        self, insertion_type: EventInsertionType, tag: str | None, deadline_ns: DeadlineFunction, event: Event
    ) -> None: ...

    def append(self, event: Event) -> None:
        self.enqueue(EventInsertionType.APPEND, None, lambda prev: None, event)

    def append_with_deadline(self, deadline_ns: int, event: Event) -> None:
        """Append, and time the event out (``handle_exception(TimeoutException)``) if it has not
        started by ``deadline_ns``: a request whose client has given up is not worth running."""
        self.enqueue(EventInsertionType.APPEND, None, lambda prev: deadline_ns, event)

    def prepend(self, event: Event) -> None:
        self.enqueue(EventInsertionType.PREPEND, None, lambda prev: None, event)

    def schedule_deferred(self, tag: str, deadline_ns: int | DeadlineFunction, event: Event) -> None:
        """Run ``event`` once the monotonic clock reaches the deadline, replacing any event waiting
        under ``tag``."""
        function = deadline_ns if callable(deadline_ns) else (lambda prev, d=deadline_ns: d)
        self.enqueue(EventInsertionType.DEFERRED, tag, function, event)

    @abstractmethod
    def cancel_deferred(self, tag: str) -> None: ...

    @abstractmethod
    def begin_shutdown(self, source: str, cleanup_event: Event | None = None, timeout_ms: int = 0) -> None:
        """Take no more events; run what is queued, time out what is deferred once ``timeout_ms``
        passes, then run ``cleanup_event`` and stop."""

    @abstractmethod
    def size(self) -> int: ...

    def is_empty(self) -> bool:
        return self.size() == 0

    @abstractmethod
    def close(self) -> None: ...
