"""A record and the version to write it at: what the controller appends and the log gives back.

Mirrors: org.apache.kafka.server.common.ApiMessageAndVersion
         (server-common/src/main/java/org/apache/kafka/server/common/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A record's class knows every version it can be written at; which one to use is the writer's choice
(RegisterBrokerRecord v1 only once the cluster's metadata.version can read it), so the pair travels
together: in a ControllerResult, in ``Batch.records`` after the log has committed it, and in a
snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.metadata.api_message import ApiMessage


@dataclass(frozen=True)
class ApiMessageAndVersion:
    message: ApiMessage
    version: int

    def __repr__(self) -> str:
        return f"ApiMessageAndVersion({self.message!r} at version {self.version})"
