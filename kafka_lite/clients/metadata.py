"""What a client knows of the cluster (brokers, partition leaders), and when to refresh it.

Mirrors: org.apache.kafka.clients.Metadata and org.apache.kafka.common.Cluster / Node / PartitionInfo
         (clients/src/main/java/org/apache/kafka/, Kafka 0.10.1)
Book:    chapter 7, 7.3.2 (clients updating metadata); chapter 2, 2.1.1 (waitOnMetadata)

A client starts from the bootstrap servers only, asks any of them for metadata, and from then on
knows every broker and every partition's leader. The view goes stale: it is refreshed when it is
older than ``metadata.max.age.ms`` (5 minutes), or at once when something shows it wrong (a
NOT_LEADER_FOR_PARTITION error, a disconnect), but never more often than ``retry.backoff.ms`` (100 ms),
so a broken cluster is not hammered with metadata requests.

Besides the ``Cluster``, an update keeps the names of the topics the response could not describe
(``unavailable_topics``: unknown, or a partition without a leader), as Kafka 0.10.2.1 and 0.11 hand
them to ``Metadata.Listener``; the consumer's coordinator asks again at once while one it subscribes
to is among them, rather than waiting out ``metadata.max.age.ms``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kafka_lite.common.errors import Errors, InvalidMetadataException, TimeoutException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition


@dataclass(frozen=True)
class Node:
    id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def id_string(self) -> str:
        return str(self.id)


@dataclass(frozen=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: Node | None
    replicas: tuple[int, ...]
    in_sync_replicas: tuple[int, ...]


@dataclass
class Cluster:
    nodes: dict[int, Node] = field(default_factory=dict)
    partitions: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    controller: Node | None = None
    cluster_id: str | None = None
    unauthorized_topics: set[str] = field(default_factory=set)
    is_bootstrap: bool = False

    @classmethod
    def bootstrap(cls, addresses: list[tuple[str, int]]) -> Cluster:
        """Only the bootstrap servers, with ids -1, -2 ... (their real ids are not known yet)."""
        return cls({-(i + 1): Node(-(i + 1), h, p) for i, (h, p) in enumerate(addresses)}, is_bootstrap=True)

    @classmethod
    def from_metadata_response(cls, body: dict[str, Any]) -> Cluster:
        """Build the view from a Metadata response body (any version 0-4)."""
        nodes = {
            b["node_id"]: Node(b["node_id"], b["host"], b["port"], b.get("rack")) for b in body["brokers"]
        }
        partitions = {}
        for topic in body["topic_metadata"]:
            if Errors.for_code(topic["topic_error_code"]) is not Errors.NONE:
                continue
            for p in topic["partition_metadata"]:
                leader = nodes.get(p["leader"])
                key = TopicPartition(topic["topic"], p["partition_id"])
                partitions[key] = PartitionInfo(key[0], key[1], leader, tuple(p["replicas"]), tuple(p["isr"]))
        controller = nodes.get(body.get("controller_id", -1))
        return cls(nodes, partitions, controller, body.get("cluster_id"))

    def leader_for(self, topic: str, partition: int) -> Node | None:
        info = self.partitions.get((topic, partition))
        return None if info is None else info.leader

    # A Cluster is never changed once built (a refresh builds a new one), so, as Kafka's constructor
    # does, it can index its partitions by topic: the producer asks for a topic's partitions on every
    # send. Built on first use, since most Clusters (the consumer's, the admin client's) never need it.
    @cached_property
    def _partitions_by_topic(self) -> dict[str, list[PartitionInfo]]:
        by_topic: dict[str, list[PartitionInfo]] = {}
        for (topic, _), info in sorted(self.partitions.items()):
            by_topic.setdefault(topic, []).append(info)
        return by_topic

    @cached_property
    def _available_partitions_by_topic(self) -> dict[str, list[PartitionInfo]]:
        return {
            topic: [p for p in infos if p.leader is not None]
            for topic, infos in self._partitions_by_topic.items()
        }

    def partitions_for_topic(self, topic: str) -> list[PartitionInfo]:
        """The topic's partitions in partition order (empty if unknown); the list is shared: read only."""
        return self._partitions_by_topic.get(topic, [])

    def available_partitions_for_topic(self, topic: str) -> list[PartitionInfo]:
        """The topic's partitions that have a leader now, in partition order; shared: read only."""
        return self._available_partitions_by_topic.get(topic, [])

    @cached_property
    def _partitions_by_node(self) -> dict[int, list[TopicPartition]]:
        by_node: dict[int, list[TopicPartition]] = {}
        for tp, info in sorted(self.partitions.items()):
            if info.leader is not None:
                by_node.setdefault(info.leader.id, []).append(tp)
        return by_node

    def partitions_for_node(self, node_id: int) -> list[TopicPartition]:
        """The partitions ``node_id`` leads, sorted (Kafka's ``partitionsForNode``, which gives their
        ``PartitionInfo``s); shared: read only."""
        return self._partitions_by_node.get(node_id, [])

    def partition_count_for_topic(self, topic: str) -> int | None:
        """How many partitions the topic has, or None if it is unknown (Kafka's ``partitionCountForTopic``)."""
        infos = self._partitions_by_topic.get(topic)
        return len(infos) if infos else None

    def topics(self) -> set[str]:
        return {t for t, _ in self.partitions}


