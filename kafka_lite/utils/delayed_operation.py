"""Delayed operations: requests that complete later, when a condition holds or their time is up.

Mirrors: kafka.server.DelayedOperation and DelayedOperationPurgatory
         (core/src/main/scala/kafka/server/DelayedOperation.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3.1-6.3.3 (the delayed operation interface, delayed operations and the purgatory)
Differs: no metrics gauges (``PurgatorySize``, ``NumDelayedOperations``: ``watched()`` and
         ``delayed()`` give the same numbers); the purgatory's ``time`` builds its ``SystemTimer``
         (Kafka's timer reads the system clock). The reaper thread is named after the purgatory as
         well as the broker, and logs an error and goes on where Kafka's thread would stop.

Kafka 0.10.1 keeps this file in kafka.server; current Kafka moved it, beside the timer, to
server-common's org.apache.kafka.server.purgatory, since the group coordinator's delayed operations
use it as much as the broker's. kafka_lite keeps it in utils/ for the same reason: the coordinator
and the server both build on it, and neither on the other.

A fetch that wants ``min_bytes`` and may wait ``max_wait_ms``, or a CreateTopics that answers once
every new partition has a leader, is a ``DelayedOperation``: ``try_complete`` checks the condition
(and calls ``force_complete`` when it holds); ``on_complete`` sends the response; ``on_expiration``
runs after a timeout completed it. The purgatory watches operations under keys (a partition, a
topic) so that an append to a partition re-checks only the fetches waiting on it
(``check_and_complete(key)``).

An operation is also a ``TimerTask``: the purgatory adds it to a timer (Kafka's hierarchical timing
wheel) with its delay, and the timer's ``run`` is the timeout. Whoever gets there first completes
it: a ``check_and_complete`` on any of its keys, or the timer. ``force_complete``'s compare-and-set
lets exactly one of them through; the winner cancels the timer task (O(1) in the wheel) and runs
``on_complete``. ``try_complete`` runs under the operation's lock (Kafka's ``synchronized``), so
two threads checking the same operation never both see the condition hold halfway through.

The watch lists keep completed operations until something sweeps them: a completion on one key
leaves the operation listed under its other keys. ``check_and_complete`` drops the completed ones
it meets; for keys nobody checks again, the reaper purges every list once the count of operations
watched exceeds the count still waiting on the timer by ``purge_interval`` (Kafka's
``purgatory.purge.interval.requests``, 1000).
"""

from __future__ import annotations

import logging
import threading
from abc import abstractmethod
from collections.abc import Callable, Hashable, Iterable

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.utils.locks import AtomicInteger, ReadWriteLock
from kafka_lite.utils.timer import SystemTimer, Timer, TimerTask

log = logging.getLogger(__name__)

PURGE_INTERVAL = 1000  # Kafka's purgatory.purge.interval.requests default
REAPER_POLL_MS = 200  # how long the reaper waits for a bucket to expire per round, as in Kafka


