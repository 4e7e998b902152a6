"""Sensors: a measurement a client records again and again (a request's latency, a response's size),
kept as a count, a total and a maximum.

Mirrors: org.apache.kafka.common.metrics.Sensor with the Avg, Max and (cumulative, as Kafka
         2.4's CumulativeCount) Count stats (clients/src/main/java/org/apache/kafka/common/metrics/, Kafka 0.10.1)
Book:    used by the clients: chapter 2's sender records each produce request's latency in one,
         chapter 4's consumer each fetch's, join's, sync's, heartbeat's and commit's
Differs: no time windows. Kafka's averages and maxima cover the last samples (two windows of 30 s
         by default) and its rates are per second; a sensor here keeps everything since it was
         made, so ``avg`` and ``max`` cover the client's life, and the rates are Kafka 1.0's
         ``-total`` counts (KIP-187). No registry, reporters or JMX: a client's ``metrics()`` reads
         its sensors by Kafka's metric names. The windowed rate that quotas are checked against is
         in ``rate.py``.
"""

from __future__ import annotations

import threading


class Sensor:
    """A count, total and maximum of recorded values; ``record`` may be called from any thread (the
    consumer's and its heartbeat thread both handle responses)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.total = 0.0
        self.max = 0.0
        self._lock = threading.Lock()

    def record(self, value: float = 1.0) -> None:
        with self._lock:
            self.count += 1
            self.total += value
            if self.count == 1 or value > self.max:
                self.max = value

    @property
    def avg(self) -> float:
        """The mean of the recorded values (0.0 before the first)."""
        return self.total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return f"Sensor({self.name!r}, count={self.count}, avg={self.avg:g}, max={self.max:g})"
