"""Which fetcher thread copies which partition: threads per leader broker, partitions spread over them.

Mirrors: kafka.server.AbstractFetcherManager and kafka.server.ReplicaFetcherManager
         (core/src/main/scala/kafka/server/, Kafka 0.10.1)
Book:    chapter 6, 6.2.2 (the replica fetcher manager)

A follower fetches each partition from its leader. All the partitions led by one broker could share
one connection and one thread; ``num.replica.fetchers`` spreads them over that many threads per
leader, by a hash of the partition (Kafka's ``getFetcherId``), to fetch in parallel. A thread is
keyed by (leader broker, fetcher id); it is started the first time it gets a partition and stopped
once it has none left (``shutdown_idle_fetcher_threads``, after each LeaderAndIsr).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import abs_int, java_string_hash
from kafka_lite.server.replica_fetcher_thread import ReplicaFetcherThread

if TYPE_CHECKING:
    from kafka_lite.server.kafka_config import KafkaConfig
    from kafka_lite.server.replica_manager import ReplicaManager
    from kafka_lite.server.replication_quota_manager import ReplicaQuota

log = logging.getLogger(__name__)


def fetcher_id(topic: str, partition_id: int, num_fetchers: int) -> int:
    """The fetcher thread (of those for one leader) that copies this partition (Kafka's
    ``getFetcherId``): ``Utils.abs(31 * topic.hashCode + partitionId) % num.replica.fetchers``. A
    pure function of the partition, so every broker, and anyone reading the cluster's metadata, can
    tell which partitions share one fetch."""
    return abs_int(31 * java_string_hash(topic) + partition_id) % num_fetchers


@dataclass(frozen=True)
class BrokerAndInitialOffset:
    broker_id: int
    host: str
    port: int
    init_offset: int


class ReplicaFetcherManager:
    def __init__(
        self, config: KafkaConfig, replica_manager: ReplicaManager, time: Time, quota: ReplicaQuota
    ) -> None:
        """``quota``: the follower side of the replication throttle, shared by every fetcher thread."""
        self.config = config
        self.broker_id = config.broker_id
        self.replica_manager = replica_manager
        self.time = time
        self.quota = quota
        self.num_fetchers = config["num.replica.fetchers"]
        self.fetcher_thread_map: dict[tuple[int, int], ReplicaFetcherThread] = {}
        self._map_lock = threading.Lock()
        self._unpaused = threading.Event()
        self._unpaused.set()

    def get_fetcher_id(self, topic: str, partition_id: int) -> int:
        return fetcher_id(topic, partition_id, self.num_fetchers)

    # --8<-- [start:add_fetcher_for_partitions]
    def add_fetcher_for_partitions(self, partitions: dict[TopicPartition, BrokerAndInitialOffset]) -> None:
        with self._map_lock:
            by_fetcher: dict[tuple[int, int], dict[TopicPartition, BrokerAndInitialOffset]] = {}
            for tp, broker_and_offset in partitions.items():
                key = (broker_and_offset.broker_id, self.get_fetcher_id(*tp))
                by_fetcher.setdefault(key, {})[tp] = broker_and_offset
            for (broker_id, fetcher_id), tps in by_fetcher.items():
                thread = self.fetcher_thread_map.get((broker_id, fetcher_id))
                if thread is None:
                    any_entry = next(iter(tps.values()))
                    thread = ReplicaFetcherThread(
                        f"ReplicaFetcherThread-{fetcher_id}-{broker_id}",
                        fetcher_id,
                        (broker_id, any_entry.host, any_entry.port),
                        self.config,
                        self.replica_manager,
                        self.time,
                        self.quota,
                        self._unpaused,
                    )
                    self.fetcher_thread_map[(broker_id, fetcher_id)] = thread
                    thread.start()
                thread.add_partitions({tp: b.init_offset for tp, b in tps.items()})
            if partitions:
                log.info(
                    "Broker %d added fetchers for %s",
                    self.broker_id,
                    ", ".join(
                        f"{t}-{p} from broker {b.broker_id} at {b.init_offset}"
                        for (t, p), b in partitions.items()
                    ),
                )

    # --8<-- [end:add_fetcher_for_partitions]

    def remove_fetcher_for_partitions(self, tps: set[TopicPartition]) -> None:
        with self._map_lock:
            for thread in self.fetcher_thread_map.values():
                thread.remove_partitions(tps)

    def shutdown_idle_fetcher_threads(self) -> None:
        with self._map_lock:
            idle = [key for key, thread in self.fetcher_thread_map.items() if thread.partition_count() == 0]
            for key in idle:
                self.fetcher_thread_map.pop(key).shutdown()

    def pause(self, wait: bool = True) -> None:
        """A test hook: every fetcher of this broker stops fetching (the broker itself runs on), so
        that tests can watch a follower fall out of the ISR and consumers stop at the HW. With
        ``wait`` it returns once every round under way has ended, so a fetch already at the leader
        (a long poll) cannot still copy a record produced after the pause; without, at once, while
        that fetch may still be held (up to ``replica.fetch.wait.max.ms``)."""
        self._unpaused.clear()
        for thread in self.fetcher_threads() if wait else ():
            with thread.round_lock:
                pass

    def resume(self) -> None:
        self._unpaused.set()

    def fetcher_threads(self) -> list[ReplicaFetcherThread]:
        with self._map_lock:
            return list(self.fetcher_thread_map.values())

    def shutdown(self) -> None:
        with self._map_lock:
            threads = list(self.fetcher_thread_map.values())
            self.fetcher_thread_map.clear()
        for thread in threads:
            thread.initiate_shutdown()
        for thread in threads:
            thread.shutdown()
