"""Which partitions each broker is in the ISR of, and which of those it leads.

Mirrors: org.apache.kafka.controller.BrokersToIsrs and TopicIdPartition
         (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7's controller answers the same questions by
         scanning its ControllerContext's partitionLeadershipInfo

When a broker is fenced the controller must take it out of every ISR and move every leadership it
held; when one is unfenced, it may lead the partitions that have no leader. Scanning every
partition each time would cost the whole cluster per heartbeat, so the replication control manager
keeps this index up to date as it replays each partition's record, and asks it.

The map is broker id -> topic id -> the partition ids whose ISR holds that broker. A partition id
carries the broker's leadership in its high bit (``LEADER_FLAG``), Kafka's trick that works since
partition ids are never negative: one tuple answers both "in the ISR of" and "leads". A partition
with no leader is also listed under ``NO_LEADER`` (-1), with the flag, so "the partitions with no
leader" is one lookup.

Both levels are timeline maps of the controller's snapshot registry, and the values are tuples
(never changed in place), so a reverted snapshot restores the index with everything else.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from kafka_lite.metadata.leader_constants import NO_LEADER
from kafka_lite.metadata.timeline import SnapshotRegistry, TimelineHashMap, TimelineInteger

LEADER_FLAG = 0x8000_0000
REPLICA_MASK = 0x7FFF_FFFF


class TopicIdPartition(NamedTuple):
    topic_id: uuid.UUID
    partition_id: int

    def __str__(self) -> str:
        return f"{self.topic_id}:{self.partition_id}"


def partitions_on_replica(
    entries: list[tuple[uuid.UUID, tuple[int, ...]]], leader_only: bool
) -> Iterator[TopicIdPartition]:
    """Kafka's PartitionsOnReplicaIterator: every entry, or only those flagged as led."""
    for topic_id, partitions in entries:
        for partition in partitions:
            if not leader_only or partition & LEADER_FLAG:
                yield TopicIdPartition(topic_id, partition & REPLICA_MASK)


