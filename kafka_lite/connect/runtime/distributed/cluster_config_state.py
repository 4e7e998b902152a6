"""A snapshot of the Connect cluster's configs, as of one offset of the config topic.

Mirrors: org.apache.kafka.connect.runtime.distributed.ClusterConfigState
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/ClusterConfigState.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

The herder works from snapshots, never from the config store's live maps: the store's work thread
changes those as records arrive, while a rebalance must assign connectors and tasks from one
consistent state, the one its config offset names. A connector is *inconsistent* when the last
commit record said N tasks but fewer task configs were seen before it (a compacted topic can lose
some); its tasks are not run until the connector writes a new set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


@dataclass(frozen=True)
class ClusterConfigState:
    offset: int
    connector_task_counts: dict[str, int] = field(default_factory=dict)
    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    connector_target_states: dict[str, TargetState] = field(default_factory=dict)
    task_configs: dict[ConnectorTaskId, dict[str, str]] = field(default_factory=dict)
    inconsistent_connectors: frozenset[str] = frozenset()

    def contains(self, connector: str) -> bool:
        return connector in self.connector_configs

    def connectors(self) -> set[str]:
        return set(self.connector_configs)

    def connector_config(self, connector: str) -> dict[str, str] | None:
        return self.connector_configs.get(connector)

    def target_state(self, connector: str) -> TargetState | None:
        return self.connector_target_states.get(connector)

    def task_config(self, task: ConnectorTaskId) -> dict[str, str] | None:
        return self.task_configs.get(task)

    def task_count(self, connector: str) -> int:
        return self.connector_task_counts.get(connector, 0)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        """The connector's task ids, in order; none while it is inconsistent."""
        if connector in self.inconsistent_connectors:
            return []
        return [ConnectorTaskId(connector, i) for i in range(self.task_count(connector))]


EMPTY = ClusterConfigState(-1)
