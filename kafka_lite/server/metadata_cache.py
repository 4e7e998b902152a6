"""Every broker's copy of the cluster's metadata: live brokers, the controller, partition states.

Mirrors: kafka.server.MetadataCache (core/src/main/scala/kafka/server/MetadataCache.scala, Kafka 0.10.1)
Book:    chapter 7, 7.3.1 (the controller keeps each broker's metadata cache up to date)
Differs: it keeps every end point of each live broker by listener name, as Kafka 0.10.2's
         ``aliveNodes`` does (KIP-103), so that a Metadata request is answered with the addresses of
         the listener it came in on; a broker without that listener is left out of the answer (Kafka
         0.10.2 fails the request; later Kafkas leave it out).

Only the controller writes it, through UpdateMetadata requests; Metadata requests from clients are
answered from it, so any broker can answer for the whole cluster without asking ZooKeeper. A
partition whose leader is ``LeaderAndIsr.LEADER_DURING_DELETE`` (-2) is being deleted and is dropped.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kafka_lite.common.errors import Errors
from kafka_lite.common.topic import is_internal
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.zk.zk_utils import Broker, EndPoint, LeaderAndIsr

# UpdateMetadata's ``security_protocol_type`` ids (Kafka's ``SecurityProtocol.id``)
SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
SECURITY_PROTOCOL_NAMES = {v: k for k, v in SECURITY_PROTOCOL_IDS.items()}


@dataclass(frozen=True)
class PartitionState:
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    controller_epoch: int


class MetadataCache:
    """``inter_broker_listener_name``: the listener whose address ``alive_brokers()`` gives each
    broker (``inter.broker.listener.name``), the one this broker's own connections use."""

    def __init__(self, broker_id: int, inter_broker_listener_name: str = "PLAINTEXT") -> None:
        self.broker_id = broker_id
        self.inter_broker_listener_name = inter_broker_listener_name
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
        """Apply an UpdateMetadata request; return the partitions it deleted, whose committed offsets
        the group coordinator then removes (Kafka 0.10.2's ``updateCache`` returns them for that,
        KAFKA-2000; 0.10.1's returns nothing)."""
        deleted = []
        with self._lock:
            self.controller_id, self.controller_epoch = controller_id, controller_epoch
            brokers = {}
            for b in body["live_brokers"]:
                endpoints = _end_points(b, version)
                if not endpoints:
                    continue  # a broker with no end point cannot be reached: leave it out
                # host and port: the inter-broker listener's, for the broker's own connections
                own = next(
                    (e for e in endpoints if e.listener_name == self.inter_broker_listener_name), endpoints[0]
                )
                brokers[b["id"]] = Broker(b["id"], own.host, own.port, b.get("rack"), endpoints=endpoints)
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

    def alive_endpoints(self, listener_name: str) -> list[Broker]:
        """The live brokers at their ``listener_name`` address, for a request that came in on that
        listener (Kafka's ``getAliveBrokers.map(_.getNode(listenerName))``). A broker without the
        listener is left out: a client could not reach it on the listener it speaks."""
        with self._lock:
            return [
                Broker(b.id, e.host, e.port, b.rack, endpoints=(e,))
                for b in sorted(self._brokers.values(), key=lambda b: b.id)
                for e in b.endpoints
                if e.listener_name == listener_name
            ]

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

    def topic_metadata(
        self, topics: list[str], listener_name: str | None = None, error_unavailable_endpoints: bool = False
    ) -> list[dict]:
        """The ``topic_metadata`` of a Metadata response (v1+ field names) for known ``topics``, as
        seen from ``listener_name`` (every live broker when None): a broker without that listener
        counts as not available, as Kafka's ``getAliveEndpoint`` finds no node for it.
        ``error_unavailable_endpoints`` is Metadata v0's rule (``partition_metadata`` says what)."""
        with self._lock:
            reachable = {
                i for i, b in self._brokers.items() if listener_name is None or b.has_listener(listener_name)
            }
            return [
                topic_metadata_of(topic, self._partitions[topic], reachable, error_unavailable_endpoints)
                for topic in topics
                if topic in self._partitions
            ]


# --8<-- [start:partition_metadata]
def topic_metadata_of(
    topic: str, partitions: dict[int, PartitionState], reachable: set[int], error_unavailable_endpoints: bool
) -> dict:
    """One known topic's entry in a Metadata response, its partitions in id order (Kafka 0.11's
    ``MetadataCache.getTopicMetadata``). Both caches answer with it: the ZooKeeper broker's from
    UpdateMetadata, the KRaft broker's from its image."""
    return {
        "topic_error_code": Errors.NONE.code,
        "topic": topic,
        "is_internal": is_internal(topic),
        "partition_metadata": [
            partition_metadata(pid, state, reachable, error_unavailable_endpoints)
            for pid, state in sorted(partitions.items())
        ],
    }


def partition_metadata(
    partition_id: int, state: PartitionState, reachable: set[int], error_unavailable_endpoints: bool
) -> dict:
    """A partition's entry, with Kafka 0.10.1's and 0.11's ``getPartitionMetadata`` errors (3.3's
    KRaftMetadataCache keeps them):

    * a leader no client can reach (``reachable``: alive, with the request's listener) is
      LEADER_NOT_AVAILABLE, no leader named and an empty ISR;
    * Metadata v0 (``error_unavailable_endpoints``) lists only the reachable replicas and ISR
      members, and a partition missing any of them is REPLICA_NOT_AVAILABLE: v0 carries each
      replica as a whole broker, and a broker it cannot describe is left out. Its leader is still
      named and usable, and clients only log the error;
    * v1+ lists every replica and ISR member by id, reachable or not, so nothing is missing and
      nothing is an error (Kafka fills in an unreachable one as a node with no address)."""
    if error_unavailable_endpoints:
        replicas = [r for r in state.replicas if r in reachable]
        isr = [r for r in state.isr if r in reachable]
    else:
        replicas, isr = list(state.replicas), list(state.isr)
    if state.leader not in reachable:
        error, leader, isr = Errors.LEADER_NOT_AVAILABLE, LeaderAndIsr.NO_LEADER, []
    elif len(replicas) < len(state.replicas) or len(isr) < len(state.isr):
        error, leader = Errors.REPLICA_NOT_AVAILABLE, state.leader
    else:
        error, leader = Errors.NONE, state.leader
    return {
        "partition_error_code": error.code,
        "partition_id": partition_id,
        "leader": leader,
        "replicas": replicas,
        "isr": isr,
    }


# --8<-- [end:partition_metadata]


def _end_points(live_broker: dict, version: int) -> tuple[EndPoint, ...]:
    """A ``live_brokers`` entry's end points. Version 0 has one host and port (PLAINTEXT); versions 1
    and 2 name each end point by its security protocol, which is then also its listener name;
    version 3 (Kafka 0.10.2) carries the listener name."""
    if version == 0:
        return (EndPoint(live_broker["host"], live_broker["port"], "PLAINTEXT", "PLAINTEXT"),)
    endpoints = []
    for e in live_broker["end_points"]:
        protocol = SECURITY_PROTOCOL_NAMES.get(e["security_protocol_type"], "PLAINTEXT")
        endpoints.append(EndPoint(e["host"], e["port"], e.get("listener_name", protocol), protocol))
    return tuple(endpoints)
