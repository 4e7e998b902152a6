"""One partition as this broker sees it: its log, who leads it, and its idempotent producers.

Mirrors: kafka.cluster.Partition (core/src/main/scala/kafka/cluster/Partition.scala, Kafka 0.10.1)
Book:    chapter 6, 6.2 (partitions and replicas), 7.2.2 (LeaderAndIsr makes a broker leader or follower)
Differs: no replica fetchers: a follower keeps an empty log, and the leader's
         high watermark is its log end offset, as it is in Kafka when the ISR is the leader alone.
         So acks=-1 waits for the leader only, which is exact for replication factor 1.

``make_leader`` and ``make_follower`` apply the controller's LeaderAndIsr for this partition;
``append_records_to_leader`` is the produce path: check leadership, check the idempotent producers'
sequences, append to the log, record the producers' new state.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from kafka_lite.common.errors import NotLeaderForPartitionException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.topic import TopicPartition
from kafka_lite.log.log import Log, LogAppendInfo
from kafka_lite.log.producer_state_manager import ProducerStateManager, scan_producer_batches
from kafka_lite.zk.zk_utils import LeaderAndIsr


class Partition:
    def __init__(self, topic: str, partition_id: int, local_broker_id: int) -> None:
        self.topic = topic
        self.partition_id = partition_id
        self.local_broker_id = local_broker_id
        self.leader_replica_id = LeaderAndIsr.NO_LEADER
        self.leader_epoch = -1
        self.controller_epoch = -1
        self.zk_version = -1
        self.isr: list[int] = []
        self.assigned_replicas: list[int] = []
        self.log: Log | None = None
        self.producer_state: ProducerStateManager | None = None
        # Kafka's leaderIsrUpdateLock: appends hold it while leadership cannot change under them.
        self._lock = threading.RLock()

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition_id)

    def is_leader(self) -> bool:
        return self.leader_replica_id == self.local_broker_id

    def high_watermark(self) -> int:
        return self.log.log_end_offset if self.log is not None else 0

    def attach_log(self, log: Log) -> None:
        self.log = log
        self.producer_state = ProducerStateManager(log.dir)
        self.producer_state.load(log)

    # --8<-- [start:make_leader]
    def make_leader(self, state: dict, controller_epoch: int) -> bool:
        """Apply LeaderAndIsr naming this broker leader; True if leadership changed hands to us."""
        with self._lock:
            was_leader = self.is_leader()
            self.controller_epoch = controller_epoch
            self.assigned_replicas = list(state["replicas"])
            self.isr = list(state["isr"])
            self.leader_epoch = state["leader_epoch"]
            self.zk_version = state["zk_version"]
            self.leader_replica_id = self.local_broker_id
            return not was_leader

    def make_follower(self, state: dict, controller_epoch: int) -> bool:
        """Apply LeaderAndIsr naming another broker leader; True if the leader changed."""
        with self._lock:
            new_leader = state["leader"]
            self.controller_epoch = controller_epoch
            self.assigned_replicas = list(state["replicas"])
            self.isr = []  # only the leader tracks the ISR
            self.leader_epoch = state["leader_epoch"]
            self.zk_version = state["zk_version"]
            changed = self.leader_replica_id != new_leader
            self.leader_replica_id = new_leader
            return changed

    # --8<-- [end:make_leader]

    # --8<-- [start:append]
    def append_records_to_leader(self, records: MemoryRecords) -> LogAppendInfo:
        with self._lock:
            if not self.is_leader() or self.log is None:
                raise NotLeaderForPartitionException(
                    f"Leader not local for partition {self.topic}-{self.partition_id} on broker {self.local_broker_id}"
                )
            buf = records.buffer()
            batches = scan_producer_batches(buf)
            if batches:
                duplicate = self.producer_state.check(list(batches.values()))
                if duplicate is not None:  # a retry of a batch already written: answer, write nothing
                    return LogAppendInfo(
                        duplicate.first_offset, duplicate.last_offset, duplicate.timestamp, duplicate.last_offset,
                        -1, None, 0, 0,
                    )  # fmt: skip
            segment_before = self.log.active_segment.base_offset
            info = self.log.append(records)
            if self.log.active_segment.base_offset != segment_before and self.producer_state.producers:
                # The log rolled: snapshot the producer state as of the new segment's start, as Kafka
                # 0.11 does on every roll, so a restart replays at most one segment's batch headers.
                self.producer_state.take_snapshot(self.log.active_segment.base_offset)
            if batches:
                offset = info.first_offset
                for position, last_delta, _ in info.batch_spans:
                    batch = batches.get(position)
                    if batch is not None:
                        self.producer_state.update(
                            replace(batch, first_offset=offset, last_offset=offset + last_delta)
                        )
                    offset += last_delta + 1
            return info

    # --8<-- [end:append]

    def close(self) -> None:
        """Snapshot the producer state (a clean shutdown); the log manager closes the log."""
        with self._lock:
            if self.producer_state is not None and self.log is not None and self.producer_state.producers:
                self.producer_state.take_snapshot(self.log.log_end_offset)

    def __repr__(self) -> str:
        return (
            f"Partition({self.topic}-{self.partition_id}, leader={self.leader_replica_id}, "
            f"epoch={self.leader_epoch}, isr={self.isr}, replicas={self.assigned_replicas})"
        )
