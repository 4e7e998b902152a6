"""The timing wheel under MockTime: buckets, overflow wheels made on demand, tasks cascading down,
and the property that every task fires once, never early, at the first tick that reaches it."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.time import SYSTEM, MockTime
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.locks import AtomicInteger
from kafka_lite.utils.timer import TimerTask
from kafka_lite.utils.timer.delay_queue import DelayQueue
from kafka_lite.utils.timer.timer_task_list import TimerTaskEntry, TimerTaskList
from kafka_lite.utils.timer.timing_wheel import TimingWheel

pytestmark = pytest.mark.unit

SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE


class Recorded(TimerTask):
    """Records each run: its id and the clock at that moment."""

    def __init__(self, delay_ms: int, task_id: int, runs: list, time: MockTime) -> None:
        super().__init__(delay_ms)
        self.task_id, self.runs, self.time = task_id, runs, time

    def run(self) -> None:
        self.runs.append((self.task_id, self.time.hi_res_clock_ms()))


def wheels(timer: MockTimer) -> list[TimingWheel]:
    """The timer's wheels, finest first."""
    found, wheel = [], timer.timing_wheel
    while wheel is not None:
        found.append(wheel)
        wheel = wheel.overflow_wheel
    return found


def level_of(timer: MockTimer, task: TimerTask) -> int | None:
    """Which wheel (0 = finest) holds ``task``'s entry, or None if no bucket holds it."""
    entry = task.get_timer_task_entry()
    for level, wheel in enumerate(wheels(timer)):
        if entry is not None and any(entry.list is bucket for bucket in wheel.buckets):
            return level
    return None


# -- the bucket ------------------------------------------------------------------------------------------------


class Noop(TimerTask):
    def run(self) -> None:
        pass


def test_a_bucket_is_queued_again_only_when_its_expiration_changes():
    bucket = TimerTaskList(AtomicInteger(), MockTime())
    assert bucket.set_expiration(40), "a fresh bucket's expiration changes"
    assert not bucket.set_expiration(40), "a second task in the same turn does not queue it again"
    bucket.flush(lambda entry: None)
    assert bucket.get_expiration() == -1
    assert bucket.set_expiration(40 + 20), "reused for the next turn of the wheel"


def test_flush_hands_over_every_entry_and_empties_the_bucket():
    counter = AtomicInteger()
    bucket = TimerTaskList(counter, MockTime())
    entries = [TimerTaskEntry(Noop(5), 5) for _ in range(3)]
    for entry in entries:
        bucket.add(entry)
    assert counter.get() == 3
    flushed = []
    bucket.flush(flushed.append)
    assert flushed == entries, "in the order they were added"
    assert counter.get() == 0 and all(entry.list is None for entry in entries)
    seen = []
    bucket.foreach(seen.append)
    assert seen == []


def test_an_entry_moved_to_another_bucket_leaves_the_first():
    counter = AtomicInteger()
    first, second = TimerTaskList(counter, MockTime()), TimerTaskList(counter, MockTime())
    entry = TimerTaskEntry(Noop(5), 5)
    first.add(entry)
    second.add(entry)
    assert entry.list is second and counter.get() == 1
    in_first = []
    first.foreach(in_first.append)
    assert in_first == []


def test_a_task_added_again_drops_its_older_entry():
    counter = AtomicInteger()
    bucket = TimerTaskList(counter, MockTime())
    task = Noop(5)
    old = TimerTaskEntry(task, 5)
    bucket.add(old)
    new = TimerTaskEntry(task, 9)
    assert old.cancelled and not new.cancelled
    assert old.list is None and counter.get() == 0, "a task is in the timer at most once"


def test_a_bucket_is_delayed_until_its_expiration_on_its_clock():
    time = MockTime(start_ns=0)
    bucket = TimerTaskList(AtomicInteger(), time)
    bucket.set_expiration(30)
    assert bucket.get_delay() == 30
    time.advance(31)
    assert bucket.get_delay() == 0


# -- one wheel and its overflow wheels -------------------------------------------------------------------------------


def wheel(start_ms: int = 0) -> tuple[TimingWheel, DelayQueue]:
    queue = DelayQueue(MockTime())
    return TimingWheel(1, 20, start_ms, AtomicInteger(), queue, SYSTEM), queue


def test_a_task_within_the_interval_goes_to_the_bucket_of_its_tick():
    w, queue = wheel(start_ms=100)
    entry = TimerTaskEntry(Noop(7), 107)
    assert w.add(entry)
    assert entry.list is w.buckets[107 % 20] and w.buckets[107 % 20].get_expiration() == 107
    assert w.overflow_wheel is None, "no overflow wheel for a task within 20 ms"
    assert len(queue) == 1
    assert w.add(TimerTaskEntry(Noop(7), 107)) and len(queue) == 1, "the bucket is queued once per turn"


