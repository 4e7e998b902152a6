"""Where a Connect cluster keeps its connector configs, task configs and target states.

Mirrors: org.apache.kafka.connect.storage.ConfigBackingStore, with its UpdateListener
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/ConfigBackingStore.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

The distributed herder writes through this interface and learns of every change, its own and other
workers', through the update listener, which the store calls from its reading thread. The listener
only notes what changed; the herder acts on it on its own thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from kafka_lite.connect.runtime.distributed.cluster_config_state import ClusterConfigState
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


class ConfigBackingStore(ABC):
    class UpdateListener(ABC):
        @abstractmethod
        def on_connector_config_remove(self, connector: str) -> None: ...

        @abstractmethod
        def on_connector_config_update(self, connector: str) -> None: ...

        @abstractmethod
        def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None: ...

        @abstractmethod
        def on_connector_target_state_change(self, connector: str) -> None: ...

    @abstractmethod
    def configure(self, config: dict[str, Any]) -> None: ...

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def snapshot(self) -> ClusterConfigState:
        """The current configs, copied: later updates do not change it."""

    @abstractmethod
    def contains(self, connector: str) -> bool: ...

    @abstractmethod
    def put_connector_config(self, connector: str, properties: dict[str, str]) -> None: ...

    @abstractmethod
    def remove_connector_config(self, connector: str) -> None: ...

    @abstractmethod
    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        """Replace the connector's task configs; they become visible together, at the commit."""

    @abstractmethod
    def refresh(self, timeout_ms: int) -> None:
        """Read the store to its end; ``TimeoutException`` if that takes longer than ``timeout_ms``."""

    @abstractmethod
    def put_target_state(self, connector: str, state: TargetState) -> None: ...

    @abstractmethod
    def set_update_listener(self, listener: ConfigBackingStore.UpdateListener) -> None: ...
