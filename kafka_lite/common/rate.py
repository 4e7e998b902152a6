"""A rate over a sliding set of time windows, and a sensor that checks it against a quota.

Mirrors: org.apache.kafka.common.metrics.stats.SampledStat, Rate (with Rate.SampledTotal) and
         SimpleRate, and the quota check of org.apache.kafka.common.metrics.Sensor
         (clients/src/main/java/org/apache/kafka/common/metrics/, Kafka 0.10.1)
Book:    chapter 7, 7.1.6 (the replication throttle measures bytes per second this way)
Differs: ``QuotaSensor`` is a sensor of exactly one stat with one metric (Kafka's ``Sensor`` holds
         several, registered in a ``Metrics`` registry, with parents and an expiry); it keeps the
         stat and its config itself, so a new quota is a new config on the sensor.
Labs:    lab 16, stage 1 (``Rate.window_size``)

Why windows: a byte rate measured since the start would let a replica that was idle for an hour
then send an hour's worth at once; measured over the last second it jumps with every fetch. Kafka
keeps ``samples`` windows (a ``Sample`` each: the value recorded in it and when it began) in a ring.
A value goes into the current window, or into a fresh one when the current is ``time_window_ms`` old;
a window older than all ``samples`` windows together is reset, so what was recorded long ago ages
out. The rate is the total of the live windows divided by the time they span::

    samples=3, window=1 s     [ 4000 B | 1000 B | 2000 B (current, 0.5 s old) ]
    Rate:       7000 B / (2 full windows + 0.5 s)              = 2800 B/s
    SimpleRate: 7000 B / (now - start of the oldest window)    = 2800 B/s

The two differ only while there is little history. ``Rate`` assumes ``samples - 1`` whole windows
have passed (so the first fetch of a new sensor does not read as a huge rate); ``SimpleRate``, which
the replication throttle uses, divides by the elapsed time, but never by less than one window.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kafka_lite.common.quota import MetricConfig, QuotaViolationException
from kafka_lite.common.time import Time


@dataclass
class Sample:
    """One window: the value recorded in it, how many values, and when it began."""

    initial_value: float
    last_window_ms: int
    event_count: int = 0
    value: float = 0.0

    def __post_init__(self) -> None:
        self.value = self.initial_value

    def reset(self, now: int) -> None:
        self.event_count = 0
        self.last_window_ms = now
        self.value = self.initial_value

    def is_complete(self, time_ms: int, config: MetricConfig) -> bool:
        return (
            time_ms - self.last_window_ms >= config.time_window_ms or self.event_count >= config.event_window
        )


class SampledStat:
    """A value measured over a ring of ``config.samples`` windows; subclasses say how a value is
    added to a window (``update``) and how the windows make one value (``combine``)."""

    def __init__(self, initial_value: float) -> None:
        self.initial_value = initial_value
        self.current = 0
        self.samples: list[Sample] = []

    def record(self, config: MetricConfig, value: float, time_ms: int) -> None:
        sample = self.current_sample(time_ms)
        if sample.is_complete(time_ms, config):
            sample = self.advance(config, time_ms)
        self.update(sample, config, value, time_ms)
        sample.event_count += 1

    def advance(self, config: MetricConfig, time_ms: int) -> Sample:
        """Move to the next window of the ring: a new one until there are ``samples``, then the
        oldest, reset."""
        self.current = (self.current + 1) % config.samples
        if self.current >= len(self.samples):
            sample = Sample(self.initial_value, time_ms)
            self.samples.append(sample)
            return sample
        sample = self.current_sample(time_ms)
        sample.reset(time_ms)
        return sample

    def measure(self, config: MetricConfig, now: int) -> float:
        self.purge_obsolete_samples(config, now)
        return self.combine(self.samples, config, now)

    def current_sample(self, time_ms: int) -> Sample:
        if not self.samples:
            self.samples.append(Sample(self.initial_value, time_ms))
        return self.samples[self.current]

    def oldest(self, now: int) -> Sample:
        if not self.samples:
            self.samples.append(Sample(self.initial_value, now))
        return min(self.samples, key=lambda s: s.last_window_ms)

    def purge_obsolete_samples(self, config: MetricConfig, now: int) -> None:
        """Reset the windows that began longer ago than all the windows together span: with nothing
        recorded for that long, they no longer count."""
        expire_age = config.samples * config.time_window_ms
        for sample in self.samples:
            if now - sample.last_window_ms >= expire_age:
                sample.reset(now)

    def update(self, sample: Sample, config: MetricConfig, value: float, time_ms: int) -> None:
        raise NotImplementedError

    def combine(self, samples: list[Sample], config: MetricConfig, now: int) -> float:
        raise NotImplementedError


class SampledTotal(SampledStat):
    """The sum of what was recorded in the live windows (Kafka's ``Rate.SampledTotal``)."""

    def __init__(self) -> None:
        super().__init__(0.0)

    def update(self, sample: Sample, config: MetricConfig, value: float, time_ms: int) -> None:
        sample.value += value

    def combine(self, samples: list[Sample], config: MetricConfig, now: int) -> float:
        return sum(s.value for s in samples)


class Rate:
    """The total over the live windows per second of the time they span."""

    def __init__(self, stat: SampledStat | None = None) -> None:
        self.stat = stat if stat is not None else SampledTotal()

    def record(self, config: MetricConfig, value: float, time_ms: int) -> None:
        self.stat.record(config, value, time_ms)

    def measure(self, config: MetricConfig, now: int) -> float:
        value = self.stat.measure(config, now)
        return value / (self.window_size(config, now) / 1000.0)

    # --8<-- [start:window_size]
    def window_size(self, config: MetricConfig, now: int) -> int:
        """The time the live windows span, counting at least ``samples - 1`` whole windows: with one
        second of history in a 30-second window, dividing by one second would overstate the rate."""
        # BEGIN SOLUTION
        self.stat.purge_obsolete_samples(config, now)
        total_elapsed_time_ms = now - self.stat.oldest(now).last_window_ms
        num_full_windows = total_elapsed_time_ms // config.time_window_ms
        min_full_windows = config.samples - 1
        if num_full_windows < min_full_windows:
            total_elapsed_time_ms += (min_full_windows - num_full_windows) * config.time_window_ms
        return total_elapsed_time_ms
        # END SOLUTION

    # --8<-- [end:window_size]


class SimpleRate(Rate):
    """The total over the live windows per second since the oldest began, but never over less than
    one window: the first value recorded is not divided by a few milliseconds."""

    def window_size(self, config: MetricConfig, now: int) -> int:
        self.stat.purge_obsolete_samples(config, now)
        elapsed = now - self.stat.oldest(now).last_window_ms
        return max(elapsed, config.time_window_ms)


class QuotaSensor:
    """A stat recorded over time and checked against its config's quota (Kafka's ``Sensor.record``
    and ``checkQuotas`` for one metric). Recording and checking may come from several threads (the
    request handlers, the fetcher threads), so both hold the sensor's lock, as Kafka's synchronize."""

    def __init__(self, name: str, stat: Rate, config: MetricConfig, time: Time) -> None:
        self.name = name
        self.stat = stat
        self.config = config
        self.time = time
        self._lock = threading.Lock()

    def record(self, value: float, time_ms: int | None = None, check_quotas: bool = True) -> None:
        """Add ``value``, then check the quota: raises ``QuotaViolationException`` if the new value
        is over it (the value stays recorded either way). ``check_quotas=False`` only records, as
        Kafka's ``record(value, now, false)`` does for time that must count but must not throttle."""
        now = self.time.milliseconds() if time_ms is None else time_ms
        with self._lock:
            self.stat.record(self.config, value, now)
            if check_quotas:
                self._check_quotas(now)

    def check_quotas(self, time_ms: int | None = None) -> None:
        now = self.time.milliseconds() if time_ms is None else time_ms
        with self._lock:
            self._check_quotas(now)

    def measure(self, time_ms: int | None = None) -> float:
        now = self.time.milliseconds() if time_ms is None else time_ms
        with self._lock:
            return self.stat.measure(self.config, now)

    def window_size(self, time_ms: int | None = None) -> int:
        """The time, in ms, the rate is measured over now (``Rate.window_size``)."""
        now = self.time.milliseconds() if time_ms is None else time_ms
        with self._lock:
            return self.stat.window_size(self.config, now)

    def _check_quotas(self, now: int) -> None:
        quota = self.config.quota
        if quota is not None:
            value = self.stat.measure(self.config, now)
            if not quota.acceptable(value):
                raise QuotaViolationException(self.name, value, quota.bound)
