"""A fetch that waits for ``fetch.min.bytes`` of data, or ``fetch.max.wait.ms``, in the purgatory.

Mirrors: kafka.server.DelayedFetch (core/src/main/scala/kafka/server/DelayedFetch.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3.3 (the delayed fetch)
Differs: the bytes available are counted by reading (a slice of the segment, no copy) rather than
         from the fetch offset's and the end offset's positions in their segments.

A consumer that asks for at least ``min_bytes`` and finds less waits here, watched under each of
its partitions. ``try_complete`` is checked again whenever something a fetch may wait for happens
on one of them: a leader's append (followers read up to the LEO), a move of the HW (consumers read
up to it), or a change of leadership. It completes when enough bytes lie between the fetch offsets
and the end each fetcher may read to, when a partition's leader moved or its log was truncated
under the fetch offset (the answer then carries the error), or at ``max_wait_ms``. Either way
``on_complete`` reads again and answers with what is there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kafka_lite.common.errors import ApiException
from kafka_lite.server.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafka_lite.server.replica_manager import FetchMetadata, LogReadResult, ReplicaManager


class DelayedFetch(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        fetch_metadata: FetchMetadata,
        replica_manager: ReplicaManager,
        response_callback: Callable[[dict], None],
    ) -> None:
        super().__init__(delay_ms)
        self.fetch_metadata = fetch_metadata
        self.replica_manager = replica_manager
        self.response_callback = response_callback

    # --8<-- [start:try_complete]
    def try_complete(self) -> bool:
        fetch = self.fetch_metadata
        accumulated = 0
        for tp, request in fetch.partitions.items():
            partition = self.replica_manager.get_partition(tp)
            if partition is None or not partition.is_leader() or partition.log is None:
                return self.force_complete()  # the leader moved: answer now, with the error
            replica = partition.get_replica()
            # consumers may read up to the HW, followers up to the LEO
            end = replica.high_watermark if fetch.fetch_only_committed else replica.log_end_offset
            if end < request.offset:
                return self.force_complete()  # truncated under us: answer with OFFSET_OUT_OF_RANGE
            if end > request.offset:  # new data: how much of it this fetch would take
                try:
                    info = partition.log.read(request.offset, request.max_bytes, max_offset=end)
                except ApiException:
                    return self.force_complete()
                accumulated += info.records.size_in_bytes()
            if accumulated >= fetch.min_bytes:
                return self.force_complete()
        return False

    # --8<-- [end:try_complete]

    def on_expiration(self) -> None:
        pass  # answered with whatever there is, in on_complete

    def on_complete(self) -> None:
        results: dict[tuple, LogReadResult] = self.replica_manager.read_from_local_log(self.fetch_metadata)
        self.response_callback(results)
