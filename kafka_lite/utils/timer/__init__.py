"""Kafka's timer: a hierarchical timing wheel that expires the purgatory's delayed operations.

Mirrors: kafka.utils.timer (core/src/main/scala/kafka/utils/timer/, Kafka 0.10.1): TimerTask,
         TimerTaskList, TimingWheel, Timer and SystemTimer
Book:    chapter 6, 6.3 (the timer behind the delayed operations)

Read them in this order: ``timer_task`` (what is timed), ``timer_task_list`` (a bucket),
``timing_wheel`` (the wheels, and why), ``delay_queue`` (what waits), ``system_timer`` (how the
parts turn). The same timer under ``MockTime``, for tests and notebooks, is
``kafka_lite.testing.mock_timer`` (Kafka keeps its ``MockTimer`` with its tests).
"""

from kafka_lite.utils.timer.system_timer import SystemTimer, Timer
from kafka_lite.utils.timer.timer_task import TimerTask

__all__ = ["SystemTimer", "Timer", "TimerTask"]
