"""The replica manager: the partitions this broker holds, and the produce and fetch paths into them.

Mirrors: kafka.server.ReplicaManager (core/src/main/scala/kafka/server/ReplicaManager.scala, Kafka 0.10.1):
         appendMessages, fetchMessages/readFromLocalLog, becomeLeaderOrFollower, stopReplicas
Book:    chapter 6, 6.2 (the replica manager), 6.3 (DelayedFetch), 7.2 (LeaderAndIsr, StopReplica)
Differs: no replica fetcher threads and no ISR changes; acks=-1 is
         answered when the leader has appended, which is exact while the ISR is the leader alone.

Errors are per partition, as Kafka returns them: a produce to a partition this broker does not lead
gets NOT_LEADER_FOR_PARTITION (the client refreshes its metadata and retries at the right broker),
an unknown one UNKNOWN_TOPIC_OR_PARTITION, a fetch past the end OFFSET_OUT_OF_RANGE.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.common.errors import (
    ApiException,
    Errors,
    InvalidTopicException,
    KafkaException,
    NotLeaderForPartitionException,
    OffsetOutOfRangeException,
    UnknownTopicOrPartitionException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic import TopicPartition, validate_topic_name
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.partition import Partition
from kafka_lite.zk.zk_utils import LeaderAndIsr

log = logging.getLogger(__name__)


@dataclass
class PartitionResponse:
    error: Errors
    base_offset: int = -1
    log_append_time: int = -1
    message: str | None = None


@dataclass
class FetchPartitionResult:
    error: Errors
    high_watermark: int = -1
    log_start_offset: int = -1
    records: FileRecords | MemoryRecords | None = None

    @property
    def size(self) -> int:
        return self.records.size_in_bytes() if self.records is not None else 0


@dataclass
class FetchPartitionRequest:
    offset: int
    max_bytes: int


class DelayedFetch(DelayedOperation):
    """A fetch waiting for ``min_bytes`` of new data (or ``max_wait_ms``), as Kafka's ``DelayedFetch``:
    it completes when enough bytes have arrived past the fetch offsets, or a partition's leader moved."""

    def __init__(
        self, replica_manager: ReplicaManager, fetch: dict, callback: Callable[[dict], None]
    ) -> None:
        super().__init__(fetch["max_wait_ms"])
        self.replica_manager = replica_manager
        self.fetch = fetch
        self.callback = callback

    def try_complete(self) -> bool:
        accumulated = 0
        for tp, request in self.fetch["partitions"].items():
            partition = self.replica_manager.get_partition(tp)
            if partition is None or not partition.is_leader():
                return self.force_complete()  # the leader moved: answer now, with the error
            end = partition.high_watermark()
            if end < request.offset:
                return self.force_complete()  # truncated under us: answer with OFFSET_OUT_OF_RANGE
            if end > request.offset:  # new data: how much of it this fetch would take (a slice, no copy)
                try:
                    info = partition.log.read(request.offset, request.max_bytes, max_offset=end)
                except ApiException:
                    return self.force_complete()
                accumulated += info.records.size_in_bytes()
            if accumulated >= self.fetch["min_bytes"]:
                return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.callback(self.replica_manager.read_from_local_log(self.fetch))