class BrokersToIsrs:
    def __init__(self, snapshot_registry: SnapshotRegistry) -> None:
        self.snapshot_registry = snapshot_registry
        # broker id -> (topic id -> partition ids, LEADER_FLAG set where the broker leads); partitions
        # with no leader also appear under NO_LEADER.
        self.isr_members: TimelineHashMap[int, TimelineHashMap[uuid.UUID, tuple[int, ...]]] = TimelineHashMap(
            snapshot_registry
        )
        self._offline_partition_count = TimelineInteger(snapshot_registry)

    def update(
        self,
        topic_id: uuid.UUID,
        partition_id: int,
        prev_isr: Sequence[int] | None,
        next_isr: Sequence[int] | None,
        prev_leader: int,
        next_leader: int,
    ) -> None:
        """Move one partition's entries from its old ISR and leader to its new ones.

        ``prev_isr`` is None for a new partition, ``next_isr`` None for a removed one. A leaderless
        partition counts NO_LEADER as one more ISR member, so it lands under that id too. Both
        sides sorted, one merge walk finds who joined (add), who left (remove) and who stayed
        but gained or lost the leadership (change).
        """
        if prev_isr is None:
            prev: list[int] = []
        else:
            if prev_leader == NO_LEADER:
                prev = [*prev_isr, NO_LEADER]
                if next_leader != NO_LEADER:
                    self._offline_partition_count.decrement()
            else:
                prev = list(prev_isr)
            prev.sort()
        if next_isr is None:
            next_: list[int] = []
        else:
            if next_leader == NO_LEADER:
                next_ = [*next_isr, NO_LEADER]
                if prev_leader != NO_LEADER:
                    self._offline_partition_count.increment()
            else:
                next_ = list(next_isr)
            next_.sort()
        i = j = 0
        while True:
            if i == len(prev):
                if j == len(next_):
                    break
                new_replica = next_[j]
                self._add(new_replica, topic_id, partition_id, new_replica == next_leader)
                j += 1
            elif j == len(next_):
                prev_replica = prev[i]
                self._remove(prev_replica, topic_id, partition_id, prev_replica == prev_leader)
                i += 1
            else:
                prev_replica, new_replica = prev[i], next_[j]
                if prev_replica < new_replica:
                    self._remove(prev_replica, topic_id, partition_id, prev_replica == prev_leader)
                    i += 1
                elif prev_replica > new_replica:
                    self._add(new_replica, topic_id, partition_id, new_replica == next_leader)
                    j += 1
                else:
                    was_leader = prev_replica == prev_leader
                    is_leader = prev_replica == next_leader
                    if was_leader != is_leader:
                        self._change(prev_replica, topic_id, partition_id, was_leader, is_leader)
                    i += 1
                    j += 1

    def remove_topic_entry_for_broker(self, topic_id: uuid.UUID, broker_id: int) -> None:
        """Drop a deleted topic's entry under one broker (or under NO_LEADER)."""
        topic_map = self.isr_members.get(broker_id)
        if topic_map is not None:
            partitions = topic_map.get(topic_id)
            if broker_id == NO_LEADER and partitions is not None:
                self._offline_partition_count.set(self._offline_partition_count.get() - len(partitions))
            topic_map.remove(topic_id)
            if topic_map.is_empty():
                self.isr_members.remove(broker_id)

    def _add(self, broker_id: int, topic_id: uuid.UUID, partition: int, leader: bool) -> None:
        if leader:
            partition |= LEADER_FLAG
        topic_map = self.isr_members.get(broker_id)
        if topic_map is None:
            topic_map = TimelineHashMap(self.snapshot_registry)
            self.isr_members.put(broker_id, topic_map)
        partitions = topic_map.get(topic_id) or ()
        topic_map.put(topic_id, (*partitions, partition))

    def _change(
        self, broker_id: int, topic_id: uuid.UUID, partition: int, was_leader: bool, is_leader: bool
    ) -> None:
        partitions = self._partitions_of(broker_id, topic_id, partition)
        target = partition | LEADER_FLAG if was_leader else partition
        replacement = partition | LEADER_FLAG if is_leader else partition
        topic_map = self.isr_members.get(broker_id)
        topic_map.put(topic_id, tuple(replacement if p == target else p for p in partitions))

    def _remove(self, broker_id: int, topic_id: uuid.UUID, partition: int, leader: bool) -> None:
        if leader:
            partition |= LEADER_FLAG
        partitions = self._partitions_of(broker_id, topic_id, partition)
        topic_map = self.isr_members.get(broker_id)
        if len(partitions) == 1:
            if partitions[0] != partition:
                raise RuntimeError(
                    f"Broker {broker_id} has no entry in isrMembers for {topic_id}:{partition & REPLICA_MASK}"
                )
            topic_map.remove(topic_id)
            if topic_map.is_empty():
                self.isr_members.remove(broker_id)
        else:
            topic_map.put(topic_id, tuple(p for p in partitions if p != partition))

    def _partitions_of(self, broker_id: int, topic_id: uuid.UUID, partition: int) -> tuple[int, ...]:
        topic_map = self.isr_members.get(broker_id)
        if topic_map is None:
            raise RuntimeError(
                f"Broker {broker_id} has no isrMembers entry, so we can't change {topic_id}:"
                f"{partition & REPLICA_MASK}"
            )
        partitions = topic_map.get(topic_id)
        if partitions is None:
            raise RuntimeError(f"Broker {broker_id} has no entry in isrMembers for topic {topic_id}")
        return partitions

    def iterator(self, broker_id: int, leaders_only: bool) -> Iterator[TopicIdPartition]:
        topic_map = self.isr_members.get(broker_id)
        # A list of the entries as they are now: the caller may replay records (and so change this
        # index) while it walks the result.
        entries = topic_map.items() if topic_map is not None else []
        return partitions_on_replica(entries, leaders_only)

    def partitions_with_no_leader(self) -> Iterator[TopicIdPartition]:
        return self.iterator(NO_LEADER, True)

    def partitions_led_by_broker(self, broker_id: int) -> Iterator[TopicIdPartition]:
        return self.iterator(broker_id, True)

    def partitions_with_broker_in_isr(self, broker_id: int) -> Iterator[TopicIdPartition]:
        return self.iterator(broker_id, False)

    def has_leaderships(self, broker_id: int) -> bool:
        return next(self.iterator(broker_id, True), None) is not None

    def offline_partition_count(self) -> int:
        return self._offline_partition_count.get()
