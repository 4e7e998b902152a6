"""A connector: one copy job, configured once, split into task configs for the worker to run.

Mirrors: org.apache.kafka.connect.connector.Connector and ConnectorContext
         (connect/api/src/main/java/org/apache/kafka/connect/connector/Connector.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``validate`` returns the parsed config or raises, instead of Kafka's ``Config`` of
         per-setting error lists (which the REST API shows; standalone mode stops at the first).

A connector does no copying itself. The worker calls ``start(props)`` with the connector's
properties, then ``task_configs(max_tasks)``, and starts one task of ``task_class()`` per config it
returns. A connector that notices its input change (a new table, a new file) asks for new task
configs through its ``ConnectorContext``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from kafka_lite.common.config import ConfigDef


class ConnectorContext(ABC):
    """What a connector may ask of the herder that runs it."""

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Call ``task_configs`` again and restart the tasks with what it returns."""

    @abstractmethod
    def raise_error(self, e: Exception) -> None:
        """Fail the connector from a thread of its own."""


class Connector(ABC):
    def __init__(self) -> None:
        self.context: ConnectorContext | None = None

    def initialize(self, ctx: ConnectorContext) -> None:
        self.context = ctx

    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with the connector's properties (its properties file, in standalone mode)."""

    @abstractmethod
    def task_class(self) -> type:
        """The ``Task`` subclass the worker instantiates for each task config."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most ``max_tasks`` configs, one per task to start."""

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def config(self) -> ConfigDef:
        """The connector's own settings, checked before it starts."""

    def validate(self, connector_configs: dict[str, str]) -> dict[str, Any]:
        """``connector_configs`` parsed with ``config()``: a missing or bad setting raises
        ``ConfigException`` naming it. Settings the worker reads (``name``, ``tasks.max``) pass."""
        return self.config().parse(connector_configs, allow_unknown=True)