class ReplicaManager:
    def __init__(
        self,
        broker_id: int,
        log_manager: LogManager,
        broker_log_props: dict,
        topic_config_lookup: Callable[[str], dict],
        time: Time = SYSTEM,
        metadata_cache: MetadataCache | None = None,
    ) -> None:
        self.metadata_cache = metadata_cache
        self.broker_id = broker_id
        self.log_manager = log_manager
        self.broker_log_props = broker_log_props
        self.topic_config_lookup = topic_config_lookup
        self.time = time
        self.controller_epoch = -1
        self._partitions: dict[TopicPartition, Partition] = {}
        self._lock = threading.RLock()
        self.fetch_purgatory = DelayedOperationPurgatory("Fetch", time)

    # -- partitions ----------------------------------------------------------------------------------------

    def get_partition(self, tp: TopicPartition) -> Partition | None:
        return self._partitions.get(tp)

    def get_leader_partition(self, tp: TopicPartition) -> Partition:
        partition = self._partitions.get(tp)
        if partition is None or partition.log is None:
            # Kafka 1.0's rule (0.10 said UNKNOWN here): a partition the cluster has but this broker does
            # not host is "not the leader", the precise answer that sends the client to the right broker.
            state = self.metadata_cache.partition_state(*tp) if self.metadata_cache is not None else None
            if state is not None:
                raise NotLeaderForPartitionException(
                    f"Broker {self.broker_id} does not host {tp[0]}-{tp[1]}; its leader is broker {state.leader}"
                )
            raise UnknownTopicOrPartitionException(
                f"This server does not host this topic-partition: {tp[0]}-{tp[1]}"
            )
        if not partition.is_leader():
            raise NotLeaderForPartitionException(
                f"Leader not local for partition {tp[0]}-{tp[1]} on broker {self.broker_id}"
            )
        return partition

    def _get_or_create_partition(self, tp: TopicPartition) -> Partition:
        with self._lock:
            partition = self._partitions.get(tp)
            if partition is None:
                partition = Partition(tp[0], tp[1], self.broker_id)
                self._partitions[tp] = partition
            if partition.log is None:
                config = LogConfig.from_broker(self.broker_log_props, self.topic_config_lookup(tp[0]))
                partition.attach_log(self.log_manager.create_log(tp, config))
            return partition

    # --8<-- [start:become_leader_or_follower]
    def become_leader_or_follower(self, body: dict) -> tuple[Errors, dict[TopicPartition, Errors]]:
        """Apply a LeaderAndIsr request from the controller; return the request's and each partition's error."""
        with self._lock:
            if body["controller_epoch"] < self.controller_epoch:
                log.warning(
                    "Ignoring LeaderAndIsr from controller %d with epoch %d: the latest known epoch is %d",
                    body["controller_id"], body["controller_epoch"], self.controller_epoch,
                )  # fmt: skip
                return Errors.STALE_CONTROLLER_EPOCH, {}
            self.controller_epoch = body["controller_epoch"]
            errors: dict[TopicPartition, Errors] = {}
            for state in body["partition_states"]:
                tp = (state["topic"], state["partition"])
                try:
                    validate_topic_name(tp[0])
                    if tp[1] < 0:
                        raise UnknownTopicOrPartitionException(f"partition {tp[1]} cannot exist")
                    partition = self._get_or_create_partition(tp)
                except ApiException as e:
                    errors[tp] = Errors.for_exception(e)
                    continue
                except (KafkaException, OSError) as e:  # the log directory could not be made or loaded
                    log.warning("Cannot create the log of %s-%d: %s", tp[0], tp[1], e)
                    errors[tp] = Errors.UNKNOWN
                    continue
                if state["leader_epoch"] <= partition.leader_epoch and partition.leader_epoch >= 0:
                    errors[tp] = Errors.STALE_CONTROLLER_EPOCH  # an older (or repeated) decision
                    continue
                if self.broker_id not in state["replicas"]:
                    errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                if state["leader"] == self.broker_id:
                    partition.make_leader(state, body["controller_epoch"])
                else:
                    partition.make_follower(state, body["controller_epoch"])
                    self.fetch_purgatory.check_and_complete(tp)  # waiting fetches learn they lost the leader
                errors[tp] = Errors.NONE
            return Errors.NONE, errors

    # --8<-- [end:become_leader_or_follower]

    def stop_replicas(self, body: dict) -> tuple[Errors, dict[TopicPartition, Errors]]:
        with self._lock:
            if body["controller_epoch"] < self.controller_epoch:
                return Errors.STALE_CONTROLLER_EPOCH, {}
            self.controller_epoch = body["controller_epoch"]
            errors = {}
            for p in body["partitions"]:
                tp = (p["topic"], p["partition"])
                partition = (
                    self._partitions.pop(tp, None) if body["delete_partitions"] else self._partitions.get(tp)
                )
                if partition is not None and not body["delete_partitions"]:
                    partition.leader_replica_id = LeaderAndIsr.NO_LEADER
                if body["delete_partitions"]:
                    self.log_manager.delete_log(tp)
                self.fetch_purgatory.check_and_complete(tp)
                errors[tp] = Errors.NONE
            return Errors.NONE, errors

    # -- produce --------------------------------------------------------------------------------------------

    # --8<-- [start:append_records]
    def append_records(
        self, entries: dict[TopicPartition, MemoryRecords], internal_topics_allowed: bool = False
    ) -> dict[TopicPartition, PartitionResponse]:
        """Append to each partition this broker leads; an error in one partition leaves the others."""
        results = {}
        for tp, records in entries.items():
            try:
                if tp[0].startswith("__") and not internal_topics_allowed:
                    raise InvalidTopicException(f"Cannot append to internal topic {tp[0]}")
                partition = self.get_leader_partition(tp)
                info = partition.append_records_to_leader(records)
                results[tp] = PartitionResponse(Errors.NONE, info.first_offset, info.log_append_time)
                self.fetch_purgatory.check_and_complete(tp)
            except ApiException as e:
                results[tp] = PartitionResponse(Errors.for_exception(e), message=str(e))
            except KafkaException as e:
                log.warning("Error appending to %s-%d: %s", tp[0], tp[1], e)
                results[tp] = PartitionResponse(Errors.for_exception(e), message=str(e))
        return results

    # --8<-- [end:append_records]

    # -- fetch -------------------------------------------------------------------------------------------------

    def fetch_messages(self, fetch: dict, callback: Callable[[dict], None]) -> None:
        """Read now if there is ``min_bytes`` of data (or no wait allowed); else park a ``DelayedFetch``.

        ``fetch``: ``max_wait_ms``, ``min_bytes``, ``max_bytes``, ``partitions`` {tp: FetchPartitionRequest}.
        ``callback`` gets {tp: FetchPartitionResult}, on this thread or on the one completing it later.
        """
        results = self.read_from_local_log(fetch)
        total = sum(r.size for r in results.values())
        errors = any(r.error is not Errors.NONE for r in results.values())
        if fetch["max_wait_ms"] <= 0 or not fetch["partitions"] or total >= fetch["min_bytes"] or errors:
            callback(results)
            return
        op = DelayedFetch(self, fetch, callback)
        self.fetch_purgatory.try_complete_else_watch(op, list(fetch["partitions"]))

    # --8<-- [start:read_from_local_log]
    def read_from_local_log(self, fetch: dict) -> dict[TopicPartition, FetchPartitionResult]:
        """Read each partition up to its high watermark, within the partition's and the request's
        byte limits; the first partition returns at least one whole batch even if it is larger
        (KIP-74), so a big batch can never block a consumer."""
        results = {}
        remaining = fetch["max_bytes"]
        first = True
        for tp, request in fetch["partitions"].items():
            try:
                partition = self.get_leader_partition(tp)
                hw = partition.high_watermark()
                limit = max(min(request.max_bytes, remaining), 0)  # a negative max_bytes reads nothing
                info = partition.log.read(request.offset, limit, max_offset=hw, min_one_message=first)
                records = info.records
                results[tp] = FetchPartitionResult(Errors.NONE, hw, partition.log.log_start_offset, records)
                size = records.size_in_bytes()
                remaining = max(remaining - size, 0)
                if size:
                    first = False
            except OffsetOutOfRangeException as e:
                results[tp] = FetchPartitionResult(Errors.for_exception(e), *self._offsets_of(tp))
            except ApiException as e:
                results[tp] = FetchPartitionResult(Errors.for_exception(e))
        return results

    # --8<-- [end:read_from_local_log]

    def _offsets_of(self, tp: TopicPartition) -> tuple[int, int]:
        partition = self._partitions.get(tp)
        if partition is None or partition.log is None:
            return -1, -1
        return partition.high_watermark(), partition.log.log_start_offset

    def shutdown(self) -> None:
        self.fetch_purgatory.shutdown()
        with self._lock:
            for partition in self._partitions.values():
                partition.close()

    # -- OffsetsForLeaderEpoch (Kafka 0.11, KIP-101) ----------------------------------------------------------

    def last_offset_for_leader_epoch(
        self, requested: dict[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[Errors, int]]:
        """For each partition, where the requested leader epoch ends in this leader's log.

        Kafka's ``ReplicaManager.lastOffsetForLeaderEpoch`` with ``Partition.lastOffsetForLeaderEpoch``:
        a follower asks its new leader, after a leader change, for the end of its own latest epoch, and
        truncates its log there. Only the leader answers (NOT_LEADER_FOR_PARTITION from any other
        replica, UNKNOWN_TOPIC_OR_PARTITION from a broker without the partition); the answer is the
        start offset of the next epoch the leader knows, the log end offset for the leader's latest
        epoch, or -1 (``UNDEFINED_EPOCH_OFFSET``) for an epoch it does not know.
        """
        from kafka_lite.server.epoch.leader_epoch_file_cache import UNDEFINED_EPOCH_OFFSET

        result: dict[TopicPartition, tuple[Errors, int]] = {}
        for tp, leader_epoch in requested.items():
            partition = self.get_partition(tp)
            if partition is None or partition.log is None:
                result[tp] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, UNDEFINED_EPOCH_OFFSET)
            elif not partition.is_leader():
                result[tp] = (Errors.NOT_LEADER_FOR_PARTITION, UNDEFINED_EPOCH_OFFSET)
            else:
                result[tp] = (Errors.NONE, partition.log.leader_epoch_cache.end_offset_for(leader_epoch))
        return result