def test_overflow_wheels_are_made_only_when_a_task_needs_them():
    w, _ = wheel(start_ms=100)
    w.add(TimerTaskEntry(Noop(19), 119))
    assert w.overflow_wheel is None
    far = TimerTaskEntry(Noop(20), 120)
    assert w.add(far)
    second = w.overflow_wheel
    assert second is not None and (second.tick_ms, second.interval, second.current_time) == (20, 400, 100)
    assert far.list is second.buckets[(120 // 20) % 20]
    assert second.overflow_wheel is None
    w.add(TimerTaskEntry(Noop(500), 600))
    third = second.overflow_wheel
    assert third is not None and (third.tick_ms, third.interval) == (400, 8000)


def test_an_expired_or_cancelled_entry_is_refused():
    w, _ = wheel(start_ms=100)
    assert not w.add(TimerTaskEntry(Noop(0), 100)), "due within the current tick: the caller runs it"
    task = Noop(5)
    entry = TimerTaskEntry(task, 105)
    task.cancel()
    assert not w.add(entry), "cancelled: the caller drops it"


def test_advancing_the_clock_moves_the_overflow_wheels_by_their_own_ticks():
    w, _ = wheel(start_ms=0)
    w.add(TimerTaskEntry(Noop(9000), 9000))  # makes three overflow wheels
    w.advance_clock(7351)
    assert [x.current_time for x in (w, w.overflow_wheel, w.overflow_wheel.overflow_wheel)] == [
        7351,
        7340,
        7200,
    ]
    w.advance_clock(7351)  # same tick: nothing moves
    assert w.current_time == 7351


# -- the timer: cascading, cancelling, every task once ------------------------------------------------------------------


def test_a_task_cascades_down_from_the_overflow_wheels_and_runs_at_its_time():
    time = MockTime(start_ns=0)
    timer = MockTimer(time)
    runs: list = []
    task = Recorded(7351, 1, runs, time)
    timer.add(task)
    assert level_of(timer, task) == 2, "7,351 ms is beyond 400 ms: the 8 s wheel holds it"
    timer.advance_clock(7200 - 1)
    assert level_of(timer, task) == 2
    timer.advance_clock(1)  # 7,200: its 400 ms bucket expires, and the task moves down
    assert level_of(timer, task) == 1
    timer.advance_clock(7340 - 7200)
    assert level_of(timer, task) == 0, "at 7,340 its 20 ms bucket expires: down to the 1 ms wheel"
    timer.advance_clock(7350 - 7340)
    assert runs == [] and timer.size() == 1
    timer.advance_clock(1)
    assert runs == [(1, 7351)] and timer.size() == 0


def test_a_cancelled_task_never_fires_wherever_it_is():
    time = MockTime(start_ns=0)
    timer = MockTimer(time)
    runs: list = []
    near, far, moved = (Recorded(d, d, runs, time) for d in (10, HOUR, 7351))
    for task in (near, far, moved):
        timer.add(task)
    near.cancel()
    far.cancel()
    timer.advance_clock(7340)  # ``moved`` has cascaded down to the finest wheel
    assert level_of(timer, moved) == 0
    moved.cancel()
    assert timer.size() == 0
    timer.advance_clock(2 * HOUR)
    assert runs == []


def test_tasks_already_due_run_when_added():
    time = MockTime()
    timer = MockTimer(time)
    runs: list = []
    for delay in (-5, -1, 0):
        timer.add(Recorded(delay, delay, runs, time))
    assert sorted(task_id for task_id, _ in runs) == [-5, -1, 0]


def test_a_task_may_add_another_when_it_runs():
    """Due tasks run after the timer has released its lock, so a task can use the timer."""
    time = MockTime(start_ns=0)
    timer = MockTimer(time)
    runs: list = []

    class Chained(TimerTask):
        def run(self) -> None:
            timer.add(Recorded(5, 2, runs, time))

    timer.add(Chained(10))
    stepping = threading.Thread(target=timer.advance_clock, args=(10,), daemon=True)
    stepping.start()
    stepping.join(timeout=10)
    assert not stepping.is_alive(), "advance_clock deadlocked running a task that adds to the timer"
    timer.advance_clock(5)
    assert runs == [(2, 15)]


Add = st.tuples(st.just("add"), st.one_of(st.integers(-3, 60), st.integers(0, 3 * HOUR)))
Advance = st.tuples(st.just("advance"), st.one_of(st.integers(0, 30), st.integers(0, 20 * MINUTE)))
# Land exactly on the next deadline, or one ms before it: the steps where "early" or "late" shows.
ToNextDeadline = st.tuples(st.just("to_next_deadline"), st.sampled_from([-1, 0]))
Cancel = st.tuples(st.just("cancel"), st.integers(0, 10**6))
Actions = st.lists(st.one_of(Add, Add, Advance, ToNextDeadline, ToNextDeadline, Cancel), max_size=120)


class Run:
    """A MockTimer driven through a list of actions, recording every run and the call it ran in."""

    def __init__(self, tick_ms: int, wheel_size: int, start_ms: int) -> None:
        self.time = MockTime(start_ns=start_ms * 1_000_000)
        self.timer = MockTimer(self.time, tick_ms=tick_ms, wheel_size=wheel_size)
        self.runs: list[tuple[int, int]] = []  # (task id, clock when it ran)
        self.tasks: list[Recorded] = []
        self.deadline: dict[int, int] = {}
        self.cancelled: set[int] = set()
        # task id -> the call it ran in: ("add", id of the task added) or ("advance", clock before)
        self.ran_in: dict[int, tuple[str, int]] = {}

    def now(self) -> int:
        return self.time.hi_res_clock_ms()

    def pending(self) -> list[int]:
        return [i for i in self.deadline if i not in self.ran_in and i not in self.cancelled]

    def _call(self, call: tuple[str, int], f) -> None:
        ran_before = len(self.runs)
        f()
        for task_id, _ in self.runs[ran_before:]:
            self.ran_in.setdefault(task_id, call)

    def advance(self, ms: int) -> None:
        self._call(("advance", self.now()), lambda: self.timer.advance_clock(ms))

    def apply(self, action: tuple[str, int]) -> None:
        kind, value = action
        if kind == "add":
            task = Recorded(value, len(self.tasks), self.runs, self.time)
            self.deadline[task.task_id] = self.now() + value
            self.tasks.append(task)
            self._call(("add", task.task_id), lambda: self.timer.add(task))
        elif kind == "advance":
            self.advance(value)
        elif kind == "to_next_deadline":
            later = [self.deadline[i] for i in self.pending() if self.deadline[i] > self.now()]
            if later and min(later) + value > self.now():
                self.advance(min(later) + value - self.now())
        elif kind == "cancel" and self.tasks:
            task = self.tasks[value % len(self.tasks)]
            if task.task_id in self.pending():
                task.cancel()
                self.cancelled.add(task.task_id)

    def finish(self) -> None:
        """Step from deadline to deadline until every task not cancelled has run."""
        for _ in range(len(self.tasks) + 1):
            pending = self.pending()
            if not pending:
                return
            self.advance(max(min(self.deadline[i] for i in pending) - self.now(), 0))

    def check_each_ran_once(self) -> None:
        fired = [task_id for task_id, _ in self.runs]
        assert len(fired) == len(set(fired)), f"a task fired twice: {sorted(fired)}"
        assert not set(fired) & self.cancelled, "a cancelled task fired"
        assert set(fired) == set(self.deadline) - self.cancelled, "a task never fired"
        assert self.timer.size() == 0

    def check_never_late(self, task_id: int, fired_at: int) -> None:
        """It ran in the first call that reached its deadline: the step that crossed it, or its own
        add (a task due when added). Anything later means a call reached the deadline and missed it."""
        deadline = self.deadline[task_id]
        kind, value = self.ran_in[task_id]
        if kind == "add":
            assert value == task_id, (
                f"task {task_id} (deadline {deadline}) ran late, at {fired_at}, in another add"
            )
        else:
            assert value < deadline, (
                f"task {task_id} (deadline {deadline}) ran late: at {fired_at}, though the clock "
                f"was already at {value} before that step"
            )


@pytest.mark.timeout(
    120, method="thread"
)  # a broken wheel can loop forever re-filing a task into the bucket it flushes
@settings(max_examples=200, deadline=None)
@given(actions=Actions, wheel_size=st.integers(2, 20), start_ms=st.integers(0, 10**9))
def test_every_task_fires_once_never_early_at_the_first_tick_reaching_it(actions, wheel_size, start_ms):
    """Kafka's 1 ms tick, wheel sizes from 2 (many overflow levels) to Kafka's 20, delays up to
    three hours, tasks cancelled at random, the clock moved in random steps and onto deadlines
    exactly and one ms before them."""
    run = Run(tick_ms=1, wheel_size=wheel_size, start_ms=start_ms)
    for action in actions:
        run.apply(action)
    run.finish()
    run.check_each_ran_once()
    for task_id, fired_at in run.runs:
        deadline = run.deadline[task_id]
        assert fired_at >= deadline, f"task {task_id} fired at {fired_at}, before its deadline {deadline}"
        run.check_never_late(task_id, fired_at)


@pytest.mark.timeout(120, method="thread")
@settings(max_examples=100, deadline=None)
@given(
    actions=Actions, tick_ms=st.integers(2, 50), wheel_size=st.integers(2, 20), start_ms=st.integers(0, 10**9)
)
def test_with_a_coarse_tick_a_task_runs_less_than_a_tick_early_and_never_late(
    actions, tick_ms, wheel_size, start_ms
):
    """A task runs when its tick begins: up to ``tick_ms - 1`` early (why Kafka ticks every 1 ms)."""
    run = Run(tick_ms=tick_ms, wheel_size=wheel_size, start_ms=start_ms)
    for action in actions:
        run.apply(action)
    run.finish()
    run.check_each_ran_once()
    for task_id, fired_at in run.runs:
        deadline = run.deadline[task_id]
        assert fired_at > deadline - tick_ms, (
            f"task {task_id} ran a whole tick early: at {fired_at} for {deadline}"
        )
        run.check_never_late(task_id, fired_at)