class DelayedOperation(TimerTask):
    """An operation that completes exactly once: when ``try_complete`` finds it can, or at its delay."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self._completed = False
        self._completed_lock = threading.Lock()  # Kafka's AtomicBoolean

    # --8<-- [start:force_complete]
    def force_complete(self) -> bool:
        """Complete now; True only for the one caller that completed it (a timeout and an append may race)."""
        with self._completed_lock:  # compareAndSet(false, true)
            if self._completed:
                return False
            self._completed = True
        self.cancel()  # take the timeout out of the timer: it will not fire
        self.on_complete()
        return True

    # --8<-- [end:force_complete]

    @property
    def is_completed(self) -> bool:
        return self._completed

    @abstractmethod
    def try_complete(self) -> bool:
        """Check whether the operation can complete now; if so, return ``self.force_complete()``."""

    @abstractmethod
    def on_complete(self) -> None:
        """What completing does (send the response); called exactly once, by ``force_complete``."""

    def on_expiration(self) -> None:
        """Called after ``on_complete`` when the timeout completed the operation."""

    def run(self) -> None:
        """The timeout fired (on the timer's executor thread)."""
        if self.force_complete():
            self.on_expiration()


class Watchers:
    """The operations watched under one key, in the order they were added."""

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self._operations: list[DelayedOperation] = []
        # Reentrant: completing an operation may watch another one under the same key.
        self._lock = threading.RLock()

    def watched(self) -> int:
        with self._lock:
            return len(self._operations)

    def open_operations(self) -> list[DelayedOperation]:
        with self._lock:
            return [op for op in self._operations if not op.is_completed]

    def watch(self, operation: DelayedOperation) -> None:
        with self._lock:
            self._operations.append(operation)

    def try_complete_watched(self) -> int:
        """Try to complete each operation still open; drop the completed ones. Return how many this
        call completed."""
        completed = 0
        with self._lock:
            for operation in list(self._operations):  # a copy: a completion may watch a new one here
                if operation.is_completed:
                    continue  # completed by another thread (another key, or the timer): dropped below
                with operation.lock:
                    if operation.try_complete():
                        completed += 1
            self._operations = [op for op in self._operations if not op.is_completed]
        return completed

    def purge_completed(self) -> int:
        """Drop the operations completed elsewhere; return how many were dropped."""
        with self._lock:
            before = len(self._operations)
            self._operations = [op for op in self._operations if not op.is_completed]
            return before - len(self._operations)


class DelayedOperationPurgatory:
    """Operations waiting under keys, expired by a timer.

    ``DelayedOperationPurgatory(name, time)`` builds a ``SystemTimer`` on ``time`` and starts the
    reaper thread that drives it, as Kafka's ``DelayedOperationPurgatory(purgatoryName)`` does.
    Tests may pass ``timeout_timer=MockTimer(time), reaper_enabled=False`` (``kafka_lite.testing``)
    and call ``advance_clock`` themselves."""

    def __init__(
        self,
        name: str,
        time: Time = SYSTEM,
        timeout_timer: Timer | None = None,
        broker_id: int = 0,
        purge_interval: int = PURGE_INTERVAL,
        reaper_enabled: bool = True,
    ) -> None:
        if reaper_enabled and timeout_timer is not None and timeout_timer.moves_clock_on_advance:
            raise ValueError(
                "A MockTimer moves its MockTime on every advance_clock, so a reaper thread would run the "
                "clock away: pass reaper_enabled=False and call advance_clock from the test"
            )
        self.name = name
        self.timeout_timer = timeout_timer if timeout_timer is not None else SystemTimer(name, time=time)
        self.broker_id = broker_id
        self.purge_interval = purge_interval
        self.reaper_enabled = reaper_enabled
        self._watchers_for_key: dict[Hashable, Watchers] = {}
        self._create_lock = threading.Lock()  # one Watchers per key, even when two threads add the key
        # Many threads read the watch lists and add to them; removing an empty list is the write, so
        # that no operation is added to a list at the moment it leaves the map.
        self._remove_watchers_lock = ReadWriteLock()
        # Operations ever watched, less those purged: minus delayed() it estimates the completed ones
        # still sitting in watch lists.
        self._estimated_total_operations = AtomicInteger(0)
        self._expiration_reaper = ExpiredOperationReaper(
            f"ExpirationReaper-{broker_id}-{name}", self.advance_clock
        )
        if reaper_enabled:
            self._expiration_reaper.start()

    # --8<-- [start:try_complete_else_watch]
    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Hashable]) -> bool:
        """Complete ``operation`` now if it can; else watch it under every key and start its timeout.

        Returns True iff this call completed it. Checking each key's condition as it is watched
        would cost a ``try_complete`` per key; instead: try once, watch on every key, then try
        again. An event between the first try and the watch (an append) is caught by the second
        try; an event after the watch finds the operation on the key's list. If another thread
        completes it between the two tries, it sits in the watch lists until purged."""
        watch_keys = list(watch_keys)
        if not watch_keys:
            raise ValueError("The watch key list can't be empty")

        with operation.lock:
            if operation.try_complete():
                return True

        watch_created = False
        for key in watch_keys:
            if operation.is_completed:  # completed meanwhile: no need to watch the other keys
                return False
            self._watch_for_operation(key, operation)
            if not watch_created:
                watch_created = True
                self._estimated_total_operations.increment_and_get()

        with operation.lock:
            if operation.try_complete():
                return True

        # Still waiting: its timeout starts. If it completed between the check and the add, the
        # completion's cancel may have run before the task was in the timer: cancel again.
        if not operation.is_completed:
            self.timeout_timer.add(operation)
            if operation.is_completed:
                operation.cancel()
        return False

    # --8<-- [end:try_complete_else_watch]

    # --8<-- [start:check_and_complete]
    def check_and_complete(self, key: Hashable) -> int:
        """Re-check the operations watching ``key``; return how many this call completed."""
        with self._remove_watchers_lock.read_lock():
            watchers = self._watchers_for_key.get(key)
        if watchers is None:
            return 0
        completed = watchers.try_complete_watched()
        if watchers.watched() == 0:
            self._remove_key_if_empty(key, watchers)
        return completed

    # --8<-- [end:check_and_complete]

    def watched(self) -> int:
        """Entries in all watch lists: an operation on three keys counts three times, and a completed
        one still listed (until checked or purged) counts too."""
        return sum(watchers.watched() for watchers in self._all_watchers())

    def delayed(self) -> int:
        """Operations waiting on the timer (neither completed nor expired)."""
        return self.timeout_timer.size()

    def watched_operations(self, key: Hashable) -> list[DelayedOperation]:
        """The operations watched under ``key`` that are still open: what waits on one partition,
        where ``delayed()`` counts every key's."""
        with self._remove_watchers_lock.read_lock():
            watchers = self._watchers_for_key.get(key)
        return [] if watchers is None else watchers.open_operations()

    def _all_watchers(self) -> list[Watchers]:
        with self._remove_watchers_lock.read_lock():
            return list(self._watchers_for_key.values())

    def _watch_for_operation(self, key: Hashable, operation: DelayedOperation) -> None:
        # Under the read lock, so that the list cannot be removed from the map between finding it
        # and adding to it (an operation on a removed list would never be checked).
        with self._remove_watchers_lock.read_lock():
            watchers = self._watchers_for_key.get(key)
            if watchers is None:
                with self._create_lock:
                    watchers = self._watchers_for_key.get(key)
                    if watchers is None:
                        watchers = self._watchers_for_key[key] = Watchers(key)
            watchers.watch(operation)

    def _remove_key_if_empty(self, key: Hashable, watchers: Watchers) -> None:
        with self._remove_watchers_lock.write_lock():
            if self._watchers_for_key.get(key) is not watchers:
                return  # the key already has a newer list
            if watchers.watched() == 0:
                del self._watchers_for_key[key]

    # --8<-- [start:advance_clock]
    def advance_clock(self, timeout_ms: int) -> None:
        """One round of the reaper: expire what is due (waiting up to ``timeout_ms``), then purge the
        watch lists if enough completed operations have piled up in them."""
        self.timeout_timer.advance_clock(timeout_ms)
        # Operations watched but no longer on the timer have completed; once more than
        # purge_interval of them may still sit in watch lists, sweep every list.
        delayed = self.delayed()
        if self._estimated_total_operations.get() - delayed > self.purge_interval:
            # Completions during the sweep leave the estimate a little high: the next sweep comes sooner.
            self._estimated_total_operations.get_and_set(delayed)
            purged = 0
            for watchers in self._all_watchers():
                purged += watchers.purge_completed()
                if watchers.watched() == 0:
                    self._remove_key_if_empty(watchers.key, watchers)
            log.debug("Purged %d completed operations from the %s purgatory's watch lists", purged, self.name)

    # --8<-- [end:advance_clock]

    def shutdown(self) -> None:
        if self.reaper_enabled:
            self._expiration_reaper.initiate_shutdown()
        self.timeout_timer.shutdown()  # also wakes the reaper if it is waiting for a bucket
        if self.reaper_enabled:
            self._expiration_reaper.await_shutdown()


class ExpiredOperationReaper(threading.Thread):
    """The purgatory's background thread: ``advance_clock(200)`` in a loop, as Kafka's
    ``ExpiredOperationReaper`` (a ``ShutdownableThread``) does."""

    def __init__(self, name: str, advance_clock: Callable[[int], None]) -> None:
        super().__init__(name=name, daemon=True)
        self._advance_clock = advance_clock
        self._running = threading.Event()
        self._running.set()

    def run(self) -> None:
        while self._running.is_set():
            try:
                self._advance_clock(REAPER_POLL_MS)
            except Exception:
                # Kafka's thread would stop here; then nothing in the purgatory would ever expire.
                log.exception("Error in %s", self.name)

    def initiate_shutdown(self) -> None:
        self._running.clear()

    def await_shutdown(self) -> None:
        if self.is_alive():
            self.join()
