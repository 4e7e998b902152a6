"""SystemTimer with its delay queue and task executor: under MockTime from a second thread (the
reaper's place), and the refusals of bad input."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.time import SYSTEM, MockTime
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.locks import AtomicInteger
from kafka_lite.utils.timer import SystemTimer, TimerTask
from kafka_lite.utils.timer.delay_queue import DelayQueue
from kafka_lite.utils.timer.timing_wheel import TimingWheel

pytestmark = pytest.mark.unit

DEADLINE_S = 10  # real seconds a test waits for a thread before it fails


class Latch(TimerTask):
    """Sets ``ran`` when run (on the timer's executor thread)."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.ran = threading.Event()

    def run(self) -> None:
        self.ran.set()


class Stepping:
    """``advance_clock(timeout_ms)`` on its own thread, as the purgatory's reaper calls it."""

    def __init__(self, timer: SystemTimer, timeout_ms: int) -> None:
        self.result: list[bool] = []
        self.thread = threading.Thread(
            target=lambda: self.result.append(timer.advance_clock(timeout_ms)), daemon=True
        )
        self.thread.start()

    def returned(self) -> bool | None:
        self.thread.join(timeout=DEADLINE_S)
        assert not self.thread.is_alive(), f"advance_clock did not return within {DEADLINE_S} s"
        return self.result[0]


@pytest.fixture
def time():
    return MockTime(start_ns=0)


@pytest.fixture
def timer(time):
    t = SystemTimer("test", time=time)
    yield t
    t.shutdown()


def test_advance_clock_waits_for_the_earliest_bucket_on_mock_time(time, timer):
    task = Latch(100)
    timer.add(task)
    stepping = Stepping(timer, 1000)
    assert not task.ran.wait(0.2), "ran before mock time reached its deadline"
    time.advance(99)
    assert not task.ran.wait(0.2)
    time.advance(1)
    assert stepping.returned() is True
    assert task.ran.wait(DEADLINE_S) and timer.size() == 0


def test_advance_clock_gives_up_after_its_timeout(time, timer):
    stepping = Stepping(timer, 500)
    time.advance(500)
    assert stepping.returned() is False


def test_a_bucket_offered_during_the_wait_wakes_it(time, timer):
    """The reaper waits for 200 ms at a time; a task due sooner, added meanwhile, must not wait
    for the end of that poll."""
    far = Latch(10_000)
    timer.add(far)
    stepping = Stepping(timer, 60_000)
    near = Latch(5)
    timer.add(near)
    time.advance(5)
    assert stepping.returned() is True and near.ran.wait(DEADLINE_S)
    assert not far.ran.is_set()


def test_already_expired_tasks_run_at_once_on_the_executor(timer):
    tasks = [Latch(delay) for delay in range(-5, 1)]
    for task in tasks:
        timer.add(task)
    assert all(task.ran.wait(DEADLINE_S) for task in tasks)


def test_cancelled_tasks_are_dropped_when_their_bucket_expires(time, timer):
    kept, dropped = Latch(30), Latch(30)
    timer.add(kept)
    timer.add(dropped)
    dropped.cancel()
    assert timer.size() == 1
    stepping = Stepping(timer, 1000)
    time.advance(30)
    assert stepping.returned() is True and kept.ran.wait(DEADLINE_S)
    assert not dropped.ran.is_set()


def test_shutdown_wakes_a_waiting_advance_clock(timer):
    stepping = Stepping(timer, 10**9)  # mock time never moves: only shutdown can end the wait
    timer.shutdown()
    assert stepping.returned() is False


def test_the_wheels_order_tasks_like_kafkas_timer_test(time, timer):
    """Kafka's TimerTest.testTaskExpiration, on a 1 ms tick with 3 slots (overflow wheels up to 500 ms)."""
    order: list[int] = []
    lock = threading.Lock()

    class Ordered(Latch):
        def __init__(self, delay_ms: int) -> None:
            super().__init__(delay_ms)

        def run(self) -> None:
            with lock:
                order.append(self.delay_ms)
            super().run()

    small = SystemTimer("small", tick_ms=1, wheel_size=3, time=time)
    try:
        delays = [*range(0, 5), *range(10, 100), *range(10, 100), *range(100, 500)]
        tasks = [Ordered(d) for d in delays]
        for task in tasks:
            small.add(task)
        for _ in range(500):
            time.advance(1)
            while small.advance_clock(0):
                pass
        assert all(task.ran.wait(DEADLINE_S) for task in tasks)
        assert order == sorted(delays)
    finally:
        small.shutdown()


def test_bad_arguments_are_refused_with_what_is_wrong():
    with pytest.raises(TypeError, match="delay_ms must be an int"):
        Latch(1.5)
    with pytest.raises(ValueError, match="tick_ms must be"):
        TimingWheel(0, 20, 0, AtomicInteger(), DelayQueue(SYSTEM), SYSTEM)
    with pytest.raises(ValueError, match="wheel_size must be an int >= 2"):
        SystemTimer("bad", wheel_size=1)
    with pytest.raises(TypeError, match="needs a MockTime"):
        MockTimer(SYSTEM)
