"""A task's identity: which sub-topology, and which partition of its input topics.

Mirrors: org.apache.kafka.streams.processor.TaskId
         (streams/src/main/java/org/apache/kafka/streams/processor/TaskId.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (tasks: one per sub-topology and input partition)

A topology splits into sub-topologies (``TopologyBuilder.topic_groups``, numbered from 0). Each
sub-topology runs as one task per partition of its source topics: task ``1_3`` processes partition 3
of every source topic of sub-topology 1. That is why co-partitioned topics must have as many
partitions as each other: the task pairs partition 3 of one with partition 3 of the other.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

# Kafka's TaskId.writeTo/readFrom: the group id, then the partition, two big-endian int32s.
_TASK_ID = struct.Struct(">ii")


class TaskId(NamedTuple):
    topic_group_id: int
    partition: int

    def __str__(self) -> str:
        # Kafka's toString, also the name of the task's state directory.
        return f"{self.topic_group_id}_{self.partition}"

    @classmethod
    def parse(cls, string: str) -> TaskId:
        """The ``TaskId`` written as ``"<topic_group_id>_<partition>"`` (Kafka's ``TaskId.parse``)."""
        group, sep, partition = string.partition("_")
        try:
            if not sep:
                raise ValueError(string)
            return cls(int(group), int(partition))
        except ValueError:
            raise ValueError(f"Task id cannot be parsed correctly from {string}") from None

    def write_to(self, out: bytearray) -> None:
        """Append the task id as Kafka's ``writeTo`` does: two big-endian int32s (8 bytes)."""
        out += _TASK_ID.pack(self.topic_group_id, self.partition)

    @classmethod
    def read_from(cls, data: bytes, offset: int) -> tuple[TaskId, int]:
        """The task id at ``offset`` (Kafka's ``readFrom``), and the offset after it."""
        return cls(*_TASK_ID.unpack_from(data, offset)), offset + _TASK_ID.size
