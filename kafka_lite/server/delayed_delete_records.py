"""A DeleteRecords waiting until every replica has moved its log start offset, in the purgatory.

Mirrors: kafka.server.DelayedDeleteRecords (core/src/main/scala/kafka/server/DelayedDeleteRecords.scala,
         Kafka 0.11.0)
Book:    chapter 6, 6.3 (delayed operations; this one has the shape of the delayed produce)

The leader has moved its own log start offset to the requested offset. The records are gone for
consumers at once, but a follower still holds them until it hears the leader's new log start in a
fetch response and moves its own; it says where its log starts in its next fetch. The answer waits
until the partition's *low watermark*, the least log start offset of its live replicas, reaches the
requested offset (``required_offset``). It is checked again whenever a follower's fetch raises the
low watermark; a partition whose leader moved away answers NOT_LEADER_FOR_PARTITION, one still short
at the request's timeout REQUEST_TIMED_OUT (the leader's log start has moved all the same).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.common.errors import Errors
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.utils.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafka_lite.server.replica_manager import ReplicaManager

INVALID_LOW_WATERMARK = -1  # DeleteRecordsResponse.INVALID_LOW_WATERMARK


@dataclass
class DeleteRecordsPartitionResult:
    """One partition's answer (Kafka's ``DeleteRecordsResponse.PartitionResponse``)."""

    low_watermark: int
    error: Errors


@dataclass
class DeleteRecordsPartitionStatus:
    required_offset: int  # the low watermark must reach it
    response_status: DeleteRecordsPartitionResult
    acks_pending: bool = False


class DelayedDeleteRecords(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        delete_records_status: dict[TopicPartition, DeleteRecordsPartitionStatus],
        replica_manager: ReplicaManager,
        response_callback: Callable[[dict[TopicPartition, DeleteRecordsPartitionResult]], None],
    ) -> None:
        super().__init__(delay_ms)
        self.delete_records_status = delete_records_status
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        # partitions refused on the leader are answered already; the rest wait for their followers
        for status in delete_records_status.values():
            if status.response_status.error is Errors.NONE:
                status.acks_pending = True
                status.response_status.error = Errors.REQUEST_TIMED_OUT  # what expiry will say
            else:
                status.acks_pending = False

    # --8<-- [start:try_complete]
    def try_complete(self) -> bool:
        """Done when no partition is still waiting: each has its low watermark or an error."""
        for tp, status in self.delete_records_status.items():
            if not status.acks_pending:
                continue
            partition = self.replica_manager.get_partition(tp)
            if partition is None:
                reached, error, low_watermark = (
                    False,
                    Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    INVALID_LOW_WATERMARK,
                )
            elif not partition.is_leader():
                reached, error, low_watermark = False, Errors.NOT_LEADER_FOR_PARTITION, INVALID_LOW_WATERMARK
            else:
                low_watermark = partition.low_watermark_if_leader()
                reached, error = low_watermark >= status.required_offset, Errors.NONE
            if error is not Errors.NONE or reached:
                status.acks_pending = False
                status.response_status.error = error
                status.response_status.low_watermark = low_watermark
        if not any(status.acks_pending for status in self.delete_records_status.values()):
            return self.force_complete()
        return False

    # --8<-- [end:try_complete]

    def on_expiration(self) -> None:
        for status in self.delete_records_status.values():
            if status.acks_pending:
                self.replica_manager.metrics["expired-delete-records-partitions"] += 1

    def on_complete(self) -> None:
        self.response_callback({tp: s.response_status for tp, s in self.delete_records_status.items()})
