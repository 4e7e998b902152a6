"""Test doubles for the processor context a store is initialised with: the store-side contract only."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TaskId:
    topic_group_id: int
    partition: int

    def __str__(self) -> str:
        return f"{self.topic_group_id}_{self.partition}"


@dataclass
class RecordingCollector:
    """Keeps every record sent, as (topic, key, value, partition, timestamp)."""

    sent: list[tuple[str, bytes, bytes | None, int, int]] = field(default_factory=list)

    def send(self, topic: str, key: bytes, value: bytes | None, partition: int, timestamp: int) -> None:
        self.sent.append((topic, key, value, partition, timestamp))


class MockContext:
    """What a store reads from its ProcessorContext, and a register() that keeps the registrations."""

    def __init__(self, state_dir: Path, application_id: str = "app", task_id: TaskId = TaskId(0, 3)) -> None:
        self._application_id = application_id
        self._task_id = task_id
        self.state_dir = Path(state_dir)
        self.collector = RecordingCollector()
        self.record_timestamp = 0
        self.registered: dict[str, tuple[Any, bool, Any]] = {}

    def register(self, store: Any, logging_enabled: bool, restore_callback: Any) -> None:
        self.registered[store.name] = (store, logging_enabled, restore_callback)

    def application_id(self) -> str:
        return self._application_id

    def task_id(self) -> TaskId:
        return self._task_id

    def record_collector(self) -> RecordingCollector:
        return self.collector

    def timestamp(self) -> int:
        return self.record_timestamp

    def restore(self, store_name: str, changelog: list[tuple[bytes, bytes | None]]) -> None:
        """Replay ``changelog`` records through the store's restore callback, as the state manager does."""
        _, _, callback = self.registered[store_name]
        for key, value in changelog:
            callback(key, value)
