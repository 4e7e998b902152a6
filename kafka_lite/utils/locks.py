"""Two pieces of ``java.util.concurrent`` that Kafka's timer and purgatory lean on and Python lacks.

No Kafka twin: modelled on the JDK classes Kafka uses, ``java.util.concurrent.locks.ReentrantReadWriteLock``
(with Kafka's helpers ``CoreUtils.inReadLock``/``inWriteLock``, core/src/main/scala/kafka/utils/
CoreUtils.scala, Kafka 0.10.1) and ``java.util.concurrent.atomic.AtomicInteger``.
Book:    chapter 6, 6.3 (the timer's and the purgatory's locks)
Differs: the read-write lock is not reentrant: no code path here takes it twice on one thread (the
         timer and the purgatory release it before they run a task or complete an operation), and
         a writer waiting blocks new readers, so a thread that did take the read lock twice could
         deadlock behind a writer. Java's lock counts holds per thread; ours does not need to.

Why a read-write lock: ``SystemTimer.add`` runs on every request handler thread at once, and only
the reaper's ``advance_clock`` must see the wheel standing still. Many readers (adds) may hold the
lock together; the one writer (the reaper moving the clock) holds it alone. The purgatory uses the
same shape for its watch lists: many threads look up and add to a key's list, and removing an empty
list is the rare write.

Why an atomic integer: ``count += 1`` is a read, an add and a write; two threads can interleave
them and lose an update. Java's ``AtomicInteger`` does the three as one step; here a lock does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    """Many readers together, or one writer alone; a waiting writer goes before new readers."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def read_lock(self) -> Iterator[None]:
        """Kafka's ``inReadLock(lock) { ... }``."""
        with self._cond:
            # Waiting writers go first, so a steady stream of readers cannot starve the writer.
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Kafka's ``inWriteLock(lock) { ... }``."""
        with self._cond:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class AtomicInteger:
    """An int whose updates cannot interleave: Java's ``AtomicInteger``, with its method names."""

    def __init__(self, value: int = 0) -> None:
        self._value = value
        self._lock = threading.Lock()

    def get(self) -> int:
        return self._value

    def increment_and_get(self) -> int:
        with self._lock:
            self._value += 1
            return self._value

    def decrement_and_get(self) -> int:
        with self._lock:
            self._value -= 1
            return self._value

    def get_and_set(self, value: int) -> int:
        with self._lock:
            old, self._value = self._value, value
            return old
