"""The status of a connector or a task: its state, the worker running it, and the rebalance generation.

Mirrors: org.apache.kafka.connect.runtime.AbstractStatus, ConnectorStatus and TaskStatus, with their
         Listener interfaces
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

A worker reports every change of a connector's or task's state to its herder through a listener;
the herder writes it to its status store (memory in standalone mode, the compacted status topic in
distributed mode), which is what ``GET /connectors/{name}/status`` reads. The generation is the
group generation the worker had when it wrote the status: in distributed mode a status written by
a worker of an older generation does not overwrite a newer one.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, TypeVar

from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

# The type of the id: a connector's name (str) or a task's ConnectorTaskId.
IdT = TypeVar("IdT")


class State(enum.Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    DESTROYED = "DESTROYED"


@dataclass(frozen=True)
class AbstractStatus(Generic[IdT]):
    id: IdT
    state: State
    worker_id: str
    generation: int
    trace: str | None = None


class ConnectorStatus(AbstractStatus[str]):
    class Listener(ABC):
        @abstractmethod
        def on_startup(self, connector: str) -> None: ...

        @abstractmethod
        def on_pause(self, connector: str) -> None: ...

        @abstractmethod
        def on_resume(self, connector: str) -> None: ...

        @abstractmethod
        def on_failure(self, connector: str, cause: BaseException) -> None: ...

        @abstractmethod
        def on_shutdown(self, connector: str) -> None: ...


class TaskStatus(AbstractStatus[ConnectorTaskId]):
    class Listener(ABC):
        @abstractmethod
        def on_startup(self, id: ConnectorTaskId) -> None: ...

        @abstractmethod
        def on_pause(self, id: ConnectorTaskId) -> None: ...

        @abstractmethod
        def on_resume(self, id: ConnectorTaskId) -> None: ...

        @abstractmethod
        def on_failure(self, id: ConnectorTaskId, cause: BaseException) -> None: ...

        @abstractmethod
        def on_shutdown(self, id: ConnectorTaskId) -> None: ...
