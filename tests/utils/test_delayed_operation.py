"""The purgatory on the timing wheel: watching and completing (Kafka's DelayedOperationTest), expiring
through the timer, purging completed operations, and exactly-once completion under racing threads."""

from __future__ import annotations

import threading
import time as real_time

import pytest

from kafka_lite.common.time import SYSTEM, MockTime
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.delayed_operation import DelayedOperation, DelayedOperationPurgatory

pytestmark = pytest.mark.unit

DEADLINE_S = 10
ROUNDS = 40
OPERATIONS_PER_ROUND = 20
RACING_MODULES = ("delayed_operation.py", "timer_task.py")


def interleave_statements(frame, event, arg):
    """A trace function for the racing threads: on every line of the purgatory's and the timer
    task's code, give up the interpreter lock, so that another thread may run between any two
    statements. Without it one thread usually runs a whole ``force_complete`` before the next gets
    a turn, and a compare-and-set done as a separate check and set would pass by luck."""
    if not frame.f_code.co_filename.endswith(RACING_MODULES):
        return None

    def on_line(frame, event, arg):
        if event == "line":
            real_time.sleep(0)
        return on_line

    return on_line


class MockDelayedOperation(DelayedOperation):
    """Completes once ``completable`` is set; counts its completions and expirations."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.completable = False
        self.completions = 0
        self.expirations = 0
        self.expired = threading.Event()  # set after on_expiration, which runs after on_complete

    def try_complete(self) -> bool:
        return self.force_complete() if self.completable else False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1
        self.expired.set()


@pytest.fixture
def timer():
    return MockTimer(MockTime(start_ns=0))


@pytest.fixture
def purgatory(timer):
    p = DelayedOperationPurgatory("mock", timeout_timer=timer, reaper_enabled=False)
    yield p
    p.shutdown()


def test_request_satisfaction(purgatory):
    r1, r2 = MockDelayedOperation(100_000), MockDelayedOperation(100_000)
    assert purgatory.check_and_complete("test1") == 0, "with no waiting requests, nothing is satisfied"
    assert not purgatory.try_complete_else_watch(r1, ["test1"])
    assert purgatory.check_and_complete("test1") == 0
    assert not purgatory.try_complete_else_watch(r2, ["test2"])
    assert purgatory.check_and_complete("test2") == 0
    r1.completable = True
    assert purgatory.check_and_complete("test1") == 1
    assert purgatory.check_and_complete("test1") == 0
    r2.completable = True
    assert purgatory.check_and_complete("test2") == 1
    assert purgatory.check_and_complete("test2") == 0
    assert (r1.completions, r2.completions) == (1, 1)


def test_an_operation_that_can_complete_at_once_is_never_watched(purgatory):
    op = MockDelayedOperation(100_000)
    op.completable = True
    assert purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.watched() == 0 and purgatory.delayed() == 0 and op.completions == 1


def test_request_expiry_on_the_timer(timer, purgatory):
    r1, r2 = MockDelayedOperation(20), MockDelayedOperation(200_000)
    assert not purgatory.try_complete_else_watch(r1, ["test1"])
    assert not purgatory.try_complete_else_watch(r2, ["test2"])
    assert purgatory.delayed() == 2
    purgatory.advance_clock(19)
    assert not r1.is_completed
    purgatory.advance_clock(1)
    assert r1.is_completed and (r1.completions, r1.expirations) == (1, 1)
    assert not r2.is_completed and purgatory.delayed() == 1
    r1.completable = True
    assert purgatory.check_and_complete("test1") == 0, "an expired operation does not complete again"


def test_completing_an_operation_takes_it_off_the_timer(purgatory):
    """Kafka's testRequestPurge: completion cancels the timeout; checking a key drops its completed
    operations from that key's list only."""
    r1, r2, r3 = (MockDelayedOperation(100_000) for _ in range(3))
    purgatory.try_complete_else_watch(r1, ["test1"])
    purgatory.try_complete_else_watch(r2, ["test1", "test2"])
    purgatory.try_complete_else_watch(r3, ["test1", "test2", "test3"])
    assert purgatory.delayed() == 3 and purgatory.watched() == 6
    r2.completable = True
    r2.try_complete()
    assert purgatory.delayed() == 2
    r3.completable = True
    r3.try_complete()
    assert purgatory.delayed() == 1
    purgatory.check_and_complete("test1")
    assert purgatory.watched() == 4
    purgatory.check_and_complete("test2")
    assert purgatory.watched() == 2
    purgatory.check_and_complete("test3")
    assert purgatory.watched() == 1


