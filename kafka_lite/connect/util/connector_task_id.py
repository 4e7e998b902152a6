"""A task's name: its connector's name and its number, ``local-file-source-0``.

Mirrors: org.apache.kafka.connect.util.ConnectorTaskId
         (connect/runtime/src/main/java/org/apache/kafka/connect/util/ConnectorTaskId.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"
