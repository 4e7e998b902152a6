"""The bytes a Connect worker puts inside JoinGroup and SyncGroup: its config offset and its work.

Mirrors: org.apache.kafka.connect.runtime.distributed.ConnectProtocol, with its WorkerState and
         Assignment classes
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/ConnectProtocol.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: WorkerState and Assignment are dataclasses; the structures are written with kafka_lite's
         protocol types, the same ones the consumer's embedded protocol uses.

Connect's workers reuse the broker's group coordinator, as consumers do, under the protocol type
"connect" and one sub-protocol, "default". The coordinator never reads what is inside; only the
workers do::

    WorkerState => Version Url ConfigOffset          (JoinGroup's protocol_metadata)
      Version      => INT16
      Url          => STRING      the worker's REST URL, where other workers forward requests
      ConfigOffset => INT64       how far the worker has read the config topic

    Assignment => Version Error Leader LeaderUrl ConfigOffset [Connector [Task]]   (SyncGroup's)
      Error        => INT16       0 NO_ERROR, 1 CONFIG_MISMATCH (the leader is behind: read and rejoin)
      Leader       => STRING      the leader's member id
      LeaderUrl    => STRING      where config writes go
      ConfigOffset => INT64       the config offset the assignment was made from
      Connector    => STRING
      Task         => INT32       a task number, or -1 (CONNECTOR_TASK): "run the connector itself"

A worker must not act on an assignment until it has read the config topic up to the assignment's
offset: the assignment names tasks that only that config state has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_lite.common.protocol.types import (
    INT16,
    INT32,
    INT64,
    STRING,
    ArrayOf,
    Field,
    Reader,
    Schema,
    SchemaException,
)
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

# The consumer's embedded protocol reads and writes its structures the same way.
from kafka_lite.consumer.internals.consumer_protocol import _read, _write

CONNECT_PROTOCOL_V0 = 0
CONNECTOR_TASK = -1  # the sentinel task number that stands for the connector itself

CONNECT_PROTOCOL_HEADER_SCHEMA = Schema(
    Field("version", INT16, "The version of the structure that follows; Kafka 0.10.1 writes 0."),
    name="ConnectProtocolHeader",
)
CONFIG_STATE_V0 = Schema(
    Field("url", STRING, "The worker's REST URL."),
    Field("config-offset", INT64, "The offset up to which the worker has read the config topic."),
    name="WorkerState",
)
CONNECTOR_ASSIGNMENT_V0 = Schema(
    Field("connector", STRING),
    Field("tasks", ArrayOf(INT32), "The connector's tasks given to the worker; -1 is the connector itself."),
    name="ConnectorAssignment",
)
ASSIGNMENT_V0 = Schema(
    Field("error", INT16, "0: none; 1: CONFIG_MISMATCH, the leader could not catch up with the members."),
    Field("leader", STRING, "The leader's member id."),
    Field("leader-url", STRING, "The leader's REST URL."),
    Field("config-offset", INT64, "The config offset the assignment was computed from."),
    Field("assignment", ArrayOf(CONNECTOR_ASSIGNMENT_V0), "The worker's connectors and tasks."),
    name="ConnectAssignment",
)


@dataclass(frozen=True)
class WorkerState:
    url: str
    offset: int


@dataclass(frozen=True)
class Assignment:
    NO_ERROR = 0
    # The leader is behind a member's config offset and could not catch up: every worker reads the
    # config topic to its end and rejoins.
    CONFIG_MISMATCH = 1

    error: int
    leader: str
    leader_url: str
    offset: int
    connectors: list[str] = field(default_factory=list)
    tasks: list[ConnectorTaskId] = field(default_factory=list)

    def failed(self) -> bool:
        return self.error != Assignment.NO_ERROR

    def as_map(self) -> dict[str, list[int]]:
        """Connector name -> its task numbers here, -1 first where the connector itself is here."""
        tasks_by_connector: dict[str, list[int]] = {}
        for connector in self.connectors:
            tasks_by_connector.setdefault(connector, []).append(CONNECTOR_TASK)
        for task in self.tasks:
            tasks_by_connector.setdefault(task.connector, []).append(task.task)
        return tasks_by_connector


def serialize_metadata(worker_state: WorkerState) -> bytes:
    out = bytearray()
    _write(out, CONNECT_PROTOCOL_HEADER_SCHEMA, {"version": CONNECT_PROTOCOL_V0}, "metadata")
    _write(out, CONFIG_STATE_V0, {"url": worker_state.url, "config-offset": worker_state.offset}, "metadata")
    return bytes(out)


def deserialize_metadata(buffer: bytes | bytearray | memoryview) -> WorkerState:
    r = Reader(buffer)
    _check_version_compatibility(_read(r, CONNECT_PROTOCOL_HEADER_SCHEMA, "metadata")["version"])
    struct = _read(r, CONFIG_STATE_V0, "metadata")
    return WorkerState(struct["url"], struct["config-offset"])


def serialize_assignment(assignment: Assignment) -> bytes:
    out = bytearray()
    _write(out, CONNECT_PROTOCOL_HEADER_SCHEMA, {"version": CONNECT_PROTOCOL_V0}, "assignment")
    body = {
        "error": assignment.error,
        "leader": assignment.leader,
        "leader-url": assignment.leader_url,
        "config-offset": assignment.offset,
        "assignment": [
            {"connector": connector, "tasks": tasks} for connector, tasks in assignment.as_map().items()
        ],
    }
    _write(out, ASSIGNMENT_V0, body, "assignment")
    return bytes(out)


def deserialize_assignment(buffer: bytes | bytearray | memoryview) -> Assignment:
    r = Reader(buffer)
    _check_version_compatibility(_read(r, CONNECT_PROTOCOL_HEADER_SCHEMA, "assignment")["version"])
    struct = _read(r, ASSIGNMENT_V0, "assignment")
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    for connector_assignment in struct["assignment"]:
        connector = connector_assignment["connector"]
        for task in connector_assignment["tasks"]:
            if task == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append(ConnectorTaskId(connector, task))
    return Assignment(
        struct["error"], struct["leader"], struct["leader-url"], struct["config-offset"], connectors, tasks
    )


def _check_version_compatibility(version: int) -> None:
    # Any later version is read by its version 0 fields, so it may only add fields at the end.
    if version < CONNECT_PROTOCOL_V0:
        raise SchemaException(f"Unsupported subscription version: {version}", field="version", position=0)
