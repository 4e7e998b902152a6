"""A task: the part of a connector that copies data, run by the worker on a thread of its own.

Mirrors: org.apache.kafka.connect.connector.Task
         (connect/api/src/main/java/org/apache/kafka/connect/connector/Task.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class Task(ABC):
    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with one of the configs the connector's ``task_configs`` returned."""

    @abstractmethod
    def stop(self) -> None:
        """Stop; called from another thread than the one polling or putting, so it must wake it."""
