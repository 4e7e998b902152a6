"""An expiration service on a mock clock: a held Fetch expires only when the test or the simulator
says the clock has moved.

Mirrors: org.apache.kafka.raft.MockExpirationService
         (raft/src/test/java/org/apache/kafka/raft/MockExpirationService.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Kafka's mock hears MockTime's clock move through a listener; this one is told with
         ``tick()`` by whoever moves the clock, since kafka_lite's MockTime has no listeners.

Beside the simulator, as Kafka keeps it beside its tests: the runtime never imports it, and a real
voter is given a ``TimingWheelExpirationService``. It fails nothing until the mock clock has passed
a future's deadline and someone calls ``tick``, so every expiry happens at a point the test chose.
"""

from __future__ import annotations

import heapq
import itertools
from concurrent.futures import Future

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.time import Time
from kafka_lite.raft.expiration_service import ExpirationService

_COMPACT_AT = 1024


class MockExpirationService(ExpirationService):
    def __init__(self, time: Time) -> None:
        self._time = time
        # (deadline, sequence, future): the sequence keeps futures with one deadline in creation order.
        self._queue: list[tuple[int, int, Future]] = []
        self._sequence = itertools.count()

    def fail_after(self, timeout_ms: int) -> Future:
        future: Future = Future()
        deadline_ms = self._time.milliseconds() + timeout_ms
        if len(self._queue) >= _COMPACT_AT:
            # A caller may tick seldom (a unit test that drives one client and never moves its
            # clock far): drop the futures completed meanwhile, so the queue holds only what can
            # still expire.
            self._queue = [entry for entry in self._queue if not entry[2].done()]
            heapq.heapify(self._queue)
        heapq.heappush(self._queue, (deadline_ms, next(self._sequence), future))
        return future

    def tick(self) -> None:
        """Fail every future whose deadline the clock has reached (Kafka's ``onTimeUpdated``)."""
        now_ms = self._time.milliseconds()
        while self._queue and self._queue[0][0] <= now_ms:
            deadline_ms, _, future = heapq.heappop(self._queue)
            if not future.done():
                future.set_exception(TimeoutException(f"Future failed to be completed before timeout of "
                                                      f"{deadline_ms} ms was reached"))  # fmt: skip
