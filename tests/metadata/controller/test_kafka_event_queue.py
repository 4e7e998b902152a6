"""KafkaEventQueue and the deterministic queue that shares its choices, as Kafka 3.3's
KafkaEventQueueTest: order, prepend, deferred events and their tags, deadlines, shutdown."""

import threading
from concurrent.futures import Future

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.time import SYSTEM, MockTime
from kafka_lite.queue.event_queue import (
    EarliestDeadlineFunction,
    Event,
    FunctionEvent,
    RejectedExecutionException,
)
from kafka_lite.queue.kafka_event_queue import KafkaEventQueue
from kafka_lite.testing.deterministic_event_queue import DeterministicEventQueue

pytestmark = pytest.mark.unit

MS = 1_000_000


class FutureEvent(Event):
    def __init__(self, future, fn):
        self.future = future
        self.fn = fn

    def run(self):
        self.future.set_result(self.fn())

    def handle_exception(self, exc):
        self.future.set_exception(exc)


def test_events_run_in_order_on_the_thread():
    queue = KafkaEventQueue(SYSTEM, "test")
    seen = []
    futures = []
    for i in range(5):
        f = Future()
        futures.append(f)
        queue.append(FutureEvent(f, lambda i=i: seen.append((i, threading.current_thread().name)) or i))
    assert [f.result(timeout=5) for f in futures] == [0, 1, 2, 3, 4]
    assert [i for i, _ in seen] == [0, 1, 2, 3, 4]
    assert {name for _, name in seen} == {"testEventHandler"}
    queue.close()


def test_a_failing_event_is_told_and_the_thread_goes_on():
    queue = KafkaEventQueue(SYSTEM, "test")
    bad, good = Future(), Future()
    queue.append(FutureEvent(bad, lambda: 1 / 0))
    queue.append(FutureEvent(good, lambda: "ok"))
    with pytest.raises(ZeroDivisionError):
        bad.result(timeout=5)
    assert good.result(timeout=5) == "ok"
    queue.close()


def test_closed_queue_rejects_events():
    queue = KafkaEventQueue(SYSTEM, "test")
    queue.close()
    f = Future()
    queue.append(FutureEvent(f, lambda: 1))
    with pytest.raises(RejectedExecutionException):
        f.result(timeout=5)


def test_deferred_event_runs_on_mock_time_in_the_thread():
    time = MockTime()
    queue = KafkaEventQueue(time, "test")
    f = Future()
    queue.schedule_deferred("tag", time.nanoseconds() + 100 * MS, FutureEvent(f, lambda: "ran"))
    done = Future()
    queue.append(FutureEvent(done, lambda: f.done()))
    assert done.result(timeout=5) is False
    time.sleep(100)
    assert f.result(timeout=5) == "ran"
    queue.close()


def test_prepend_runs_first_and_deferred_respects_deadlines():
    time = MockTime()
    queue = DeterministicEventQueue(time)
    seen = []
    queue.append(FunctionEvent(lambda: seen.append("a")))
    queue.prepend(FunctionEvent(lambda: seen.append("p")))
    queue.schedule_deferred("d", time.nanoseconds() + 10 * MS, FunctionEvent(lambda: seen.append("d")))
    assert queue.run_pending() == 2
    assert seen == ["p", "a"]
    time.sleep(9)
    assert queue.run_pending() == 0
    time.sleep(1)
    assert queue.run_pending() == 1
    assert seen == ["p", "a", "d"]


def test_scheduling_a_tag_again_replaces_it_and_cancel_removes_it():
    time = MockTime()
    queue = DeterministicEventQueue(time)
    seen = []
    now = time.nanoseconds()
    queue.schedule_deferred("t", now + 10 * MS, FunctionEvent(lambda: seen.append(1)))
    queue.schedule_deferred("t", now + 20 * MS, FunctionEvent(lambda: seen.append(2)))
    assert queue.size() == 1
    time.sleep(10)
    assert queue.run_pending() == 0  # the replacement is due at 20 ms
    time.sleep(10)
    queue.run_pending()
    assert seen == [2]
    queue.schedule_deferred("t", time.nanoseconds() + 5 * MS, FunctionEvent(lambda: seen.append(3)))
    # The earliest-deadline function keeps the earlier of the old and new deadlines.
    queue.schedule_deferred(
        "t", EarliestDeadlineFunction(time.nanoseconds() + 50 * MS), FunctionEvent(lambda: seen.append(4))
    )
    assert queue.next_deadline_ns() == time.nanoseconds() + 5 * MS
    queue.cancel_deferred("t")
    time.sleep(100)
    queue.run_pending()
    assert seen == [2]


def test_an_event_past_its_deadline_times_out():
    time = MockTime()
    queue = DeterministicEventQueue(time)
    f = Future()
    queue.append_with_deadline(time.nanoseconds() + 5 * MS, FutureEvent(f, lambda: 1))
    time.sleep(5)
    queue.run_pending()
    with pytest.raises(Errors.REQUEST_TIMED_OUT.exception_class):
        f.result(timeout=0)


def test_shutdown_runs_what_is_queued_times_out_what_is_deferred_then_cleans_up():
    time = MockTime()
    queue = DeterministicEventQueue(time)
    queued, deferred, cleanup = Future(), Future(), []
    queue.append(FutureEvent(queued, lambda: "q"))
    queue.schedule_deferred("later", time.nanoseconds() + 60_000 * MS, FutureEvent(deferred, lambda: "d"))
    queue.begin_shutdown("test", FunctionEvent(lambda: cleanup.append(True)), timeout_ms=0)
    rejected = Future()
    queue.append(FutureEvent(rejected, lambda: 1))
    queue.run_pending()
    assert queued.result(timeout=0) == "q"
    with pytest.raises(Errors.REQUEST_TIMED_OUT.exception_class):
        deferred.result(timeout=0)
    with pytest.raises(RejectedExecutionException):
        rejected.result(timeout=0)
    assert cleanup == [True]
