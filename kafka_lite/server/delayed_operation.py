"""Delayed operations: requests that complete later, when a condition holds or their time is up.

Mirrors: kafka.server.DelayedOperation and DelayedOperationPurgatory
         (core/src/main/scala/kafka/server/DelayedOperation.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3 (delayed operations)
Differs: expiration uses a heap and one reaper thread (``_Reaper``) instead of Kafka's hierarchical
         timing wheel (``SystemTimer``); the watch lists and the complete-exactly-once rule are
         Kafka's.

A fetch that wants ``min_bytes`` and may wait ``max_wait_ms``, or a CreateTopics that answers once
every new partition has a leader, is a ``DelayedOperation``: ``try_complete`` checks the condition
(and calls ``force_complete`` when it holds); ``on_complete`` sends the response; ``on_expiration``
runs after a timeout completed it. The purgatory watches operations under keys (a partition, a
topic) so that an append to a partition re-checks only the fetches waiting on it
(``check_and_complete(key)``).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Hashable, Iterable

from kafka_lite.common.time import SYSTEM, Time

PURGE_INTERVAL = 1000  # Kafka's purgatory.purge.interval.requests default


class DelayedOperation:
    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self._completed = False
        self._lock = threading.Lock()

    def force_complete(self) -> bool:
        """Complete now; True only for the one caller that completed it (a timeout and an append may race)."""
        with self._lock:
            if self._completed:
                return False
            self._completed = True
        self.on_complete()
        return True

    @property
    def is_completed(self) -> bool:
        return self._completed

    def try_complete(self) -> bool:
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError

    def on_expiration(self) -> None:
        pass

    def run(self) -> None:
        """The timeout fired."""
        if self.force_complete():
            self.on_expiration()


class _Reaper(threading.Thread):
    """Runs each operation's ``run`` when its delay is up."""

    def __init__(self, name: str, time: Time) -> None:
        super().__init__(name=f"ExpirationReaper-{name}", daemon=True)
        self.time = time
        self._heap: list[tuple[int, int, DelayedOperation]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._running = True

    def add(self, op: DelayedOperation) -> None:
        with self._cond:
            heapq.heappush(self._heap, (self.time.milliseconds() + op.delay_ms, next(self._seq), op))
            self._cond.notify()

    def run(self) -> None:
        while True:
            with self._cond:
                while self._running:
                    while self._heap and self._heap[0][2].is_completed:
                        heapq.heappop(self._heap)  # completed early: nothing to expire
                    now = self.time.milliseconds()
                    if self._heap and self._heap[0][0] <= now:
                        break
                    wait_ms = self._heap[0][0] - now if self._heap else 200
                    self._cond.wait(min(wait_ms, 200) / 1000)
                if not self._running:
                    return
                _, _, op = heapq.heappop(self._heap)
            op.run()

    def pending(self) -> int:
        with self._cond:
            return sum(1 for _, _, op in self._heap if not op.is_completed)

    def shutdown(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify()


class DelayedOperationPurgatory:
    def __init__(self, name: str, time: Time = SYSTEM) -> None:
        self.name = name
        self._watchers: dict[Hashable, list[DelayedOperation]] = {}
        self._lock = threading.Lock()
        self._watches = 0
        self._reaper = _Reaper(name, time)
        self._reaper.start()

    # --8<-- [start:try_complete_else_watch]
    def try_complete_else_watch(self, op: DelayedOperation, keys: Iterable[Hashable]) -> bool:
        """Complete ``op`` now if it can; else watch it under ``keys`` and start its timer.

        The second ``try_complete`` after watching closes the race with an append that happened
        between the first check and the watch (Kafka does the same)."""
        if op.try_complete():
            return True
        keys = list(keys)
        with self._lock:
            for key in keys:
                self._watchers.setdefault(key, []).append(op)
            self._watches += 1
            if self._watches % PURGE_INTERVAL == 0:
                self._purge_completed()
        if op.try_complete():
            return True
        self._reaper.add(op)
        return False

    # --8<-- [end:try_complete_else_watch]

    def _purge_completed(self) -> None:
        """Drop completed operations from the watch lists (an expired fetch on a quiet partition would
        otherwise stay listed until the next append to it)."""
        for key, ops in list(self._watchers.items()):
            live = [op for op in ops if not op.is_completed]
            if live:
                self._watchers[key] = live
            else:
                del self._watchers[key]

    def check_and_complete(self, key: Hashable) -> int:
        """Re-check the operations watching ``key``; return how many completed."""
        with self._lock:
            ops = self._watchers.get(key)
            if not ops:
                return 0
            live = [op for op in ops if not op.is_completed]
            if live:
                self._watchers[key] = live
            else:
                del self._watchers[key]
        return sum(1 for op in live if op.try_complete())

    def watched(self) -> int:
        with self._lock:
            return sum(1 for ops in self._watchers.values() for op in ops if not op.is_completed)

    def delayed(self) -> int:
        return self._reaper.pending()

    def shutdown(self) -> None:
        self._reaper.shutdown()