def test_the_reaper_purges_completed_operations_from_every_watch_list(timer):
    purgatory = DelayedOperationPurgatory(
        "purge", timeout_timer=timer, purge_interval=3, reaper_enabled=False
    )
    ops = [MockDelayedOperation(100_000) for _ in range(5)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["a", "b"])
    for op in ops[:3]:
        op.completable = True
    assert purgatory.check_and_complete("a") == 3
    assert purgatory.watched() == 2 + 5, "completed through 'a', still listed under 'b'"
    purgatory.advance_clock(0)
    assert purgatory.watched() == 7, "3 completed, not more than the purge interval of 3: no purge yet"
    ops[3].completable = True
    purgatory.check_and_complete("a")
    purgatory.advance_clock(0)
    assert purgatory.watched() == 1 + 1, "4 completed > 3: every list is swept"
    ops[4].completable = True
    purgatory.check_and_complete("a")
    for _ in range(3):  # the estimate was reset to the 1 still delayed at the purge: 1 + 3 > 3
        extra = MockDelayedOperation(100_000)
        purgatory.try_complete_else_watch(extra, ["c"])
        extra.completable = True
        extra.try_complete()
    purgatory.advance_clock(0)
    assert purgatory.watched() == 0 and purgatory._watchers_for_key == {}, "empty lists leave the map"
    purgatory.shutdown()


def test_an_operation_on_many_keys_completes_exactly_once_when_completers_and_the_timer_race():
    """Threads call check_and_complete on each of the operations' keys while the timer expires them.
    For each operation exactly one of them wins: on_complete runs once, and the completions the
    purgatory reports plus the expirations add up to the number of operations."""
    keys = [f"key-{i}" for i in range(4)]
    time = MockTime(start_ns=0)
    timer = MockTimer(time)
    purgatory = DelayedOperationPurgatory("race", timeout_timer=timer, reaper_enabled=False)
    threading.settrace(interleave_statements)
    try:
        for round_no in range(ROUNDS):
            ops = [MockDelayedOperation(10) for _ in range(OPERATIONS_PER_ROUND)]
            for op in ops:
                assert not purgatory.try_complete_else_watch(op, keys)
                op.completable = True  # from now on a check completes it, and so does the timer at 10 ms
            barrier = threading.Barrier(len(keys) + 1)
            reported: list[int] = []

            def check(key: str, barrier=barrier, reported=reported) -> None:
                barrier.wait()
                reported.append(purgatory.check_and_complete(key))

            def expire(barrier=barrier) -> None:
                barrier.wait()
                timer.advance_clock(10)

            threads = [threading.Thread(target=check, args=(k,)) for k in keys]
            threads.append(threading.Thread(target=expire))
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=DEADLINE_S)
            assert not any(t.is_alive() for t in threads), f"round {round_no}: a thread is stuck"
            twice = [op.completions for op in ops if op.completions != 1]
            assert not twice, (
                f"round {round_no}: on_complete ran {twice} times (not once) for some operations"
            )
            expired = sum(op.expirations for op in ops)
            assert sum(reported) + expired == len(ops), (
                f"round {round_no}: completions reported {reported}, expirations {expired}, operations {len(ops)}"
            )
        assert purgatory.delayed() == 0 and purgatory.watched() == 0
    finally:
        threading.settrace(None)
        purgatory.shutdown()


def test_the_reaper_expires_operations_on_the_real_clock():
    """The default purgatory: a SystemTimer on the system clock, driven by its reaper thread."""
    purgatory = DelayedOperationPurgatory("real", SYSTEM)
    try:
        start_ms = SYSTEM.hi_res_clock_ms()  # the timer's own clock, in its whole milliseconds
        short, long = MockDelayedOperation(20), MockDelayedOperation(200_000)
        purgatory.try_complete_else_watch(short, ["k"])
        purgatory.try_complete_else_watch(long, ["k"])
        assert short.expired.wait(DEADLINE_S), "the reaper did not expire the operation"
        elapsed_ms = SYSTEM.hi_res_clock_ms() - start_ms
        assert elapsed_ms >= 20, f"expired after {elapsed_ms} ms, before its 20 ms"
        assert short.expirations == 1 and not long.is_completed and purgatory.delayed() == 1
    finally:
        purgatory.shutdown()
    assert not purgatory._expiration_reaper.is_alive()


def test_bad_arguments_are_refused(timer, purgatory):
    with pytest.raises(ValueError, match="watch key list can't be empty"):
        purgatory.try_complete_else_watch(MockDelayedOperation(10), [])
    with pytest.raises(ValueError, match="reaper_enabled=False"):
        DelayedOperationPurgatory("x", timeout_timer=timer)
