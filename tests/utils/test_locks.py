"""The read-write lock Kafka's timer, purgatory and partitions lean on: readers together, a writer
alone, and a waiting writer ahead of new readers."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.utils.locks import ReadWriteLock
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit


def _in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_readers_share_the_lock_and_a_writer_waits_for_them_ahead_of_new_readers():
    lock = ReadWriteLock()
    order: list[str] = []
    release_writer = threading.Event()

    def writer() -> None:
        with lock.write_lock():
            order.append("writer")
            release_writer.wait(10)

    def late_reader() -> None:
        with lock.read_lock():
            order.append("late reader")

    with lock.read_lock():
        with lock.read_lock():  # a second reader while the first holds it: no wait
            order.append("two readers")
        writing = _in_thread(writer)
        wait_until(lambda: lock._writers_waiting == 1, what="the writer to wait for the reader")
        reading = _in_thread(late_reader)
        wait_until(lambda: lock._waiting == 2, what="the late reader to wait behind the writer")
        assert order == ["two readers"], "neither the writer nor the late reader got in past a reader"
    wait_until(lambda: order == ["two readers", "writer"], what="the writer to get the lock")
    # Woken by the reader's release, the late reader finds the writer in and waits again.
    wait_until(lambda: lock._waiting == 1, what="the late reader to wait while the writer holds the lock")
    assert order == ["two readers", "writer"]
    release_writer.set()
    writing.join(10)
    reading.join(10)
    assert order == ["two readers", "writer", "late reader"]
    with lock.write_lock():  # free again, for a writer too
        assert lock._readers == 0


def test_a_lock_is_released_when_the_block_raises():
    lock = ReadWriteLock()
    for side in (lock.read_lock, lock.write_lock):
        with pytest.raises(RuntimeError), side():
            raise RuntimeError("boom")
    with lock.write_lock():
        assert lock._readers == 0 and lock._writer
