"""Cluster metadata for the assignment tests: topics and their partition counts, no broker."""

from __future__ import annotations

from kafka_lite.clients.metadata import Cluster, Node, PartitionInfo
from kafka_lite.common.topic_partition import TopicPartition


def cluster(**partition_counts: int) -> Cluster:
    node = Node(0, "localhost", 9092)
    return Cluster(
        {0: node},
        {
            TopicPartition(topic.replace("_", "-"), p): PartitionInfo(
                topic.replace("_", "-"), p, node, (0,), (0,)
            )
            for topic, count in partition_counts.items()
            for p in range(count)
        },
    )
