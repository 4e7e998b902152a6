"""What the group leader tells each Streams member: its tasks, aligned with its partitions.

Mirrors: org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo
         (streams/src/main/java/.../processor/internals/assignment/AssignmentInfo.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (threads and tasks)
Differs: a version 1 encoding stops after the standby tasks (0.10.1 always writes the host map);
         maps and sets are written sorted, where Kafka writes a ``HashMap``'s order; strings are
         written as int16-length UTF-8, which is Java's ``writeUTF`` for every character but NUL and
         those beyond U+FFFF.

The bytes travel as the user data of the consumer's ``Assignment``, all big-endian::

    int32  version                                      1 or 2
    int32  n, then n task ids                           one per assigned partition, in partition order
    int32  m, then m x (task id, partitions)            standby tasks and the partitions they restore
    int32  h, then h x (host, int32 port, partitions)   version 2: every instance's partitions
    partitions = int32 count, then count x (int16 length + UTF-8 topic, int32 partition)

The active list is *aligned* with the Assignment's partitions: the member sorts its partitions by
topic and partition, and the i-th one belongs to the i-th task id. That is how a member learns which
task reads which partition without the leader sending the pairs.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import TaskAssignmentException
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.state.host_info import HostInfo

CURRENT_VERSION = 2

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


@dataclass(frozen=True)
class AssignmentInfo:
    """Kafka's ``AssignmentInfo``: active tasks, standby tasks, partitions by host."""

    active_tasks: list[TaskId] = field(default_factory=list)
    standby_tasks: dict[TaskId, frozenset[TopicPartition]] = field(default_factory=dict)
    partitions_by_host: dict[HostInfo, frozenset[TopicPartition]] = field(default_factory=dict)
    version: int = CURRENT_VERSION

    def encode(self) -> bytes:
        """The bytes of the layout above."""
        out = bytearray(_INT32.pack(self.version))
        out += _INT32.pack(len(self.active_tasks))
        for task_id in self.active_tasks:
            task_id.write_to(out)
        out += _INT32.pack(len(self.standby_tasks))
        for task_id, partitions in sorted(self.standby_tasks.items()):
            task_id.write_to(out)
            _write_topic_partitions(out, partitions)
        if self.version == CURRENT_VERSION:
            out += _INT32.pack(len(self.partitions_by_host))
            for host_info, partitions in sorted(self.partitions_by_host.items()):
                _write_utf(out, host_info.host)
                out += _INT32.pack(host_info.port)
                _write_topic_partitions(out, partitions)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes) -> AssignmentInfo:
        """The ``AssignmentInfo`` in ``data``; an unknown version raises ``TaskAssignmentException``."""
        reader = _Reader(data)
        version = reader.int32()
        if version < 0 or version > CURRENT_VERSION:
            raise TaskAssignmentException(f"Unknown assignment data version: {version}")
        active_tasks = [reader.task_id() for _ in range(reader.int32())]
        standby_tasks = {}
        for _ in range(reader.int32()):
            task_id = reader.task_id()
            standby_tasks[task_id] = reader.topic_partitions()
        partitions_by_host = {}
        if version == CURRENT_VERSION:
            for _ in range(reader.int32()):
                host_info = HostInfo(reader.utf(), reader.int32())
                partitions_by_host[host_info] = reader.topic_partitions()
        return cls(active_tasks, standby_tasks, partitions_by_host, version)


def _write_utf(out: bytearray, string: str) -> None:
    encoded = string.encode("utf-8")
    out += _INT16.pack(len(encoded)) + encoded


def _write_topic_partitions(out: bytearray, partitions: Iterable[TopicPartition]) -> None:
    partitions = sorted(partitions)
    out += _INT32.pack(len(partitions))
    for partition in partitions:
        _write_utf(out, partition.topic)
        out += _INT32.pack(partition.partition)


class _Reader:
    """A cursor over the bytes, as Kafka reads them through a ``DataInputStream``."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def int32(self) -> int:
        (value,) = _INT32.unpack_from(self.data, self.offset)
        self.offset += 4
        return value

    def utf(self) -> str:
        (length,) = _INT16.unpack_from(self.data, self.offset)
        start = self.offset + 2
        self.offset = start + length
        return self.data[start : self.offset].decode("utf-8")

    def task_id(self) -> TaskId:
        task_id, self.offset = TaskId.read_from(self.data, self.offset)
        return task_id

    def topic_partitions(self) -> frozenset[TopicPartition]:
        return frozenset(TopicPartition(self.utf(), self.int32()) for _ in range(self.int32()))
