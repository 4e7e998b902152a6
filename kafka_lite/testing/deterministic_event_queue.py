"""An event queue that runs its events on the caller's thread, when told: for tests and notebooks.

No Kafka twin: Kafka's QuorumControllerTest runs the real KafkaEventQueue and waits on futures. This
queue keeps KafkaEventQueue's state and its choice of what to do next (``EventHandler.next_action``,
the same code) and drops only the thread: ``run_pending()`` acts on the choices until there is
nothing to do at the current MockTime, so a test or a notebook cell decides exactly when the
controller runs, and a deferred event (the fencing check) runs only once the MockTime has passed its
deadline.
"""

from __future__ import annotations

from kafka_lite.common.time import Time
from kafka_lite.queue.event_queue import DeadlineFunction, Event, EventInsertionType, EventQueue
from kafka_lite.queue.kafka_event_queue import NEVER, EventContext, EventHandler


class DeterministicEventQueue(EventQueue):
    def __init__(self, time: Time) -> None:
        self._time = time
        self._handler = EventHandler()
        self._cleanup_event: Event | None = None
        self._closed = False

    def enqueue(
        self, insertion_type: EventInsertionType, tag: str | None, deadline_ns: DeadlineFunction, event: Event
    ) -> None:
        context = EventContext(event, insertion_type, tag)
        exc = self._handler.enqueue(context, deadline_ns)
        if exc is not None:
            context.complete_with_exception(exc)

    def run_pending(self) -> int:
        """Run every event that can run now (including those the events enqueue); how many ran or
        timed out. Stops when the queue waits for a later time, or has shut down."""
        done = 0
        while not self._closed:
            action = self._handler.next_action(self._time.nanoseconds())
            if action.kind == "wait":
                break
            if action.kind == "exit":
                self._closed = True
                if self._cleanup_event is not None:
                    self._cleanup_event.run()
                break
            if action.kind == "run":
                action.context.run()
            else:
                action.context.complete_with_timeout()
            done += 1
        return done

    def next_deadline_ns(self) -> int | None:
        """When the earliest deferred or timed event is due, for a test that advances to it."""
        return min(self._handler.deadline_map, default=None)

    def deferred_tags(self) -> list[str]:
        return sorted(self._handler.tag_to_event_context)

    def cancel_deferred(self, tag: str) -> None:
        self._handler.cancel_deferred(tag)

    def begin_shutdown(self, source: str, cleanup_event: Event | None = None, timeout_ms: int = 0) -> None:
        if self._handler.closing_time_ns != NEVER:
            return
        self._cleanup_event = cleanup_event
        self._handler.closing_time_ns = self._time.nanoseconds() + timeout_ms * 1_000_000

    def size(self) -> int:
        return self._handler.size()

    def close(self) -> None:
        self.begin_shutdown("DeterministicEventQueue#close")
        self.run_pending()
