"""What a Streams member tells the group leader when it joins: who it is and what it had.

Mirrors: org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo
         (streams/src/main/java/.../processor/internals/assignment/SubscriptionInfo.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (threads and tasks: the leader assigns tasks, not partitions)
Differs: a version 1 encoding stops after the standby tasks; 0.10.1's ``encode`` writes the end
         point's length whatever the version (``decode`` of version 1 ignores it). Task sets are
         written sorted, where Kafka writes a ``HashSet``'s order.

The bytes travel as the user data of the consumer's ``Subscription``, all big-endian::

    int32  version            1 or 2
    int64  process id, most significant bits      (the instance's UUID, shared by its threads)
    int64  process id, least significant bits
    int32  n, then n task ids  the tasks the thread ran before this rebalance (its previous active tasks)
    int32  m, then m task ids  the tasks it has state for on disk, other than those (standby candidates)
    int32  length, then UTF-8  the ``application.server`` end point (version 2 only; length 0 for none)

A task id is two int32s (group id, partition). Several threads of one instance send the same process
id, so the leader can put a task back on the *instance* whose disk holds its state.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field

from kafka_lite.streams.errors import TaskAssignmentException
from kafka_lite.streams.processor.task_id import TaskId

CURRENT_VERSION = 2

_INT32 = struct.Struct(">i")
_UUID = struct.Struct(">qq")


@dataclass(frozen=True)
class SubscriptionInfo:
    """Kafka's ``SubscriptionInfo``: process id, previous tasks, standby tasks, end point."""

    process_id: uuid.UUID
    prev_tasks: frozenset[TaskId] = field(default_factory=frozenset)
    standby_tasks: frozenset[TaskId] = field(default_factory=frozenset)
    user_end_point: str | None = None
    version: int = CURRENT_VERSION

    def encode(self) -> bytes:
        """The bytes of the layout above."""
        out = bytearray(_INT32.pack(self.version))
        out += _UUID.pack(*_uuid_to_longs(self.process_id))
        for tasks in (self.prev_tasks, self.standby_tasks):
            out += _INT32.pack(len(tasks))
            for task_id in sorted(tasks):
                task_id.write_to(out)
        if self.version == CURRENT_VERSION:
            end_point = self.user_end_point.encode("utf-8") if self.user_end_point is not None else b""
            out += _INT32.pack(len(end_point)) + end_point
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes) -> SubscriptionInfo:
        """The ``SubscriptionInfo`` in ``data``; an unknown version raises ``TaskAssignmentException``."""
        (version,) = _INT32.unpack_from(data, 0)
        if version not in (1, CURRENT_VERSION):
            raise TaskAssignmentException(f"unable to decode subscription data: version={version}")
        process_id = _uuid_from_longs(*_UUID.unpack_from(data, 4))
        offset = 4 + _UUID.size
        prev_tasks, offset = _read_tasks(data, offset)
        standby_tasks, offset = _read_tasks(data, offset)
        user_end_point = None
        if version == CURRENT_VERSION:
            (length,) = _INT32.unpack_from(data, offset)
            if length:
                user_end_point = data[offset + 4 : offset + 4 + length].decode("utf-8")
        return cls(process_id, prev_tasks, standby_tasks, user_end_point, version)


def _read_tasks(data: bytes, offset: int) -> tuple[frozenset[TaskId], int]:
    (count,) = _INT32.unpack_from(data, offset)
    offset += 4
    tasks = []
    for _ in range(count):
        task_id, offset = TaskId.read_from(data, offset)
        tasks.append(task_id)
    return frozenset(tasks), offset


def _uuid_to_longs(process_id: uuid.UUID) -> tuple[int, int]:
    # Java's UUID is two signed longs; Python's is one unsigned 128-bit int.
    most, least = process_id.int >> 64, process_id.int & (2**64 - 1)
    return _signed64(most), _signed64(least)


def _uuid_from_longs(most: int, least: int) -> uuid.UUID:
    return uuid.UUID(int=((most & (2**64 - 1)) << 64) | (least & (2**64 - 1)))


def _signed64(value: int) -> int:
    return value - 2**64 if value >= 2**63 else value
