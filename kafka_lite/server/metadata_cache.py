"""Every broker's copy of the cluster's metadata: live brokers, the controller, partition states.

Mirrors: kafka.server.MetadataCache (core/src/main/scala/kafka/server/MetadataCache.scala, Kafka 0.10.1)
Book:    chapter 7, 7.3.1 (the controller keeps each broker's metadata cache up to date)

Only the controller writes it, through UpdateMetadata requests; Metadata requests from clients are
answered from it, so any broker can answer for the whole cluster without asking ZooKeeper. A
partition whose leader is ``LeaderAndIsr.LEADER_DURING_DELETE`` (-2) is being deleted and is dropped.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kafka_lite.common.errors import Errors
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.zk.zk_utils import Broker, LeaderAndIsr


@dataclass(frozen=True)
class PartitionState:
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    controller_epoch: int


class MetadataCache:
    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self._lock = threading.RLock()
        self._brokers: dict[int, Broker] = {}
        self._partitions: dict[str, dict[int, PartitionState]] = {}
        self.controller_id = -1
        self.controller_epoch = -1
        self._has_metadata = False  # set by the controller's first UpdateMetadata

    # --8<-- [start:update]
    def update_cache(
        self, controller_id: int, controller_epoch: int, body: dict, version: int
    ) -> list[TopicPartition]:
        """Apply an UpdateMetadata request; return the partitions it deleted."""
        deleted = []
        with self._lock:
            self.controller_id, self.controller_epoch = controller_id, controller_epoch
            brokers = {}
            for b in body["live_brokers"]:
                if version == 0:
                    host, port = b["host"], b["port"]
                elif b["end_points"]:
                    host, port = b["end_points"][0]["host"], b["end_points"][0]["port"]
                else:
                    continue  # a broker with no end point cannot be reached: leave it out
                brokers[b["id"]] = Broker(b["id"], host, port, b.get("rack"))
            self._brokers = brokers
            self._has_metadata = True
            for s in body["partition_states"]:
                topic, partition = s["topic"], s["partition"]
                if s["leader"] == LeaderAndIsr.LEADER_DURING_DELETE:
                    parts = self._partitions.get(topic, {})
                    parts.pop(partition, None)
                    if not parts:
                        self._partitions.pop(topic, None)
                    deleted.append((topic, partition))
                    continue
                self._partitions.setdefault(topic, {})[partition] = PartitionState(
                    s["leader"], s["leader_epoch"], tuple(s["isr"]), s["zk_version"],
                    tuple(s["replicas"]), s["controller_epoch"],
                )  # fmt: skip
        return deleted

    # --8<-- [end:update]

    def has_metadata(self) -> bool:
        """Whether the controller has sent this broker an UpdateMetadata yet: until then the cache
        knows no broker, no controller and no partition."""
        return self._has_metadata

    def alive_brokers(self) -> list[Broker]:
        with self._lock:
            return sorted(self._brokers.values(), key=lambda b: b.id)

    def topics(self) -> list[str]:
        with self._lock:
            return sorted(self._partitions)

    def contains(self, topic: str) -> bool:
        with self._lock:
            return topic in self._partitions

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        with self._lock:
            return self._partitions.get(topic, {}).get(partition)

    def partitions(self, topic: str) -> dict[int, PartitionState]:
        with self._lock:
            return dict(self._partitions.get(topic, {}))

    def topic_metadata(self, topics: list[str]) -> list[dict]:
        """The ``topic_metadata`` of a Metadata response (v1+ field names) for known ``topics``."""
        result = []
        with self._lock:
            for topic in topics:
                parts = self._partitions.get(topic)
                if parts is None:
                    continue
                partition_metadata = []
                for pid, state in sorted(parts.items()):
                    error = Errors.NONE
                    if state.leader < 0 or state.leader not in self._brokers:
                        error = Errors.LEADER_NOT_AVAILABLE
                    live_replicas = [r for r in state.replicas if r in self._brokers]
                    if error is Errors.NONE and len(live_replicas) < len(state.replicas):
                        error = Errors.REPLICA_NOT_AVAILABLE
                    partition_metadata.append(
                        {
                            # REPLICA_NOT_AVAILABLE still names a usable leader: clients only log it.
                            "partition_error_code": error.code,
                            "partition_id": pid,
                            "leader": state.leader
                            if error is not Errors.LEADER_NOT_AVAILABLE
                            else LeaderAndIsr.NO_LEADER,
                            "replicas": list(state.replicas),
                            "isr": [r for r in state.isr if r in self._brokers],
                        }
                    )
                result.append(
                    {
                        "topic_error_code": 0,
                        "topic": topic,
                        "is_internal": topic.startswith("__"),
                        "partition_metadata": partition_metadata,
                    }
                )
        return result
