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
from collections.abc import Callable


class ReadWriteLock:
    """Many readers together, or one writer alone; a waiting writer goes before new readers.

    ``with lock.read_lock():`` and ``with lock.write_lock():`` as Kafka's helpers read. A leader takes
    the write lock for every partition a follower's fetch names (``Partition.maybe_expand_isr``) and
    the purgatory a read lock for every key it checks, so the uncontended path is one plain mutex held
    for a few lines each way; the condition is waited on, and notified, only when a thread must wait.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._waiting = 0  # threads in _cond.wait(), readers and writers
        self._read = _Held(self._acquire_read, self._release_read)
        self._write = _Held(self._acquire_write, self._release_write)

    def read_lock(self) -> _Held:
        """Kafka's ``inReadLock(lock) { ... }``."""
        return self._read

    def write_lock(self) -> _Held:
        """Kafka's ``inWriteLock(lock) { ... }``."""
        return self._write

    def _acquire_read(self) -> None:
        with self._mutex:
            # Waiting writers go first, so a steady stream of readers cannot starve the writer.
            while self._writer or self._writers_waiting:
                self._wait()
            self._readers += 1

    def _release_read(self) -> None:
        with self._mutex:
            self._readers -= 1
            if self._readers == 0 and self._waiting:
                self._cond.notify_all()

    def _acquire_write(self) -> None:
        with self._mutex:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._wait()
            self._writers_waiting -= 1
            self._writer = True

    def _release_write(self) -> None:
        with self._mutex:
            self._writer = False
            if self._waiting:
                self._cond.notify_all()

    def _wait(self) -> None:
        self._waiting += 1
        try:
            self._cond.wait()
        finally:
            self._waiting -= 1


class _Held:
    """The context manager of one side of a ``ReadWriteLock``: made once, entered many times (a
    generator-based one would build two objects for every use)."""

    __slots__ = ("_acquire", "_release")

    def __init__(self, acquire: Callable[[], None], release: Callable[[], None]) -> None:
        self._acquire = acquire
        self._release = release

    def __enter__(self) -> None:
        self._acquire()

    def __exit__(self, *exc_info: object) -> None:
        self._release()


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
