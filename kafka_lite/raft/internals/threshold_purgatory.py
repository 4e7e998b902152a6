"""Futures that wait for a value to reach their threshold: the leader's fetch purgatory.

Mirrors: org.apache.kafka.raft.internals.ThresholdPurgatory and FuturePurgatory
         (raft/src/main/java/org/apache/kafka/raft/internals/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a dict scanned on completion, where Kafka's is a ConcurrentSkipListMap read up to the
         value; the purgatory holds a follower or two, so a scan reads plainer than a sorted map.

The broker's purgatory (``kafka_lite/utils/delayed_operation.py``) keeps operations that know how to
complete themselves, watched by key. The Raft client needs less: a held Fetch waits for one number,
the leader's log end offset, to pass the Fetch's offset. So each waiter is a future with a
threshold; ``maybe_complete(value)`` completes every future whose threshold is at most ``value``,
and the expiration service fails the ones nobody completed in time. A completed or failed future
leaves the purgatory by itself, through its done callback.
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future

from kafka_lite.raft.expiration_service import ExpirationService


class ThresholdPurgatory:
    def __init__(self, expiration_service: ExpirationService) -> None:
        self._expiration_service = expiration_service
        self._id_generator = itertools.count(1)
        # The reaper thread removes a future it failed while the Raft thread may be scanning.
        self._lock = threading.Lock()
        self._threshold_map: dict[int, tuple[int, Future]] = {}

    def await_(self, threshold: int, max_wait_time_ms: int) -> Future:
        """A future completed once ``maybe_complete`` sees ``threshold`` reached, or failed with
        TimeoutException after ``max_wait_time_ms`` (Kafka's ``await``, a keyword in Python)."""
        key = next(self._id_generator)
        future = self._expiration_service.fail_after(max_wait_time_ms)
        with self._lock:
            self._threshold_map[key] = (threshold, future)
        future.add_done_callback(lambda _: self._remove(key))
        return future

    def _remove(self, key: int) -> None:
        with self._lock:
            self._threshold_map.pop(key, None)

    def _waiting(self) -> list[tuple[int, Future]]:
        with self._lock:
            return list(self._threshold_map.values())

    def maybe_complete(self, value: int, current_time_ms: int) -> None:
        for threshold, future in self._waiting():
            if threshold <= value:
                _complete(future, current_time_ms)

    def complete_all(self, current_time_ms: int) -> None:
        for _, future in self._waiting():
            _complete(future, current_time_ms)

    def complete_all_exceptionally(self, exception: BaseException) -> None:
        for _, future in self._waiting():
            if not future.done():
                try:
                    future.set_exception(exception)
                except Exception:  # the reaper failed it first
                    pass

    def num_waiting(self) -> int:
        with self._lock:
            return len(self._threshold_map)


def _complete(future: Future, current_time_ms: int) -> None:
    # CompletableFuture.complete is a no-op on a done future; concurrent.futures raises instead.
    if not future.done():
        try:
            future.set_result(current_time_ms)
        except Exception:  # the reaper failed it between the check and the set
            pass
