"""A partition's state as the controller and the brokers hold it: what its records add up to.

Mirrors: org.apache.kafka.metadata.PartitionRegistration
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``to_leader_and_isr_partition_state`` gives the partition state of kafka_lite's
         LeaderAndIsr v0 (``zk_version`` carries the partition epoch, which Kafka 3.3's later
         LeaderAndIsr versions call PartitionEpoch); ``is_replica_in`` is ours.

In chapter 7 a partition's state lives in two znodes (its assignment, and its leader and ISR with
the znode's version as a guard); here it is a ``PartitionRecord`` when the partition is created,
then one ``PartitionChangeRecord`` per change, and this class is their sum. ``merge`` is the whole
rule of replay: a change field that is null (or -2 for the leader, -1 for the recovery state)
keeps the old value; every change bumps the partition epoch, the guard an AlterPartition must
match, as the znode version was; and a new leader (even "no leader") bumps the leader epoch, which
followers and clients use to tell an old leader's answers from the current one's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import PartitionChangeRecord, PartitionRecord
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState


@dataclass(frozen=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    leader: int
    leader_recovery_state: LeaderRecoveryState
    leader_epoch: int
    partition_epoch: int

    def __post_init__(self) -> None:
        # Lists become tuples and an int state becomes the enum, so that equal states compare equal
        # however they were built (Kafka's equals compares the int arrays element by element).
        for name in ("replicas", "isr", "removing_replicas", "adding_replicas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "leader_recovery_state", LeaderRecoveryState.of(self.leader_recovery_state))

    @staticmethod
    def election_was_clean(new_leader: int, isr: Sequence[int]) -> bool:
        """No leader, or a leader from the ISR: nothing acknowledged can have been lost."""
        return new_leader == NO_LEADER or new_leader in isr

    @staticmethod
    def from_record(record: PartitionRecord) -> PartitionRegistration:
        return PartitionRegistration(
            replicas=tuple(record.replicas),
            isr=tuple(record.isr),
            removing_replicas=tuple(record.removing_replicas),
            adding_replicas=tuple(record.adding_replicas),
            leader=record.leader,
            leader_recovery_state=LeaderRecoveryState.of(record.leader_recovery_state),
            leader_epoch=record.leader_epoch,
            partition_epoch=record.partition_epoch,
        )

    # --8<-- [start:merge]
    def merge(self, record: PartitionChangeRecord) -> PartitionRegistration:
        """This partition after ``record``: null fields keep their value, the partition epoch always
        goes up by one, and the leader epoch goes up by one when the record names a leader."""
        new_replicas = self.replicas if record.replicas is None else tuple(record.replicas)
        new_isr = self.isr if record.isr is None else tuple(record.isr)
        new_removing = (
            self.removing_replicas if record.removing_replicas is None else tuple(record.removing_replicas)
        )
        new_adding = self.adding_replicas if record.adding_replicas is None else tuple(record.adding_replicas)
        if record.leader == NO_LEADER_CHANGE:
            new_leader, new_leader_epoch = self.leader, self.leader_epoch
        else:
            new_leader, new_leader_epoch = record.leader, self.leader_epoch + 1
        return PartitionRegistration(
            replicas=new_replicas,
            isr=new_isr,
            removing_replicas=new_removing,
            adding_replicas=new_adding,
            leader=new_leader,
            leader_recovery_state=self.leader_recovery_state.change_to(record.leader_recovery_state),
            leader_epoch=new_leader_epoch,
            partition_epoch=self.partition_epoch + 1,
        )

    # --8<-- [end:merge]

    def diff(self, prev: PartitionRegistration) -> str:
        """What changed since ``prev``, as Kafka logs an unclean change: ``isr: [1, 2] -> [1], partition_epoch: 0 -> 1``."""
        changes = []
        for name in ("replicas", "isr", "removing_replicas", "adding_replicas"):
            before, after = getattr(prev, name), getattr(self, name)
            if before != after:
                changes.append(f"{name}: {list(before)} -> {list(after)}")
        for name in ("leader", "leader_recovery_state", "leader_epoch", "partition_epoch"):
            before, after = getattr(prev, name), getattr(self, name)
            if before != after:
                show = (lambda s: s.name) if name == "leader_recovery_state" else str
                changes.append(f"{name}: {show(before)} -> {show(after)}")
        return ", ".join(changes)

    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    def preferred_replica(self) -> int:
        """The first replica, which leads when it can (NO_LEADER for a partition with no replicas)."""
        return self.replicas[0] if self.replicas else NO_LEADER

    def has_preferred_leader(self) -> bool:
        return self.leader == self.preferred_replica()

    def is_replica_in(self, broker_id: int) -> bool:
        """Whether ``broker_id`` is one of this partition's replicas."""
        return broker_id in self.replicas

    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas) or bool(self.adding_replicas)

    def to_record(self, topic_id: uuid.UUID, partition_id: int) -> ApiMessageAndVersion:
        record = PartitionRecord(
            partition_id=partition_id,
            topic_id=topic_id,
            replicas=list(self.replicas),
            isr=list(self.isr),
            removing_replicas=list(self.removing_replicas),
            adding_replicas=list(self.adding_replicas),
            leader=self.leader,
            leader_recovery_state=int(self.leader_recovery_state),
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
        )
        return ApiMessageAndVersion(record, PartitionRecord.highest_supported_version())

    def to_leader_and_isr_partition_state(self, tp: TopicPartition) -> dict[str, Any]:
        """The partition's entry in a LeaderAndIsr request (``messages.py``'s v0 partition state). A
        KRaft controller has no controller epoch, so it is -1, as Kafka 3.3 sends it; the partition
        epoch goes where v0 has the znode version, the guard the leader's ISR changes must match."""
        return {
            "topic": tp.topic,
            "partition": tp.partition,
            "controller_epoch": -1,
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
            "zk_version": self.partition_epoch,
            "replicas": list(self.replicas),
        }
