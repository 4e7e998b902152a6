"""A bucket of the timing wheel: a doubly linked list of the tasks due in one tick of one wheel.

Mirrors: kafka.utils.timer.TimerTaskList and TimerTaskEntry
         (core/src/main/scala/kafka/utils/timer/TimerTaskList.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3 (the timer behind the delayed operations)
Differs: Java's ``Delayed`` interface becomes ``get_delay()`` in milliseconds and ``__lt__`` (the
         ``DelayQueue`` orders buckets by expiration); the bucket reads its clock from a ``Time``
         so that a ``MockTime`` drives it. The bucket's ``AtomicLong`` expiration is an int behind a
         small lock, Kafka's ``synchronized`` blocks are ``with`` blocks on the list's and the entry's
         locks, and ``TimerTaskEntry`` is not ``Ordered`` (nothing here sorts entries).

The list is circular around a dummy ``root`` entry: ``root.next`` is the head, ``root.prev`` the
tail, and an empty list is ``root`` pointing at itself, so adding and removing never test for
``None``. Each entry knows its list (``entry.list``), so removal is O(1): unlink, with no search.

Locks, always taken in this order: the list's, then the entry's. An entry can be moved from one
bucket to another (reinsertion when an overflow bucket expires) while another thread cancels it;
``TimerTaskEntry.remove`` therefore retries until the entry is in no list.

``set_expiration`` returns whether the expiration changed: a bucket is reused once its time has
passed and the wheel has turned, and only then must it go back on the delay queue. Every later
task added to it in the same turn sets the same expiration, gets False, and does not enqueue the
bucket again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafka_lite.common.time import Time
from kafka_lite.utils.locks import AtomicInteger

if TYPE_CHECKING:
    from kafka_lite.utils.timer.timer_task import TimerTask


class TimerTaskList:
    def __init__(self, task_counter: AtomicInteger, time: Time) -> None:
        self._task_counter = task_counter  # shared by every bucket of every wheel: the timer's size
        self._time = time
        self._lock = threading.RLock()  # reentrant: ``flush`` calls ``remove`` while holding it
        self._root = TimerTaskEntry(None, -1)
        self._root.next = self._root
        self._root.prev = self._root
        self._expiration = -1
        self._expiration_lock = threading.Lock()

    def set_expiration(self, expiration_ms: int) -> bool:
        """Set the bucket's expiration; True if it changed (the bucket must be queued again)."""
        with self._expiration_lock:
            old, self._expiration = self._expiration, expiration_ms
        return old != expiration_ms

    def get_expiration(self) -> int:
        return self._expiration

    def foreach(self, f: Callable[[TimerTask], None]) -> None:
        """Apply ``f`` to each task in the bucket that is not cancelled."""
        with self._lock:
            entry = self._root.next
            while entry is not self._root:
                next_entry = entry.next
                if not entry.cancelled:
                    f(entry.timer_task)
                entry = next_entry

    def add(self, timer_task_entry: TimerTaskEntry) -> None:
        """Append the entry at the tail, first taking it out of any list it is in."""
        done = False
        while not done:
            # Unlink from any other list outside our lock, to keep the lock order list-then-entry
            # (holding ours while taking another list's could deadlock with a thread doing the
            # opposite). Retry until the entry is in no list when we take it.
            timer_task_entry.remove()
            with self._lock, timer_task_entry._lock:
                if timer_task_entry.list is None:
                    tail = self._root.prev
                    timer_task_entry.next = self._root
                    timer_task_entry.prev = tail
                    timer_task_entry.list = self
                    tail.next = timer_task_entry
                    self._root.prev = timer_task_entry
                    self._task_counter.increment_and_get()
                    done = True

    def remove(self, timer_task_entry: TimerTaskEntry) -> None:
        with self._lock, timer_task_entry._lock:
            if timer_task_entry.list is self:
                timer_task_entry.next.prev = timer_task_entry.prev
                timer_task_entry.prev.next = timer_task_entry.next
                timer_task_entry.next = None
                timer_task_entry.prev = None
                timer_task_entry.list = None
                self._task_counter.decrement_and_get()

    def flush(self, f: Callable[[TimerTaskEntry], None]) -> None:
        """Remove every entry and pass each to ``f`` (the timer reinserts it, or runs its task); the
        bucket is then empty, with no expiration, ready for a later turn of the wheel."""
        with self._lock:
            head = self._root.next
            while head is not self._root:
                self.remove(head)
                f(head)
                head = self._root.next
            with self._expiration_lock:
                self._expiration = -1

    def get_delay(self) -> int:
        """Milliseconds until the bucket expires, 0 once it has (Java's ``Delayed.getDelay``)."""
        return max(self.get_expiration() - self._time.hi_res_clock_ms(), 0)

    def __lt__(self, other: TimerTaskList) -> bool:
        return self.get_expiration() < other.get_expiration()

    def __repr__(self) -> str:
        return f"TimerTaskList(expiration={self._expiration})"


class TimerTaskEntry:
    """One task's place in one bucket; ``expiration_ms`` is absolute, on the timer's clock."""

    __slots__ = ("_lock", "expiration_ms", "list", "next", "prev", "timer_task")

    def __init__(self, timer_task: TimerTask | None, expiration_ms: int) -> None:
        self.timer_task = timer_task
        self.expiration_ms = expiration_ms
        self.list: TimerTaskList | None = None
        self.next: TimerTaskEntry | None = None
        self.prev: TimerTaskEntry | None = None
        self._lock = threading.Lock()
        # A task is in the timer at most once: if an older entry holds it, that entry is removed.
        if timer_task is not None:
            timer_task.set_timer_task_entry(self)

    @property
    def cancelled(self) -> bool:
        """A cancelled task has dropped its entry (or moved to a newer one)."""
        return self.timer_task.get_timer_task_entry() is not self

    def remove(self) -> None:
        """Take the entry out of whatever list it is in.

        Another thread may be moving the entry between lists at this moment, so ``list`` can change
        under us: retry until it reads None. (In a rare interleaving this thread sees None while
        the other thread inserts the entry into a new list just after; the task is then cancelled,
        and the timer skips cancelled entries when their bucket expires.)"""
        current_list = self.list
        while current_list is not None:
            current_list.remove(self)
            current_list = self.list

    def __repr__(self) -> str:
        return f"TimerTaskEntry({self.timer_task!r}, expiration_ms={self.expiration_ms})"
