"""The replication throttle (KIP-73): a byte-rate quota on the replication of chosen partitions.

Mirrors: kafka.server.ReplicationQuotaManager with ReplicationQuotaManagerConfig and the ReplicaQuota
         trait (core/src/main/scala/kafka/server/ReplicationQuotaManager.scala), and
         kafka.server.QuotaFactory's UnboundedQuota, Kafka 0.10.1
Book:    chapter 7, 7.1.6 (reassigning partitions: the new replicas copy the whole log)
Differs: the rate's sensor is made once and never expires (Kafka registers it in its ``Metrics``
         and lets it expire after an hour unused).

A reassignment adds replicas that start empty and must copy the partition's whole log from its
leader. Unthrottled, that copy competes with the produce and fetch traffic of every client. KIP-73
bounds it on both ends, with one manager each per broker:

- the **leader** side (``quotas.leader``): what a leader sends to followers of its throttled
  partitions; over the rate, its read returns nothing for them (``ReplicaManager.read_from_local_log``);
- the **follower** side (``quotas.follower``): what a follower fetches for its throttled partitions;
  over the rate, it leaves them out of its next Fetch (``ReplicaFetcherThread.build_fetch_request``).

Which partitions are throttled is per topic, set by the topic configs
``leader.replication.throttled.replicas`` and ``follower.replication.throttled.replicas``
(``config_handler.TopicConfigHandler``); the rate per broker, by the broker's dynamic configs
``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
(``config_handler.BrokerConfigHandler``). A replica in the ISR is never throttled (Kafka 0.10.1.1):
it is how acks=all produces complete, and slowing it would drop it from the ISR.
"""

from __future__ import annotations

import enum
import logging
import threading
from dataclasses import dataclass
from typing import Protocol

from kafka_lite.common.quota import MetricConfig, Quota, QuotaViolationException
from kafka_lite.common.rate import QuotaSensor, SimpleRate
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.log.log_config import ALL_REPLICAS  # every partition of the topic (Kafka's AllReplicas)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReplicationQuotaManagerConfig:
    """``replication.quota.window.num`` windows of ``replication.quota.window.size.seconds``: ten
    whole windows and the current one."""

    quota_bytes_per_second_default: int = LONG_MAX
    num_quota_samples: int = 11
    quota_window_size_seconds: int = 1


class QuotaType(enum.Enum):
    """What a quota manager measures (Kafka's one ``QuotaType``, in QuotaFactory.scala): clients'
    bytes (``client_quota_manager.py``), their requests' handler time, or replication bytes."""

    FETCH = "Fetch"
    PRODUCE = "Produce"
    REQUEST = "Request"
    LEADER_REPLICATION = "LeaderReplication"
    FOLLOWER_REPLICATION = "FollowerReplication"


class ReplicaQuota(Protocol):
    """What the read and fetch paths ask of a quota (Kafka's ``ReplicaQuota`` trait)."""

    def is_throttled(self, tp: TopicPartition) -> bool: ...

    def is_quota_exceeded(self) -> bool: ...


class UnboundedQuota:
    """The quota of a consumer's fetch: nothing throttled, never exceeded."""

    def is_throttled(self, tp: TopicPartition) -> bool:
        return False

    def is_quota_exceeded(self) -> bool:
        return False


UNBOUNDED_QUOTA = UnboundedQuota()


class ReplicationQuotaManager:
    """The byte rate of one side's throttled replication on this broker, and the partitions it
    covers. ``record`` and the checks are called from the request handlers (leader side) and the
    fetcher threads (follower side); the sensor and the topic map are safe to share."""

    def __init__(
        self, config: ReplicationQuotaManagerConfig, replication_type: QuotaType, time: Time
    ) -> None:
        self.config = config
        self.replication_type = replication_type
        self.time = time
        self._lock = threading.Lock()
        self._throttled_partitions: dict[str, list[int] | str] = {}
        # Kafka starts with no quota (null) until the broker's config sets one: never exceeded.
        self.quota: Quota | None = None
        self._sensor = QuotaSensor(
            f"byte-rate ({replication_type.value})", SimpleRate(), self._quota_metric_config(None), time
        )

    def update_quota(self, quota: Quota) -> None:
        """A new bound (the broker's throttled rate changed); the rate measured so far is kept."""
        with self._lock:
            self.quota = quota
            self._sensor.config = self._quota_metric_config(quota)

    # --8<-- [start:is_quota_exceeded]
    def is_quota_exceeded(self) -> bool:
        """Whether the bytes recorded over the last windows, per second, are over the bound."""
        try:
            self._sensor.check_quotas()
        except QuotaViolationException as e:
            log.debug(
                "%s: Quota violated for sensor (%s), metric-value: (%f), bound: (%f)",
                self.replication_type.value, self._sensor.name, e.value, e.bound,
            )  # fmt: skip
            return True
        return False

    def is_throttled(self, tp: TopicPartition) -> bool:
        """Whether this broker's configs name ``tp`` for this side's throttle."""
        partitions = self._throttled_partitions.get(tp[0])
        if partitions is None:
            return False
        return partitions == ALL_REPLICAS or tp[1] in partitions

    def record(self, value: int) -> None:
        """Add bytes to the rate, even when they take it over the bound: they were sent already."""
        try:
            self._sensor.record(value)
        except QuotaViolationException:
            pass  # Kafka logs it at trace level and carries on: the check is is_quota_exceeded's

    # --8<-- [end:is_quota_exceeded]

    def mark_throttled(self, topic: str, partitions: list[int] | str = ALL_REPLICAS) -> None:
        """Throttle these partitions of ``topic`` (replacing what was throttled of it before), or
        every partition with ``ALL_REPLICAS``."""
        self._throttled_partitions[topic] = partitions if partitions == ALL_REPLICAS else list(partitions)

    def remove_throttle(self, topic: str) -> None:
        self._throttled_partitions.pop(topic, None)

    def upper_bound(self) -> int:
        with self._lock:
            return int(self.quota.bound) if self.quota is not None else LONG_MAX

    def byte_rate(self) -> float:
        """The measured rate, bytes per second over the live windows (Kafka's ``byte-rate`` metric)."""
        return self._sensor.measure()

    def _quota_metric_config(self, quota: Quota | None) -> MetricConfig:
        return MetricConfig(
            samples=self.config.num_quota_samples,
            time_window_ms=self.config.quota_window_size_seconds * 1000,
            quota=quota,
        )
