"""A fetch that waits for ``fetch.min.bytes`` of data, or ``fetch.max.wait.ms``, in the purgatory.

Mirrors: kafka.server.DelayedFetch (core/src/main/scala/kafka/server/DelayedFetch.scala, Kafka 0.10.1;
         a ``read_committed`` fetch waits on the last stable offset as in 0.11)
Book:    chapter 6, 6.3.3 (the delayed fetch); chapter 7, 7.1.6 (the throttled bytes)

A consumer that asks for at least ``min_bytes`` and finds less waits here, watched under each of
its partitions. ``try_complete`` is checked again whenever something a fetch may wait for happens
on one of them: a leader's append (followers read up to the LEO), a move of the HW (consumers read
up to it), or a change of leadership. It never reads the log: the first read gave each partition's
fetch offset with its segment and byte position (a ``LogOffsetMetadata``), the replica gives the end
offset (LEO or HW) the same way, and within one segment their difference is the bytes waiting.
Kafka names four cases: A, this broker is no longer the leader (of a fetch that must read
the leader's replica: a debugging consumer, replica id -2, may read a follower's); B, it no longer has
the partition; C, the two offsets are in different segments (the log rolled, or was truncated under the
fetch): complete now, the read will sort it out; D, enough bytes across the partitions. Otherwise
it waits until ``max_wait_ms``. Either way ``on_complete`` reads and answers with what is there.

A follower's fetch carries the leader's replication throttle (KIP-73): the bytes waiting in throttled
partitions are counted apart, and complete the fetch only while the leader is within its quota; over
it, the read would return nothing for them, so completing on them would answer with an empty
response at once and the follower would ask again in a busy loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kafka_lite.utils.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafka_lite.common.topic_partition import TopicPartition
    from kafka_lite.log.log_segment import LogOffsetMetadata
    from kafka_lite.server.replica_manager import FetchMetadata, LogReadResult, ReplicaManager
    from kafka_lite.server.replication_quota_manager import ReplicaQuota


class DelayedFetch(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        fetch_metadata: FetchMetadata,
        start_offsets: dict[TopicPartition, LogOffsetMetadata],
        replica_manager: ReplicaManager,
        quota: ReplicaQuota,
        response_callback: Callable[[dict], None],
    ) -> None:
        """``start_offsets``: each partition's fetch offset as the first read found it (Kafka's
        ``FetchPartitionStatus.startOffsetMetadata``); a partition whose read failed has none."""
        super().__init__(delay_ms)
        self.fetch_metadata = fetch_metadata
        self.start_offsets = start_offsets
        self.replica_manager = replica_manager
        self.quota = quota
        self.response_callback = response_callback

    # --8<-- [start:try_complete]
    def try_complete(self) -> bool:
        fetch = self.fetch_metadata
        accumulated = 0
        accumulated_throttled = 0
        for tp, request in fetch.partitions.items():
            fetch_offset = self.start_offsets.get(tp)
            if fetch_offset is None:
                continue  # its first read failed: its answer is the error, nothing to wait for
            partition = self.replica_manager.get_partition(tp)
            if partition is None or partition.log is None:
                return self.force_complete()  # case B: answer now, with the error
            if fetch.fetch_only_from_leader and not partition.is_leader():
                return self.force_complete()  # case A: answer now, with the error
            replica = partition.get_replica()
            # consumers may read up to the HW (read_committed ones to the LSO), followers up to the LEO
            if fetch.read_committed:
                end = partition.last_stable_offset_metadata()
            elif fetch.fetch_only_committed:
                end = replica.high_watermark_metadata
            else:
                end = replica.log_end_offset_metadata
            # Equal offsets first: a segment that just rolled moves the LEO to the new segment without
            # moving the offset, which would otherwise look like case C.
            if end.message_offset == fetch_offset.message_offset:
                continue
            if end.message_offset_only():
                return self.force_complete()  # the end has no place in the log: answer with what is there
            if end.on_older_segment(fetch_offset):
                return self.force_complete()  # case C: the fetch is past a truncated leader's end
            if fetch_offset.on_older_segment(end):
                # case C: the data is in another segment; a throttled partition waits out the quota
                if not (self.quota.is_throttled(tp) and self.quota.is_quota_exceeded()):
                    return self.force_complete()
                continue
            # An end below the fetch offset in the same segment is a consumer ahead of a new leader's
            # HW: it waits for the HW to pass it, as in Kafka (answering at once would start a loop
            # of empty fetches until then).
            if fetch_offset.message_offset < end.message_offset:
                bytes_available = min(end.position_diff(fetch_offset), request.max_bytes)
                if self.quota.is_throttled(tp):
                    accumulated_throttled += bytes_available
                else:
                    accumulated += bytes_available
        if accumulated >= fetch.min_bytes or (
            accumulated + accumulated_throttled >= fetch.min_bytes and not self.quota.is_quota_exceeded()
        ):
            return self.force_complete()  # case D
        return False

    # --8<-- [end:try_complete]

    def on_expiration(self) -> None:
        pass  # answered with whatever there is, in on_complete

    def on_complete(self) -> None:
        results: dict[tuple, LogReadResult] = self.replica_manager.read_from_local_log(
            self.fetch_metadata, self.quota
        )
        self.response_callback(results)
