"""Holding a loop to a target rate: the perf tool's ``--throughput``.

Mirrors: org.apache.kafka.tools.ThroughputThrottler
         (tools/src/main/java/org/apache/kafka/tools/ThroughputThrottler.java, Kafka 0.11.0)
Book:    chapter 2, 2.1 (it paces the perf tool's producer)
Differs: it sleeps through a ``Time``, so under ``MockTime`` a throttled loop runs at once and its
         pace is exact to the millisecond. ``Time.sleep`` takes whole milliseconds: the fraction of
         a millisecond left over stays owed to the next sleep (Kafka waits the exact nanoseconds).
         No ``wakeup``, since nothing here cuts a sleep short; so a target of 0 (in Kafka: wait
         until woken) is refused.

The caller asks after each thing it does (a record sent) whether it is ahead of the target rate
(``should_throttle``) and, if so, calls ``throttle``. That owes the clock one interval
(1 / throughput seconds), and sleeps off what is owed once it reaches ``MIN_SLEEP_NS``: sleeping 2 ms
every few records rather than 0.1 ms after each keeps the pace without a sleep per record, which
would cost more than the sleep itself.
"""

from __future__ import annotations

from kafka_lite.common.time import SYSTEM, Time

NS_PER_MS = 1_000_000
NS_PER_SEC = 1000 * NS_PER_MS
MIN_SLEEP_NS = 2 * NS_PER_MS


class ThroughputThrottler:
    def __init__(self, target_throughput: float, start_ms: int, time: Time = SYSTEM) -> None:
        """``target_throughput`` things a second; any negative value means no limit."""
        if target_throughput == 0:
            raise ValueError("a target throughput of 0 would never let anything through; -1 means no limit")
        self.start_ms = start_ms
        self.target_throughput = target_throughput
        self.time = time
        # The interval owed per thing done at the target rate (Kafka's Long.MAX_VALUE when unthrottled).
        self.sleep_time_ns = int(NS_PER_SEC / target_throughput) if target_throughput > 0 else None
        self.sleep_deficit_ns = 0

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        """True if ``amount_so_far`` things by ``send_start_ms`` is faster than the target."""
        if self.target_throughput < 0:
            return False  # no throttling
        elapsed_sec = (send_start_ms - self.start_ms) / 1000
        return elapsed_sec > 0 and amount_so_far / elapsed_sec > self.target_throughput

    def throttle(self) -> None:
        """Owe one interval; sleep off what is owed once it amounts to ``MIN_SLEEP_NS``."""
        if self.sleep_time_ns is None:
            return  # unthrottled: should_throttle never says so, but a caller may ask anyway
        self.sleep_deficit_ns += self.sleep_time_ns
        if self.sleep_deficit_ns >= MIN_SLEEP_NS:
            sleep_start_ns = self.time.nanoseconds()
            self.time.sleep(self.sleep_deficit_ns // NS_PER_MS)
            slept_ns = self.time.nanoseconds() - sleep_start_ns
            # A sleep that overran (the system clock is never exact) is not credited, as in Kafka.
            self.sleep_deficit_ns = max(0, self.sleep_deficit_ns - slept_ns)
