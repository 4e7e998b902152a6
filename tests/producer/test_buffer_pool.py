"""The buffer pool: a budget of buffer.memory bytes; allocations beyond it block, first come first
served, and fail after max.block.ms of mock time."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.errors import KafkaException, TimeoutException
from kafka_lite.common.time import MockTime
from kafka_lite.producer.buffer_pool import BufferPool
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit


class Allocation:
    """An ``allocate`` on its own thread (it may block); records its result or error."""

    def __init__(self, pool: BufferPool, size: int, max_block_ms: int, finished: list | None = None) -> None:
        self.result: int | None = None
        self.error: BaseException | None = None
        self.finished = finished if finished is not None else []
        self.thread = threading.Thread(target=self._run, args=(pool, size, max_block_ms), daemon=True)
        self.size = size
        self.thread.start()

    def _run(self, pool: BufferPool, size: int, max_block_ms: int) -> None:
        try:
            self.result = pool.allocate(size, max_block_ms)
        except BaseException as e:
            self.error = e
        self.finished.append(self.size)

    def join(self) -> None:
        self.thread.join(10)
        assert not self.thread.is_alive(), "allocate is still blocked"


def test_allocations_come_out_of_the_budget_and_go_back():
    pool = BufferPool(memory=1000, poolable_size=100, time=MockTime())
    assert pool.allocate(100, 0) == 100
    assert pool.allocate(300, 0) == 300
    assert pool.available_memory() == 600
    pool.deallocate(100)
    assert pool.available_memory() == 700
    assert pool.queued() == 0


def test_an_allocation_larger_than_buffer_memory_fails_at_once():
    pool = BufferPool(memory=1000, poolable_size=100, time=MockTime())
    with pytest.raises(KafkaException, match=r"1001 bytes.*hard limit of 1000.*buffer.memory"):
        pool.allocate(1001, 60_000)


def test_a_blocked_allocation_fails_after_max_block_ms_of_mock_time_with_a_clear_error():
    time = MockTime()
    pool = BufferPool(memory=1000, poolable_size=100, time=time)
    pool.allocate(1000, 0)
    blocked = Allocation(pool, 100, max_block_ms=500)
    wait_until(lambda: pool.queued() == 1, what="the allocation to queue")
    time.advance(499)
    blocked.thread.join(0.2)  # mock time has not reached max.block.ms: it must still wait
    assert blocked.thread.is_alive() and blocked.error is None
    time.advance(1)
    blocked.join()
    assert isinstance(blocked.error, TimeoutException)
    message = str(blocked.error)
    assert "500 ms" in message and "buffer.memory (1000 bytes)" in message and "max.block.ms" in message
    assert pool.queued() == 0 and pool.available_memory() == 0


def test_memory_given_back_wakes_the_blocked_allocation():
    time = MockTime()
    pool = BufferPool(memory=1000, poolable_size=100, time=time)
    pool.allocate(1000, 0)
    blocked = Allocation(pool, 300, max_block_ms=60_000)
    wait_until(lambda: pool.queued() == 1, what="the allocation to queue")
    pool.deallocate(400)
    blocked.join()
    assert blocked.error is None and blocked.result == 300
    assert pool.available_memory() == 100


def test_waiters_are_served_first_come_first_served_even_when_a_later_one_would_fit():
    time = MockTime()
    pool = BufferPool(memory=100, poolable_size=10, time=time)
    pool.allocate(100, 0)
    finished: list[int] = []
    big = Allocation(pool, 60, 60_000, finished)
    wait_until(lambda: pool.queued() == 1, what="the big allocation to queue")
    small = Allocation(pool, 10, 60_000, finished)
    wait_until(lambda: pool.queued() == 2, what="the small allocation to queue")
    pool.deallocate(30)  # enough for the small one, but the big one is first: it takes the 30
    wait_until(lambda: pool.available_memory() == 0, what="the big allocation to take the 30 bytes")
    assert finished == [] and pool.queued() == 2
    pool.deallocate(40)  # the big one completes with 30 of these; 10 are left for the small one
    big.join()
    small.join()
    assert finished == [60, 10]
    assert pool.available_memory() == 0


def test_a_timed_out_allocation_gives_back_what_it_had_gathered():
    time = MockTime()
    pool = BufferPool(memory=100, poolable_size=10, time=time)
    pool.allocate(100, 0)
    blocked = Allocation(pool, 60, max_block_ms=1000)
    wait_until(lambda: pool.queued() == 1, what="the allocation to queue")
    pool.deallocate(30)
    wait_until(lambda: pool.available_memory() == 0, what="the allocation to gather 30 bytes")
    time.advance(1000)
    blocked.join()
    assert isinstance(blocked.error, TimeoutException)
    assert pool.available_memory() == 30, "the 30 bytes gathered before the timeout are not lost"
