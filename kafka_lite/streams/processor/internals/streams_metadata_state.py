"""Where every instance of the application is and what it holds: the answer to "who has key K?".

Mirrors: org.apache.kafka.streams.processor.internals.StreamsMetadataState and
         org.apache.kafka.streams.state.StreamsMetadata (Kafka 0.10.1, KIP-67)
Book:    chapter 9, 9.1.4 (state stores)
Differs: a store's source topics are those of the sub-topology that uses it (Kafka walks the
         processors' parents); no ``StreamPartitioner`` overload, the default partitioner only.

Each instance names its endpoint in ``application.server``; the group leader's assignor puts, in
every member's ``AssignmentInfo``, the partitions each endpoint's active tasks read. After every
rebalance each stream thread hands that map here (``on_change``). A key's owner is then found as
the producer would place it: the store's source topic, the key's murmur2 hash modulo that topic's
partition count, and the instance whose tasks read that partition.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.default_partitioner import murmur2, to_positive
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.state.host_info import HostInfo


@dataclass(frozen=True)
class StreamsMetadata:
    """One instance: its endpoint, the stores its tasks hold, and the partitions they read."""

    host_info: HostInfo
    state_store_names: frozenset[str]
    topic_partitions: frozenset[TopicPartition]


class StreamsMetadataState:
    def __init__(self, builder: TopologyBuilder) -> None:
        self.builder = builder
        self._lock = threading.Lock()
        self._all_metadata: list[StreamsMetadata] = []
        self._partition_counts: dict[str, int] = {}

    def on_change(self, partitions_by_host: dict[HostInfo, frozenset[TopicPartition]]) -> None:
        """A rebalance has finished: rebuild the instances' metadata from the leader's map."""
        store_topics = self._store_to_source_topics()
        all_metadata = []
        counts: dict[str, int] = {}
        for host, partitions in sorted(partitions_by_host.items()):
            topics = {tp.topic for tp in partitions}
            stores = frozenset(store for store, sources in store_topics.items() if sources & topics)
            all_metadata.append(StreamsMetadata(host, stores, frozenset(partitions)))
            for tp in partitions:
                counts[tp.topic] = max(counts.get(tp.topic, 0), tp.partition + 1)
        with self._lock:
            self._all_metadata = all_metadata
            self._partition_counts = counts

    def get_all_metadata(self) -> list[StreamsMetadata]:
        with self._lock:
            return list(self._all_metadata)

    def get_all_metadata_for_store(self, store_name: str) -> list[StreamsMetadata]:
        return [m for m in self.get_all_metadata() if store_name in m.state_store_names]

    def get_metadata_with_key(self, store_name: str, key: Any, key_serializer: Any) -> StreamsMetadata | None:
        """The instance holding ``key`` in ``store_name``; None if no instance has that store yet."""
        source_topics = sorted(self._store_to_source_topics().get(store_name, ()))
        with self._lock:
            known = [t for t in source_topics if t in self._partition_counts]
            if not known:
                return None
            # Co-partitioned sources share a count: any of them places the key.
            key_bytes = key_serializer.serialize(known[0], key)
            partition = to_positive(murmur2(key_bytes)) % self._partition_counts[known[0]]
            wanted = {TopicPartition(topic, partition) for topic in known}
            for metadata in self._all_metadata:
                if wanted & metadata.topic_partitions:
                    return metadata
        return None

    def _store_to_source_topics(self) -> dict[str, set[str]]:
        topic_groups = self.builder.topic_groups()
        node_groups = self.builder.node_groups()
        result: dict[str, set[str]] = {}
        for name, factory in self.builder.state_factories.items():
            for group_id, nodes in node_groups.items():
                if nodes & set(factory.users):
                    result.setdefault(name, set()).update(topic_groups[group_id].source_topics)
        return result
