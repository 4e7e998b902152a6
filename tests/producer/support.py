"""Helpers for the producer's unit tests: a Cluster built by hand, and records for appends."""

from __future__ import annotations

from kafka_lite.clients.metadata import Cluster, Node, PartitionInfo


def node(node_id: int, port: int = 0) -> Node:
    return Node(node_id, "127.0.0.1", port or 9000 + node_id)


def cluster_of(leaders: dict[tuple[str, int], int | None], nodes: dict[int, Node] | None = None) -> Cluster:
    """A cluster whose partitions ``(topic, partition)`` are led by the given node ids (None: no leader)."""
    nodes = nodes or {i: node(i) for i in {n for n in leaders.values() if n is not None}}
    partitions = {
        tp: PartitionInfo(tp[0], tp[1], None if leader is None else nodes[leader], (), ())
        for tp, leader in leaders.items()
    }
    return Cluster(nodes, partitions)
