"""An acks=all produce waiting until every in-sync replica has its records, in the purgatory.

Mirrors: kafka.server.DelayedProduce (core/src/main/scala/kafka/server/DelayedProduce.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3.3 (the delayed produce)

The leader has appended; the producer asked for acks=-1, so the answer waits until each partition's
HW reaches the offset after its last record (``required_offset``): then every replica in the ISR
has them. The operation is watched under its partitions and checked again whenever a partition's
HW moves (a follower's fetch, an ISR change). A partition whose leader moved away answers
NOT_LEADER_FOR_PARTITION; one still short at the request's ``timeout`` answers REQUEST_TIMED_OUT.
The records themselves stay in the leader's log either way: a timeout says "not known to be
replicated", not "not written", which is why a producer retrying after one may write a duplicate
unless it is idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.common.errors import Errors
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.utils.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafka_lite.server.replica_manager import PartitionResponse, ReplicaManager


@dataclass
class ProducePartitionStatus:
    required_offset: int  # the offset after the last record appended: the HW must reach it
    response_status: PartitionResponse
    acks_pending: bool = False


class DelayedProduce(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        produce_status: dict[TopicPartition, ProducePartitionStatus],
        replica_manager: ReplicaManager,
        response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
    ) -> None:
        super().__init__(delay_ms)
        self.produce_status = produce_status
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        # partitions whose append failed are answered already; the rest wait for their acks
        for status in produce_status.values():
            if status.response_status.error is Errors.NONE:
                status.acks_pending = True
                status.response_status.error = Errors.REQUEST_TIMED_OUT  # what expiry will say
            else:
                status.acks_pending = False

    # --8<-- [start:try_complete]
    def try_complete(self) -> bool:
        """Done when no partition is still waiting: each has either its acks or an error."""
        for tp, status in self.produce_status.items():
            if not status.acks_pending:
                continue
            partition = self.replica_manager.get_partition(tp)
            if partition is None:
                has_enough, error = False, Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                has_enough, error = partition.check_enough_replicas_reach_offset(status.required_offset)
            if error is not Errors.NONE:
                status.acks_pending = False
                status.response_status.error = error
            elif has_enough:
                status.acks_pending = False
                status.response_status.error = Errors.NONE
        if not any(status.acks_pending for status in self.produce_status.values()):
            return self.force_complete()
        return False

    # --8<-- [end:try_complete]

    def on_expiration(self) -> None:
        for status in self.produce_status.values():
            if status.acks_pending:
                self.replica_manager.metrics["expired-produce-partitions"] += 1

    def on_complete(self) -> None:
        self.response_callback({tp: s.response_status for tp, s in self.produce_status.items()})
