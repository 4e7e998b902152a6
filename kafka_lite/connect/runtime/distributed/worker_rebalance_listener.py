"""What the distributed herder hears from the group: work assigned, work revoked.

Mirrors: org.apache.kafka.connect.runtime.distributed.WorkerRebalanceListener
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/WorkerRebalanceListener.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

Both calls come on the herder's own thread, from inside its poll of the group member: a rebalance
happens only while the herder polls, so it never races the herder's other work.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.connect.runtime.distributed.connect_protocol import Assignment
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


class WorkerRebalanceListener(ABC):
    @abstractmethod
    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        """The group has synced: this is the worker's work for ``generation``."""

    @abstractmethod
    def on_revoked(self, leader: str, connectors: list[str], tasks: list[ConnectorTaskId]) -> None:
        """A rebalance begins: stop this work (and commit its offsets) before rejoining."""
