"""The expiration service of a real Raft node: Kafka's hierarchical timing wheel, with a reaper thread.

Mirrors: kafka.raft.TimingWheelExpirationService
         (core/src/main/scala/kafka/raft/TimingWheelExpirationService.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); the timing wheel is chapter 6's (DelayedOperationPurgatory)

The same wheel as the broker's purgatory (``kafka_lite/utils/timer``): each ``fail_after`` adds a
timer task whose ``run`` fails the future, and the reaper thread moves the wheel's clock, at most
``WORK_TIMEOUT_MS`` per wait so that a shutdown is noticed. A future completed before its deadline
cancels its task, so the wheel does not keep a held Fetch that was answered long ago.

The reaper fails the future on its own thread. The Raft client therefore never answers a Fetch from
the future's callback: the callback only queues the held Fetch back to the Raft thread (see
KafkaRaftClient's fetch purgatory), which alone touches the quorum and the log.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.raft.expiration_service import ExpirationService
from kafka_lite.utils.timer.system_timer import SystemTimer
from kafka_lite.utils.timer.timer_task import TimerTask

log = logging.getLogger(__name__)

WORK_TIMEOUT_MS = 200


class _TimerTaskCompletableFuture(TimerTask):
    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.future: Future = Future()

    def run(self) -> None:
        if not self.future.done():
            try:
                self.future.set_exception(
                    TimeoutException(
                        f"Future failed to be completed before timeout of {self.delay_ms} ms was reached"
                    )
                )
            except Exception:  # completed by the Raft thread between the check and the set
                pass


class TimingWheelExpirationService(ExpirationService):
    def __init__(self, timer: SystemTimer | None = None, time: Time = SYSTEM) -> None:
        self._timer = timer if timer is not None else SystemTimer("raft-expiration-executor", time=time)
        self._running = True
        self._reaper = threading.Thread(target=self._do_work, name="raft-expiration-reaper", daemon=True)
        self._reaper.start()

    def fail_after(self, timeout_ms: int) -> Future:
        task = _TimerTaskCompletableFuture(timeout_ms)
        task.future.add_done_callback(lambda _: task.cancel())
        self._timer.add(task)
        return task.future

    def _do_work(self) -> None:
        while self._running:
            self._timer.advance_clock(WORK_TIMEOUT_MS)

    def shutdown(self) -> None:
        self._running = False
        self._timer.shutdown()
        self._reaper.join(timeout=WORK_TIMEOUT_MS / 1000 * 2)
