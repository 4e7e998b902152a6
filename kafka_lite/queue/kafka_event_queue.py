"""The event queue on one thread: what runs every quorum controller event.

Mirrors: org.apache.kafka.queue.KafkaEventQueue (server-common/src/main/java/org/apache/kafka/queue/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the ready events are a deque and the deadlines a dict searched for its minimum, where Kafka
         keeps an intrusive linked list and a TreeMap; a controller has a handful of deadlines.

The queue's state and the choice of what to do next (``EventHandler.next_action``) are separate from
the thread that acts on it, so kafka_lite/testing/deterministic_event_queue.py runs the very same
choices on the caller's thread under a MockTime. The choice, in Kafka's order, at time ``now``:

1. the earliest deadline, if it has passed: a deferred event due runs; an ordinary event whose
   deadline passed before it ran is timed out;
2. the queue is closing and its closing time has passed: time out the earliest deadline's event;
3. the first ready event runs;
4. nothing is ready: stop if closing and nothing is deferred, else wait until the earliest deadline
   (or the closing time), or until an enqueue wakes the thread.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass

from kafka_lite.common.errors import Errors, IllegalArgumentException
from kafka_lite.common.time import Time
from kafka_lite.queue.event_queue import (
    DeadlineFunction,
    Event,
    EventInsertionType,
    EventQueue,
    FunctionEvent,
    RejectedExecutionException,
)

log = logging.getLogger(__name__)

NEVER = 2**63 - 1


class EventContext:
    def __init__(self, event: Event, insertion_type: EventInsertionType, tag: str | None) -> None:
        self.event = event
        self.insertion_type = insertion_type
        self.tag = tag
        self.deadline_ns: int | None = None

    def run(self) -> None:
        try:
            self.event.run()
        except Exception as exc:  # the event's own failure is its to report, not the thread's
            try:
                self.event.handle_exception(exc)
            except Exception:
                log.exception("Unexpected exception in handle_exception")

    def complete_with_timeout(self) -> None:
        self.complete_with_exception(Errors.REQUEST_TIMED_OUT.exception())

    def complete_with_exception(self, exc: BaseException) -> None:
        self.event.handle_exception(exc)


@dataclass(frozen=True)
class Action:
    """What the handler should do next: ``run`` or ``timeout`` an event, ``wait`` (up to
    ``wait_ns``, None for no limit) or ``exit``."""

    kind: str
    context: EventContext | None = None
    wait_ns: int | None = None


class EventHandler:
    """The queue's state; every method is called with the queue's lock held."""

    def __init__(self) -> None:
        self.ready: deque[EventContext] = deque()
        self.deadline_map: dict[int, EventContext] = {}
        self.tag_to_event_context: dict[str, EventContext] = {}
        self.closing_time_ns = NEVER

    def remove(self, context: EventContext) -> None:
        if context in self.ready:
            self.ready.remove(context)
        if context.deadline_ns is not None:
            del self.deadline_map[context.deadline_ns]
            context.deadline_ns = None
        if context.tag is not None:
            if self.tag_to_event_context.get(context.tag) is context:
                del self.tag_to_event_context[context.tag]
            context.tag = None

    # --8<-- [start:next_action]
    def next_action(self, now_ns: int) -> Action:
        if self.deadline_map:
            deadline_ns = min(self.deadline_map)
            context = self.deadline_map[deadline_ns]
            if deadline_ns <= now_ns:
                self.remove(context)
                if context.insertion_type == EventInsertionType.DEFERRED:
                    return Action("run", context)  # a deferred event's deadline is when it runs
                return Action("timeout", context)  # anything else's is when it is too late
            if self.closing_time_ns <= now_ns:
                self.remove(context)
                return Action("timeout", context)
            await_ns: int | None = deadline_ns - now_ns
        else:
            await_ns = None
        if self.ready:
            context = self.ready[0]
            self.remove(context)
            return Action("run", context)
        if self.closing_time_ns != NEVER:
            if not self.deadline_map:
                return Action("exit")
            until_closing = self.closing_time_ns - now_ns
            await_ns = until_closing if await_ns is None else min(await_ns, until_closing)
        return Action("wait", wait_ns=await_ns)

    # --8<-- [end:next_action]

    def enqueue(self, context: EventContext, deadline_function: DeadlineFunction) -> Exception | None:
        """Add ``context``; the exception to complete it with if it cannot be added."""
        if self.closing_time_ns != NEVER:
            return RejectedExecutionException("The event queue is shutting down")
        existing_deadline_ns = None
        if context.tag is not None:
            to_remove = self.tag_to_event_context.get(context.tag)
            self.tag_to_event_context[context.tag] = context
            if to_remove is not None:
                existing_deadline_ns = to_remove.deadline_ns
                to_remove.tag = None  # so removing it leaves the new event's tag in place
                self.remove(to_remove)
        deadline_ns = deadline_function(existing_deadline_ns)
        if context.insertion_type == EventInsertionType.APPEND:
            self.ready.append(context)
        elif context.insertion_type == EventInsertionType.PREPEND:
            self.ready.appendleft(context)
        elif deadline_ns is None:
            return RuntimeError("You must specify a deadline for deferred events.")
        if deadline_ns is not None:
            # Two events due at the same nanosecond: the later one takes the next free nanosecond,
            # so the map keeps one event per deadline and runs them in the order they came.
            while deadline_ns in self.deadline_map:
                deadline_ns += 1
            self.deadline_map[deadline_ns] = context
            context.deadline_ns = deadline_ns
        return None

    def cancel_deferred(self, tag: str) -> None:
        context = self.tag_to_event_context.get(tag)
        if context is not None:
            self.remove(context)

    def size(self) -> int:
        deferred = sum(
            1 for c in self.deadline_map.values() if c.insertion_type == EventInsertionType.DEFERRED
        )
        return len(self.ready) + deferred


class KafkaEventQueue(EventQueue):
    def __init__(self, time: Time, thread_name_prefix: str = "", start: bool = True) -> None:
        self._time = time
        self._lock = threading.Condition()
        self._handler = EventHandler()
        self._cleanup_event: Event | None = None
        self._signalled = False
        self._thread = threading.Thread(
            target=self._run, name=f"{thread_name_prefix}EventHandler", daemon=True
        )
        if start:
            self._thread.start()

    # -- the thread ------------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._handle_events()
            if self._cleanup_event is not None:
                self._cleanup_event.run()
        except Exception:
            log.warning("event handler thread exiting with exception", exc_info=True)

    def _handle_events(self) -> None:
        while True:
            with self._lock:
                action = self._handler.next_action(self._time.nanoseconds())
                if action.kind == "exit":
                    return
                if action.kind == "wait":
                    self._await(action.wait_ns)
                    continue
            # The event runs outside the lock, so it can enqueue more events.
            if action.kind == "run":
                action.context.run()
            else:
                action.context.complete_with_timeout()

    def _await(self, wait_ns: int | None) -> None:
        self._signalled = False
        timeout_ms = NEVER if wait_ns is None else max(1, -(-wait_ns // 1_000_000))
        self._time.wait_for(self._lock, lambda: self._signalled, timeout_ms)

    def _signal(self) -> None:
        self._signalled = True
        self._lock.notify_all()

    # -- the interface ---------------------------------------------------------------------------------------

    def enqueue(
        self, insertion_type: EventInsertionType, tag: str | None, deadline_ns: DeadlineFunction, event: Event
    ) -> None:
        context = EventContext(event, insertion_type, tag)
        with self._lock:
            exc = self._handler.enqueue(context, deadline_ns)
            self._signal()
        if exc is not None:
            context.complete_with_exception(exc)

    def cancel_deferred(self, tag: str) -> None:
        with self._lock:
            self._handler.cancel_deferred(tag)

    def begin_shutdown(self, source: str, cleanup_event: Event | None = None, timeout_ms: int = 0) -> None:
        if timeout_ms < 0:
            raise IllegalArgumentException("beginShutdown must be called with a non-negative timeout.")
        with self._lock:
            if self._cleanup_event is not None:
                log.debug("%s: Event queue is already shutting down.", source)
                return
            log.info("%s: shutting down event queue.", source)
            self._cleanup_event = cleanup_event if cleanup_event is not None else FunctionEvent(lambda: None)
            closing_time_ns = self._time.nanoseconds() + timeout_ms * 1_000_000
            self._handler.closing_time_ns = min(self._handler.closing_time_ns, closing_time_ns)
            self._signal()

    def size(self) -> int:
        with self._lock:
            return self._handler.size()

    def wakeup(self) -> None:
        with self._lock:
            self._signal()

    def close(self) -> None:
        self.begin_shutdown("KafkaEventQueue#close")
        if self._thread.is_alive():
            self._thread.join()
        log.info("closed event queue.")
