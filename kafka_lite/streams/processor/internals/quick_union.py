"""Union-find over node names: which nodes of a topology are connected, however indirectly.

Mirrors: org.apache.kafka.streams.processor.internals.QuickUnion
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/QuickUnion.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (sub-topologies are the connected components of the graph)

``TopologyBuilder`` unites a node with its parents, and the processors that share a state store
with each other; the roots then name the sub-topologies. Each node points to a parent, a root
points to itself; ``root`` points each node it walks past at its grandparent, as Kafka's does, so
later walks are shorter.
"""

from __future__ import annotations


class QuickUnion:
    """Kafka's ``QuickUnion<String>``."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def add(self, node_id: str) -> None:
        self.ids[node_id] = node_id

    def exists(self, node_id: str) -> bool:
        return node_id in self.ids

    def root(self, node_id: str) -> str:
        if node_id not in self.ids:
            raise KeyError(f"id: {node_id}")
        current = node_id
        parent = self.ids[current]
        while parent != current:
            # Path compression: point this node at its grandparent, then step up one.
            grandparent = self.ids[parent]
            self.ids[current] = grandparent
            current = parent
            parent = grandparent
        return current

    def unite(self, node_id: str, *id_list: str) -> None:
        for other in id_list:
            self._unite_pair(node_id, other)

    def _unite_pair(self, id1: str, id2: str) -> None:
        root1 = self.root(id1)
        root2 = self.root(id2)
        if root1 != root2:
            self.ids[root1] = root2