def _is_invalid_metadata(error_code: int) -> bool:
    exception_class = Errors.for_code(error_code).exception_class
    return exception_class is not None and issubclass(exception_class, InvalidMetadataException)


def unavailable_topics(body: dict[str, Any]) -> frozenset[str]:
    """The topics a Metadata response could not describe (Kafka 0.10.2.1's
    ``MetadataResponse.unavailableTopics``): a topic whose error says the metadata is not valid yet
    (UNKNOWN_TOPIC_OR_PARTITION: it does not exist; LEADER_NOT_AVAILABLE: it was just created), or one
    with a partition whose error says so (its leader is not known). An authorization error is not
    among them: asking again would not change the answer."""
    return frozenset(
        topic["topic"]
        for topic in body["topic_metadata"]
        if _is_invalid_metadata(topic["topic_error_code"])
        or any(_is_invalid_metadata(p["partition_error_code"]) for p in topic["partition_metadata"])
    )


class Metadata:
    def __init__(
        self, refresh_backoff_ms: int = 100, metadata_expire_ms: int = 300_000, time: Time = SYSTEM
    ) -> None:
        self.refresh_backoff_ms = refresh_backoff_ms
        self.metadata_expire_ms = metadata_expire_ms
        self.time = time
        self.cluster = Cluster()
        self.version = 0
        self.last_refresh_ms = 0
        self.last_successful_refresh_ms = 0
        self.need_update = False
        self.topics: set[str] = set()
        # What the last update could not describe (see ``unavailable_topics``); read by the consumer's
        # coordinator after each update, where Kafka passes it to the metadata's listeners.
        self.unavailable_topics: frozenset[str] = frozenset()
        # False: ask with Metadata v4 and allow_auto_topic_creation=false (a consumer's
        # allow.auto.create.topics), so an unknown topic is reported, never created by the asking.
        self.allow_auto_topic_creation = True
        # Set when a connection's SASL authentication failed (Kafka 1.0's Metadata.authenticationException):
        # retrying cannot help, so whoever waits for metadata gets it instead of a timeout.
        self.authentication_exception: Exception | None = None
        self._changed = threading.Condition()

    def bootstrap(self, addresses: list[tuple[str, int]], now: int) -> None:
        self.cluster = Cluster.bootstrap(addresses)
        self.need_update = True

    # --8<-- [start:time_to_next_update]
    def time_to_next_update(self, now: int) -> int:
        """0 when a refresh is due and allowed; otherwise how long until it is."""
        time_to_expire = (
            0 if self.need_update else max(self.last_successful_refresh_ms + self.metadata_expire_ms - now, 0)
        )
        time_to_allow_update = self.last_refresh_ms + self.refresh_backoff_ms - now
        return max(time_to_expire, time_to_allow_update, 0)

    # --8<-- [end:time_to_next_update]

    def request_update(self) -> int:
        """Ask for a refresh as soon as the back-off allows; return the version to wait past."""
        self.need_update = True
        return self.version

    def add(self, topic: str) -> None:
        if topic not in self.topics:
            self.topics.add(topic)
            self.request_update()

    def update(self, cluster: Cluster, now: int, unavailable_topics: frozenset[str] = frozenset()) -> None:
        with self._changed:
            self.cluster = cluster
            self.unavailable_topics = unavailable_topics
            self.need_update = False
            self.last_refresh_ms = self.last_successful_refresh_ms = now
            self.authentication_exception = None
            self.version += 1
            self._changed.notify_all()

    def failed_update(self, now: int, authentication_exception: Exception | None = None) -> None:
        """A refresh failed: back off before the next attempt; an authentication failure is kept for
        ``await_update`` to raise."""
        with self._changed:
            self.last_refresh_ms = now
            if authentication_exception is not None:
                self.authentication_exception = authentication_exception
                self._changed.notify_all()

    def await_update(self, last_version: int, max_wait_ms: int) -> None:
        """Block until a refresh newer than ``last_version`` lands (Kafka's producer.waitOnMetadata)."""
        with self._changed:
            updated = self.time.wait_for(
                self._changed,
                lambda: self.version > last_version or self.authentication_exception is not None,
                max_wait_ms,
            )
            if self.authentication_exception is not None:
                raise self.authentication_exception
            if not updated:
                raise TimeoutException(f"Failed to update metadata after {max_wait_ms} ms.")
