"""A bound on a measured value, and the window settings a measurement is taken over.

Mirrors: org.apache.kafka.common.metrics.Quota, MetricConfig and QuotaViolationException
         (clients/src/main/java/org/apache/kafka/common/metrics/, Kafka 0.10.1)
Book:    chapter 7, 7.1.6 (a reassignment's replication throttle is a quota on a byte rate)
Differs: ``MetricConfig`` carries only what a windowed stat and its quota read (no tags, no
         recording level).

A quota is checked, not enforced, by the stat: something records values into a windowed ``Rate``
(``rate.py``), and whoever must keep within the bound asks whether the measured value is still
acceptable. In Kafka the check raises ``QuotaViolationException``; the replication throttle turns
that into "leave this partition out of the fetch for now", the client quotas (Kafka's
``ClientQuotaManager``) into a delayed response.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.utils import LONG_MAX


@dataclass(frozen=True)
class Quota:
    """An upper or a lower bound for a metric's value."""

    bound: float
    upper: bool = True

    @classmethod
    def upper_bound(cls, upper_bound: float) -> Quota:
        return cls(upper_bound, True)

    @classmethod
    def lower_bound(cls, lower_bound: float) -> Quota:
        return cls(lower_bound, False)

    def acceptable(self, value: float) -> bool:
        """Within the bound: at most an upper bound, at least a lower one (the bound itself is fine)."""
        return value <= self.bound if self.upper else value >= self.bound

    def __str__(self) -> str:
        return f"{'upper' if self.upper else 'lower'}={self.bound}"


@dataclass(frozen=True)
class MetricConfig:
    """How a sampled stat is measured: ``samples`` windows of ``time_window_ms`` each (a window also
    ends after ``event_window`` values), and the quota its value is checked against, if any.
    Kafka's defaults: two windows of 30 seconds, no event limit, no quota."""

    samples: int = 2
    time_window_ms: int = 30_000
    event_window: int = LONG_MAX
    quota: Quota | None = None

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError("The number of samples must be at least 1.")


class QuotaViolationException(KafkaException):
    """A metric's value is outside its quota: which metric, its value and the bound."""

    def __init__(self, metric_name: str, value: float, bound: float) -> None:
        super().__init__(f"'{metric_name}' violated quota. Actual: {value}, Threshold: {bound}")
        self.metric_name = metric_name
        self.value = value
        self.bound = bound
